import { existsSync } from 'node:fs';
import { AppError } from '../../lib/errors.ts';
import { LinkEvents } from './link-events.ts';
import type { Link } from './link.ts';

// A Link over Bluetooth LE through the Nordic UART service, spoken to BlueZ over the D-Bus
// system bus (docs/protocols/rnode.md 1.1 "BLE"; RT: BLEConnection). The host writes without response to
// the RX characteristic and takes notifications from the TX characteristic; the board must
// already be bonded to the host (pairing needs a person at the board).
//
// What is here: choosing the bonded device from BlueZ's object tree, finding the UART
// characteristics, chunking writes to the write-without-response size, mapping notifications
// to data and a disconnect to onClose. What is not: a D-Bus client. None is installed, so
// openBleLink without an injected `bus` fails with ERR_BLE_UNAVAILABLE. None of this has run
// against BlueZ or a board (docs/ports.md says so).

export const NUS_SERVICE_UUID = '6e400001-b5a3-f393-e0a9-e50e24dcca9e';
/** Host -> board: write without response. */
export const NUS_RX_CHAR_UUID = '6e400002-b5a3-f393-e0a9-e50e24dcca9e';
/** Board -> host: notify. */
export const NUS_TX_CHAR_UUID = '6e400003-b5a3-f393-e0a9-e50e24dcca9e';
export const SYSTEM_BUS_SOCKET = '/run/dbus/system_bus_socket';
// ATT_MTU minus the 3-byte write command header (Core spec Vol 3 Part F 3.4.5.3); 23 is the
// default ATT_MTU every LE link starts with.
const ATT_HEADER_BYTES = 3;
const DEFAULT_ATT_MTU = 23;

/** BlueZ's GetManagedObjects answer: object path -> interface name -> properties. */
export type ManagedObjects = Record<string, Record<string, Record<string, unknown>>>;

/** The few BlueZ calls the link needs; a D-Bus client implements it. */
export interface BluezGatt {
  getManagedObjects(): Promise<ManagedObjects>;
  /** org.bluez.Device1.Connect, resolving once services are resolved. */
  connect(devicePath: string): Promise<void>;
  disconnect(devicePath: string): Promise<void>;
  /** org.bluez.GattCharacteristic1.StartNotify plus the PropertiesChanged "Value" signal. */
  startNotify(charPath: string, onValue: (value: Uint8Array) => void): Promise<void>;
  /** org.bluez.GattCharacteristic1.WriteValue with {type: "command"} (no response). */
  writeCommand(charPath: string, value: Uint8Array): Promise<void>;
  /** Device1 "Connected" turned false, or the bus went away. */
  onDisconnect(devicePath: string, listener: (reason: string) => void): void;
}

export interface BleTarget {
  mac: string | null;
  name: string | null;
}

export interface NusEndpoints {
  devicePath: string;
  rxPath: string;
  txPath: string;
  /** Largest write without response in bytes. */
  writeChunk: number;
}

export interface BleLinkOptions {
  bus?: BluezGatt;
  socketPath?: string;
  report?: (error: unknown) => void;
}

export async function openBleLink(target: BleTarget, options: BleLinkOptions = {}): Promise<Link> {
  const description = `ble://${target.mac ?? target.name}`;
  const bus = options.bus;
  if (!bus) {
    const socket = options.socketPath ?? SYSTEM_BUS_SOCKET;
    if (!existsSync(socket)) {
      throw new AppError('ERR_BLE_UNAVAILABLE', 503, `${description}: no D-Bus system bus at ${socket}; BLE needs BlueZ on the host and /run/dbus mounted into the container`);
    }
    throw new AppError('ERR_BLE_UNAVAILABLE', 503, `${description}: this build has no D-Bus client, so BLE links cannot be opened; use a USB serial or tcp:// port value`);
  }
  const devicePath = findBondedDevice(await bus.getManagedObjects(), target);
  await bus.connect(devicePath);
  // Characteristics appear in the object tree only once services are resolved after Connect.
  const events = new LinkEvents(options.report);
  let nus: NusEndpoints;
  try {
    nus = findNus(await bus.getManagedObjects(), target);
    bus.onDisconnect(nus.devicePath, (reason) => events.emitClose(`${description} disconnected: ${reason}`));
    await bus.startNotify(nus.txPath, (value) => events.emitData(value));
  } catch (error) {
    await bus.disconnect(devicePath).catch(() => {});
    throw error;
  }
  return {
    kind: 'ble',
    description,
    write: async (data) => {
      if (events.closed) throw events.closedError(description);
      for (const chunk of chunkForWrite(data, nus.writeChunk)) {
        try {
          await bus.writeCommand(nus.rxPath, chunk);
        } catch (error) {
          throw new AppError('ERR_LINK_WRITE', 503, `writing to ${description} failed: ${(error as Error).message}`);
        }
      }
    },
    onData: (listener) => events.onData(listener),
    onClose: (listener) => events.onClose(listener),
    close: async () => {
      if (events.closed) return;
      try {
        await bus.disconnect(nus.devicePath);
      } finally {
        events.emitClose('closed by the bridge');
      }
    },
  };
}

/** The BlueZ object path of the bonded device the target names. Pure. */
export function findBondedDevice(objects: ManagedObjects, target: BleTarget): string {
  const description = `ble://${target.mac ?? target.name}`;
  const devices = Object.entries(objects)
    .map(([path, ifaces]) => ({ path, props: ifaces['org.bluez.Device1'] }))
    .filter((d) => d.props !== undefined);
  const matches = devices.filter((d) =>
    target.mac !== null
      ? String(d.props.Address ?? '').toUpperCase() === target.mac.toUpperCase()
      : d.props.Name === target.name || d.props.Alias === target.name,
  );
  if (matches.length === 0) {
    throw new AppError('ERR_BLE_NOT_FOUND', 503, `${description}: BlueZ knows no such device; pair and bond it first (bluetoothctl pair, trust)`);
  }
  if (matches.length > 1) {
    const macs = matches.map((m) => String(m.props.Address)).join(', ');
    throw new AppError('ERR_BLE_NOT_FOUND', 503, `${description}: ${matches.length} devices carry that name (${macs}); use the MAC address`);
  }
  const device = matches[0];
  // RNode firmware requires a bonded (encrypted) link; BlueZ reports Bonded from 5.67 on and
  // Paired before that, so either counts.
  if (device.props.Bonded !== true && device.props.Paired !== true) {
    throw new AppError('ERR_BLE_NOT_BONDED', 503, `${description} (${String(device.props.Address)}) is known but not bonded; bond it first (bluetoothctl pair)`);
  }
  return device.path;
}

/**
 * The device and its UART characteristics. BlueZ lists characteristics only once services
 * are resolved, so this runs after Connect. Pure.
 */
export function findNus(objects: ManagedObjects, target: BleTarget): NusEndpoints {
  const description = `ble://${target.mac ?? target.name}`;
  const device = { path: findBondedDevice(objects, target) };
  const under = (path: string) => path.startsWith(device.path + '/');
  const chars = Object.entries(objects)
    .filter(([path, ifaces]) => under(path) && ifaces['org.bluez.GattCharacteristic1'])
    .map(([path, ifaces]) => ({ path, props: ifaces['org.bluez.GattCharacteristic1'] }));
  const byUuid = (uuid: string) => chars.find((c) => String(c.props.UUID ?? '').toLowerCase() === uuid);
  const rx = byUuid(NUS_RX_CHAR_UUID);
  const tx = byUuid(NUS_TX_CHAR_UUID);
  if (!rx || !tx) {
    throw new AppError('ERR_BLE_NO_UART', 503, `${description}: the device offers no Nordic UART service (${NUS_SERVICE_UUID}); is it an RNode with Bluetooth enabled?`);
  }
  const mtu = typeof rx.props.MTU === 'number' && rx.props.MTU > ATT_HEADER_BYTES ? rx.props.MTU : DEFAULT_ATT_MTU;
  return { devicePath: device.path, rxPath: rx.path, txPath: tx.path, writeChunk: mtu - ATT_HEADER_BYTES };
}

/** Splits a write into pieces of at most `size` bytes, in order. Pure. */
export function chunkForWrite(data: Uint8Array, size: number): Uint8Array[] {
  if (size < 1) throw new RangeError(`chunk size must be at least 1, got ${size}`);
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < data.length; at += size) chunks.push(data.subarray(at, Math.min(at + size, data.length)));
  return chunks;
}
