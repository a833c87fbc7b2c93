import { DeviceError } from '../../device-error.ts';
import { ATT_HEADER_BYTES, DEFAULT_ATT_MTU, type BleService } from './ble-framing.ts';
import { ADAPTER_IFACE, DEVICE_IFACE, GATT_CHAR_IFACE, GATT_SERVICE_IFACE, type ManagedObjects } from './bluez-client.ts';

// Choosing the board and its characteristics among BlueZ's objects (GetManagedObjects). Pure:
// tests feed it object trees. The GATT facts are cited in docs/ports.md "BLE decisions".

export interface BleTarget {
  mac: string | null;
  name: string | null;
}

export interface FoundDevice {
  path: string;
  address: string;
  adapterPath: string;
}

/** The service found on the board, its characteristics' object paths by role, and the MTU. */
export interface GattProfile {
  service: BleService;
  paths: Record<string, string>;
  mtu: number;
}

export const describeTarget = (target: BleTarget): string => `ble://${target.mac ?? target.name}`;

const bondHelp = (address: string) =>
  `bond it once on the host: bluetoothctl, then "pair ${address}" and "trust ${address}" (pairing needs the PIN the board shows)`;

/** The board the target names, checked: an adapter exists and is on, the board is bonded. */
export function findDevice(objects: ManagedObjects, target: BleTarget): FoundDevice {
  const description = describeTarget(target);
  const adapters = Object.entries(objects).filter(([, ifaces]) => ifaces[ADAPTER_IFACE]);
  if (adapters.length === 0) {
    throw new DeviceError('ERR_BLE_NO_ADAPTER', `${description}: BlueZ has no Bluetooth adapter (bluetoothctl list shows none; is Bluetooth enabled and not blocked by rfkill?)`, { retryable: true });
  }
  const devices = Object.entries(objects)
    .map(([path, ifaces]) => ({ path, props: ifaces[DEVICE_IFACE] }))
    .filter((d) => d.props !== undefined);
  const matches = devices.filter((d) =>
    target.mac !== null
      ? String(d.props.Address ?? '').toUpperCase() === target.mac.toUpperCase()
      : d.props.Name === target.name || d.props.Alias === target.name,
  );
  if (matches.length === 0) {
    throw new DeviceError('ERR_BLE_NOT_FOUND', `${description}: BlueZ knows no such device; ${bondHelp(target.mac ?? '<MAC>')} (bluetoothctl scan on finds its MAC)`, { retryable: true });
  }
  if (matches.length > 1) {
    const macs = matches.map((m) => String(m.props.Address)).join(', ');
    throw new DeviceError('ERR_BLE_NOT_FOUND', `${description}: ${matches.length} devices carry that name (${macs}); use the MAC address`, { retryable: true });
  }
  const device = matches[0];
  const address = String(device.props.Address);
  // Device1.Bonded (BlueZ 5.67 on) says the keys are stored; older BlueZ has only Paired.
  const bonded = 'Bonded' in device.props ? device.props.Bonded === true : device.props.Paired === true;
  if (!bonded) {
    const state = device.props.Paired === true ? 'paired but not bonded (the keys are not stored)' : 'not paired';
    throw new DeviceError('ERR_BLE_NOT_BONDED', `${description} (${address}) is ${state}; ${bondHelp(address)}`, { retryable: false });
  }
  const adapterPath = typeof device.props.Adapter === 'string' ? device.props.Adapter : device.path.slice(0, device.path.lastIndexOf('/'));
  const adapter = objects[adapterPath]?.[ADAPTER_IFACE];
  if (!adapter) throw new DeviceError('ERR_BLE_NO_ADAPTER', `${description}: its adapter ${adapterPath} is gone`, { retryable: true });
  if (adapter.Powered !== true) {
    throw new DeviceError('ERR_BLE_ADAPTER_OFF', `${description}: Bluetooth adapter ${adapterPath.split('/').pop()} is powered off (bluetoothctl power on)`, { retryable: true });
  }
  return { path: device.path, address, adapterPath };
}

/**
 * The first of `services` the board offers with every characteristic it needs. BlueZ lists
 * characteristics once services are resolved, so this runs after connect.
 */
export function findProfile(objects: ManagedObjects, devicePath: string, description: string, services: readonly BleService[]): GattProfile {
  const serviceUuids = new Map<string, string>(); // service path -> UUID
  for (const [path, ifaces] of Object.entries(objects)) {
    const service = ifaces[GATT_SERVICE_IFACE];
    if (service && path.startsWith(devicePath + '/')) serviceUuids.set(path, String(service.UUID ?? '').toLowerCase());
  }
  const chars = Object.entries(objects)
    .filter(([path, ifaces]) => path.startsWith(devicePath + '/') && ifaces[GATT_CHAR_IFACE])
    .map(([path, ifaces]) => ({ path, props: ifaces[GATT_CHAR_IFACE], service: serviceUuids.get(path.slice(0, path.lastIndexOf('/'))) }));
  const mtuOf = (c: { props: Record<string, unknown> }) => (typeof c.props.MTU === 'number' && c.props.MTU > ATT_HEADER_BYTES ? c.props.MTU : DEFAULT_ATT_MTU);

  for (const service of services) {
    const found = Object.entries(service.characteristics).map(([role, uuid]) => ({
      role,
      char: chars.find((c) => c.service === service.uuid && String(c.props.UUID ?? '').toLowerCase() === uuid),
    }));
    if (found.some((f) => !f.char)) continue;
    const paths = Object.fromEntries(found.map((f) => [f.role, f.char!.path]));
    return { service, paths, mtu: mtuOf(found.find((f) => f.role === service.mtuRole)!.char!) };
  }
  const offers = services.length === 1 ? `does not offer ${services[0].title}` : `offers neither ${services.map((s) => s.title).join(' nor ')}`;
  throw new DeviceError('ERR_BLE_NO_SERVICE', `${description}: the device ${offers}; is Bluetooth enabled in its firmware?`, { retryable: false });
}
