import { DeviceError } from '../../device-error.ts';
import { ADAPTER_IFACE, DEVICE_IFACE, GATT_CHAR_IFACE, GATT_SERVICE_IFACE, type ManagedObjects } from './bluez-client.ts';

// Choosing the board and its characteristics among BlueZ's objects (GetManagedObjects). Pure:
// tests feed it object trees. The GATT facts are cited in docs/ports.md "BLE decisions".

/** Nordic UART service: the RNode's BLE serial port (RNode_Firmware BLESerial). */
export const NUS_SERVICE_UUID = '6e400001-b5a3-f393-e0a9-e50e24dcca9e';
/** Host -> board: write (without response). */
export const NUS_RX_CHAR_UUID = '6e400002-b5a3-f393-e0a9-e50e24dcca9e';
/** Board -> host: notify. */
export const NUS_TX_CHAR_UUID = '6e400003-b5a3-f393-e0a9-e50e24dcca9e';

/** Meshtastic's mesh service (firmware src/BluetoothCommon.h MESH_SERVICE_UUID). */
export const MESHTASTIC_SERVICE_UUID = '6ba1b218-15a8-461f-9fa8-5dcae273eafd';
/** One ToRadio protobuf per write, with response (the characteristic has only "write"). */
export const MESHTASTIC_TORADIO_UUID = 'f75c76d2-129e-4dad-a1dd-7866124401e7';
/** One FromRadio protobuf per read; an empty read means nothing more. */
export const MESHTASTIC_FROMRADIO_UUID = '2c55e69e-4993-11ed-b878-0242ac120002';
/** Notifies a little-endian uint32 counter whenever FromRadio has something new. */
export const MESHTASTIC_FROMNUM_UUID = 'ed9da18c-a800-4f66-a670-aa7547e34453';

// Core spec Vol 3 Part F 3.4.5.3: a Write Command carries ATT_MTU - 3 bytes; every LE link
// starts at ATT_MTU 23.
export const ATT_HEADER_BYTES = 3;
export const DEFAULT_ATT_MTU = 23;

export interface BleTarget {
  mac: string | null;
  name: string | null;
}

export interface FoundDevice {
  path: string;
  address: string;
  adapterPath: string;
}

export type GattProfile =
  | { kind: 'nus'; rxPath: string; txPath: string; mtu: number }
  | { kind: 'meshtastic'; toRadioPath: string; fromRadioPath: string; fromNumPath: string; mtu: number };

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
 * The board's UART or Meshtastic characteristics. BlueZ lists characteristics once services
 * are resolved, so this runs after connect. The Meshtastic service wins when `prefer` says so
 * and both are present (no known board has both).
 */
export function findProfile(objects: ManagedObjects, devicePath: string, description: string, prefer: 'nus' | 'meshtastic' = 'nus'): GattProfile {
  const services = new Map<string, string>(); // service path -> UUID
  for (const [path, ifaces] of Object.entries(objects)) {
    const service = ifaces[GATT_SERVICE_IFACE];
    if (service && path.startsWith(devicePath + '/')) services.set(path, String(service.UUID ?? '').toLowerCase());
  }
  const chars = Object.entries(objects)
    .filter(([path, ifaces]) => path.startsWith(devicePath + '/') && ifaces[GATT_CHAR_IFACE])
    .map(([path, ifaces]) => ({ path, props: ifaces[GATT_CHAR_IFACE], service: services.get(path.slice(0, path.lastIndexOf('/'))) }));
  const char = (service: string, uuid: string) => chars.find((c) => c.service === service && String(c.props.UUID ?? '').toLowerCase() === uuid);
  const mtuOf = (c: { props: Record<string, unknown> }) => (typeof c.props.MTU === 'number' && c.props.MTU > ATT_HEADER_BYTES ? c.props.MTU : DEFAULT_ATT_MTU);

  const rx = char(NUS_SERVICE_UUID, NUS_RX_CHAR_UUID);
  const tx = char(NUS_SERVICE_UUID, NUS_TX_CHAR_UUID);
  const toRadio = char(MESHTASTIC_SERVICE_UUID, MESHTASTIC_TORADIO_UUID);
  const fromRadio = char(MESHTASTIC_SERVICE_UUID, MESHTASTIC_FROMRADIO_UUID);
  const fromNum = char(MESHTASTIC_SERVICE_UUID, MESHTASTIC_FROMNUM_UUID);
  const nus: GattProfile | null = rx && tx ? { kind: 'nus', rxPath: rx.path, txPath: tx.path, mtu: mtuOf(rx) } : null;
  const mesh: GattProfile | null =
    toRadio && fromRadio && fromNum ? { kind: 'meshtastic', toRadioPath: toRadio.path, fromRadioPath: fromRadio.path, fromNumPath: fromNum.path, mtu: mtuOf(toRadio) } : null;
  const found = prefer === 'meshtastic' ? (mesh ?? nus) : (nus ?? mesh);
  if (!found) {
    throw new DeviceError('ERR_BLE_NO_SERVICE', `${description}: the device offers neither the Nordic UART service (${NUS_SERVICE_UUID}, RNode) nor the Meshtastic service (${MESHTASTIC_SERVICE_UUID}); is Bluetooth enabled in its firmware?`, { retryable: false });
  }
  return found;
}
