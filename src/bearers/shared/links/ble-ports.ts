import { DeviceError } from '../../device-error.ts';
import type { BleService } from './ble-framing.ts';
import { ADAPTER_IFACE, DbusBluez, DEVICE_IFACE, type ManagedObjects } from './bluez-client.ts';
import type { SerialPortEntry } from './list-ports.ts';

// Bonded Bluetooth LE boards BlueZ knows, for `fieldbridge ports` and GET
// /api/routing/rnode/ports. Nothing is connected or probed: what a board
// offers comes from Device1.UUIDs, which BlueZ keeps from advertising and from the services it
// resolved when the board was paired. An entry has the shape of a serial port's, with the
// BlueZ object path as its path and a ble://<MAC> port value.

export interface BleListing {
  ports: SerialPortEntry[];
  /** Why no BLE board could be listed (no D-Bus, no BlueZ), else null. */
  note: string | null;
}

/** `services`: the GATT services the bridge's kinds speak (bearers/drivers.ts BLE_SERVICES), in
 *  the order a board offering several is labelled by. */
export async function listBlePorts(
  services: readonly Pick<BleService, 'uuid' | 'listedAs'>[],
  open: () => Promise<{ getManagedObjects(): Promise<ManagedObjects>; close(): void }> = () => DbusBluez.open(),
): Promise<BleListing> {
  let bus;
  try {
    bus = await open();
  } catch (error) {
    return { ports: [], note: error instanceof DeviceError ? error.message : String(error) };
  }
  try {
    return { ports: blePortsIn(await bus.getManagedObjects(), services), note: null };
  } catch (error) {
    return { ports: [], note: `BlueZ did not list its devices: ${(error as Error).message}` };
  } finally {
    bus.close();
  }
}

/** The bonded devices offering one of `services`, by MAC. Pure. */
export function blePortsIn(objects: ManagedObjects, services: readonly Pick<BleService, 'uuid' | 'listedAs'>[]): SerialPortEntry[] {
  const out: SerialPortEntry[] = [];
  for (const [path, ifaces] of Object.entries(objects)) {
    const d = ifaces[DEVICE_IFACE];
    if (!d) continue;
    const bonded = 'Bonded' in d ? d.Bonded === true : d.Paired === true;
    const uuids = Array.isArray(d.UUIDs) ? d.UUIDs.map((u) => String(u).toLowerCase()) : [];
    const what = services.find((s) => uuids.includes(s.uuid))?.listedAs ?? null;
    if (!bonded || !what) continue;
    const address = String(d.Address ?? '');
    const name = typeof d.Alias === 'string' ? d.Alias : typeof d.Name === 'string' ? d.Name : null;
    const adapterPath = typeof d.Adapter === 'string' ? d.Adapter : path.slice(0, path.lastIndexOf('/'));
    const adapter = objects[adapterPath]?.[ADAPTER_IFACE] ? adapterPath.split('/').pop() : 'a missing adapter';
    out.push({
      path,
      by_id: null,
      serial_number: null,
      vid_pid: null,
      manufacturer: null,
      product: name,
      port: `ble://${address}`,
      label: `Bluetooth LE ${what}${name ? ` "${name}"` : ''}, bonded${d.Connected === true ? ', connected' : ''}, ${address} on ${adapter}`,
    });
  }
  return out.sort((a, b) => a.port.localeCompare(b.port));
}
