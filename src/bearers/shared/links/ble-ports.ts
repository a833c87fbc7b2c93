import { DeviceError } from '../../device-error.ts';
import { MESHTASTIC_SERVICE_UUID, NUS_SERVICE_UUID } from './ble-find.ts';
import { ADAPTER_IFACE, DbusBluez, DEVICE_IFACE, type ManagedObjects } from './bluez-client.ts';
import type { SerialPortEntry } from './list-ports.ts';

// Bonded Bluetooth LE boards BlueZ knows, for `fieldbridge ports` and GET
// /api/routing/rnode/ports (issue 16 item 2). Nothing is connected or probed: what a board
// offers comes from Device1.UUIDs, which BlueZ keeps from advertising and from the services it
// resolved when the board was paired. An entry has the shape of a serial port's, with the
// BlueZ object path as its path and a ble://<MAC> port value.

export interface BleListing {
  ports: SerialPortEntry[];
  /** Why no BLE board could be listed (no D-Bus, no BlueZ), else null. */
  note: string | null;
}

export async function listBlePorts(open: () => Promise<{ getManagedObjects(): Promise<ManagedObjects>; close(): void }> = () => DbusBluez.open()): Promise<BleListing> {
  let bus;
  try {
    bus = await open();
  } catch (error) {
    return { ports: [], note: error instanceof DeviceError ? error.message : String(error) };
  }
  try {
    return { ports: blePortsIn(await bus.getManagedObjects()), note: null };
  } catch (error) {
    return { ports: [], note: `BlueZ did not list its devices: ${(error as Error).message}` };
  } finally {
    bus.close();
  }
}

/** The bonded devices offering the Nordic UART or the Meshtastic service, by MAC. Pure. */
export function blePortsIn(objects: ManagedObjects): SerialPortEntry[] {
  const out: SerialPortEntry[] = [];
  for (const [path, ifaces] of Object.entries(objects)) {
    const d = ifaces[DEVICE_IFACE];
    if (!d) continue;
    const bonded = 'Bonded' in d ? d.Bonded === true : d.Paired === true;
    const uuids = Array.isArray(d.UUIDs) ? d.UUIDs.map((u) => String(u).toLowerCase()) : [];
    const what = uuids.includes(MESHTASTIC_SERVICE_UUID) ? 'Meshtastic' : uuids.includes(NUS_SERVICE_UUID) ? 'RNode (Nordic UART)' : null;
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
