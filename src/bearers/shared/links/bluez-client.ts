import { DeviceError } from '../../device-error.ts';
import { DbusConnection, DbusError, propertyMap, systemBusAddress, type DbusSignal } from './dbus-connection.ts';

// The few BlueZ calls a BLE link makes, over the system bus (BlueZ doc/org.bluez.Device.rst,
// GattCharacteristic.rst; docs/ports.md "BLE decisions"). One D-Bus connection per open link:
// closing the link closes it, and BlueZ then ends this client's notify sessions by itself.

export const BLUEZ = 'org.bluez';
export const ADAPTER_IFACE = 'org.bluez.Adapter1';
export const DEVICE_IFACE = 'org.bluez.Device1';
export const GATT_SERVICE_IFACE = 'org.bluez.GattService1';
export const GATT_CHAR_IFACE = 'org.bluez.GattCharacteristic1';
const PROPERTIES_IFACE = 'org.freedesktop.DBus.Properties';
const OBJECT_MANAGER_IFACE = 'org.freedesktop.DBus.ObjectManager';
// An LE connection attempt to a board out of range ends with BlueZ's own error after the
// controller's page/connection timeout; past this we give up ourselves.
export const CONNECT_TIMEOUT_MS = 30_000;
// Service discovery of a few services over a slow link takes seconds, not tens of them.
export const RESOLVE_TIMEOUT_MS = 30_000;

/** GetManagedObjects: object path -> interface -> property -> plain value. */
export type ManagedObjects = Record<string, Record<string, Record<string, unknown>>>;

export type WriteType = 'command' | 'request';

/** What a BLE link needs from BlueZ; DbusBluez speaks it over D-Bus, tests may fake it. */
export interface BluezGatt {
  getManagedObjects(): Promise<ManagedObjects>;
  /** Device1.Connect, then waits for ServicesResolved (Connect answers before discovery ends). */
  connect(devicePath: string): Promise<void>;
  disconnect(devicePath: string): Promise<void>;
  /** PropertiesChanged of one object's interface; returns the unsubscribe. */
  watch(path: string, iface: string, listener: (changed: Record<string, unknown>) => void): () => void;
  startNotify(charPath: string): Promise<void>;
  readValue(charPath: string): Promise<Uint8Array>;
  writeValue(charPath: string, value: Uint8Array, type: WriteType): Promise<void>;
  /** Once: the device disconnected or was removed, its adapter went away, BlueZ left the bus
   *  or the bus connection ended. The reason says which. */
  onGone(devicePath: string, listener: (reason: string) => void): void;
  close(): void;
}

export class DbusBluez implements BluezGatt {
  readonly #bus: DbusConnection;
  #owner = '';
  #watchers = new Map<string, Set<(iface: string, changed: Record<string, unknown>) => void>>();
  #goneListeners: Array<{ devicePath: string; listener: (reason: string) => void }> = [];

  private constructor(bus: DbusConnection) {
    this.#bus = bus;
  }

  /** Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus) and checks BlueZ is
   *  on it. ERR_BLE_UNAVAILABLE when either is missing. */
  static async open(address = systemBusAddress()): Promise<DbusBluez> {
    const bus = await DbusConnection.open(address);
    const client = new DbusBluez(bus);
    try {
      await client.#subscribe();
    } catch (error) {
      bus.close();
      throw error;
    }
    return client;
  }

  async #subscribe(): Promise<void> {
    const bus = this.#bus;
    bus.onSignal((s) => this.#onSignal(s));
    bus.onClose((reason) => this.#goneAll(`the D-Bus connection ended (${reason})`));
    // Matches first, then the owner: a BlueZ that starts in between is not missed.
    await bus.addMatch(`type='signal',sender='${BLUEZ}',interface='${PROPERTIES_IFACE}',member='PropertiesChanged'`);
    await bus.addMatch(`type='signal',sender='${BLUEZ}',interface='${OBJECT_MANAGER_IFACE}'`);
    await bus.addMatch(`type='signal',sender='${BLUEZ}',interface='${DEVICE_IFACE}',member='Disconnected'`);
    await bus.addMatch(`type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='${BLUEZ}'`);
    try {
      const [owner] = await bus.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'GetNameOwner', 's', [BLUEZ]);
      this.#owner = String(owner);
    } catch (error) {
      if (error instanceof DbusError && error.dbusName === 'org.freedesktop.DBus.Error.NameHasNoOwner') {
        throw new DeviceError('ERR_BLE_UNAVAILABLE', 'BlueZ (org.bluez) is not on the system bus: is bluetoothd running? (systemctl status bluetooth)', { retryable: true });
      }
      throw error;
    }
  }

  async getManagedObjects(): Promise<ManagedObjects> {
    const [tree] = await this.#call('/', OBJECT_MANAGER_IFACE, 'GetManagedObjects');
    const out: ManagedObjects = {};
    for (const [path, ifaces] of (tree as Array<[string, Array<[string, unknown]>]>) ?? []) {
      out[path] = {};
      for (const [iface, props] of ifaces) out[path][iface] = propertyMap(props);
    }
    return out;
  }

  async connect(devicePath: string): Promise<void> {
    let resolved!: () => void;
    let failed!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      resolved = resolve;
      failed = reject;
    });
    ready.catch(() => {});
    const unwatch = this.watch(devicePath, DEVICE_IFACE, (changed) => {
      if (changed.ServicesResolved === true) resolved();
      else if (changed.Connected === false) failed(new DeviceError('ERR_BLE_CONNECT', 'the board disconnected during service discovery', { retryable: true }));
    });
    try {
      try {
        await this.#call(devicePath, DEVICE_IFACE, 'Connect', '', [], CONNECT_TIMEOUT_MS);
      } catch (error) {
        if (!(error instanceof DbusError && error.dbusName === 'org.bluez.Error.AlreadyConnected')) {
          throw new DeviceError('ERR_BLE_CONNECT', `BlueZ could not connect: ${describeBluezError(error)}`, { retryable: true });
        }
      }
      const [value] = await this.#call(devicePath, PROPERTIES_IFACE, 'Get', 'ss', [DEVICE_IFACE, 'ServicesResolved']);
      if (propertyMap([['v', value]]).v === true) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DeviceError('ERR_BLE_CONNECT', `services were not resolved within ${RESOLVE_TIMEOUT_MS / 1000} s of connecting`, { retryable: true })), RESOLVE_TIMEOUT_MS);
        timer.unref?.();
      });
      const closed = new Promise<never>((_, reject) => this.#bus.onClose((reason) => reject(new DeviceError('ERR_BLE_CONNECT', `the D-Bus connection ended (${reason})`, { retryable: true }))));
      closed.catch(() => {});
      try {
        await Promise.race([ready, timeout, closed]);
      } finally {
        clearTimeout(timer);
      }
    } finally {
      unwatch();
    }
  }

  async disconnect(devicePath: string): Promise<void> {
    await this.#call(devicePath, DEVICE_IFACE, 'Disconnect', '', [], 5_000).catch(() => {});
  }

  watch(path: string, iface: string, listener: (changed: Record<string, unknown>) => void): () => void {
    const entry = (changedIface: string, changed: Record<string, unknown>) => {
      if (changedIface === iface) listener(changed);
    };
    let set = this.#watchers.get(path);
    if (!set) this.#watchers.set(path, (set = new Set()));
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.#watchers.get(path) === set) this.#watchers.delete(path);
    };
  }

  async startNotify(charPath: string): Promise<void> {
    await this.#call(charPath, GATT_CHAR_IFACE, 'StartNotify');
  }

  async readValue(charPath: string): Promise<Uint8Array> {
    const [value] = await this.#call(charPath, GATT_CHAR_IFACE, 'ReadValue', 'a{sv}', [[]]);
    return asBytes(value);
  }

  async writeValue(charPath: string, value: Uint8Array, type: WriteType): Promise<void> {
    // WriteValue(array{byte} value, dict options), options.type "command" or "request".
    await this.#call(charPath, GATT_CHAR_IFACE, 'WriteValue', 'aya{sv}', [Buffer.from(value), [['type', ['s', type]]]]);
  }

  onGone(devicePath: string, listener: (reason: string) => void): void {
    if (this.#bus.closed) queueMicrotask(() => listener('the D-Bus connection ended'));
    else this.#goneListeners.push({ devicePath, listener });
  }

  close(): void {
    this.#goneListeners = [];
    this.#bus.close();
  }

  #call(path: string, iface: string, member: string, signature = '', body: unknown[] = [], timeoutMs?: number): Promise<unknown[]> {
    return this.#bus.call(BLUEZ, path, iface, member, signature, body, timeoutMs);
  }

  #onSignal(s: DbusSignal): void {
    if (s.iface === 'org.freedesktop.DBus' && s.member === 'NameOwnerChanged') {
      const [name, , newOwner] = s.body as string[];
      if (name !== BLUEZ) return;
      if (!newOwner) this.#goneAll('BlueZ left the system bus (bluetoothd stopped or restarted)');
      this.#owner = newOwner ?? '';
      return;
    }
    if (s.sender !== this.#owner) return; // only bluetoothd speaks for org.bluez
    if (s.iface === PROPERTIES_IFACE && s.member === 'PropertiesChanged') {
      const [iface, changed] = s.body as [string, unknown];
      const props = propertyMap(changed);
      for (const entry of [...(this.#watchers.get(s.path) ?? [])]) entry(iface, props);
      if (iface === DEVICE_IFACE && props.Connected === false) this.#gone((d) => d === s.path, 'the board disconnected');
      return;
    }
    if (s.iface === DEVICE_IFACE && s.member === 'Disconnected') {
      const [reason, message] = s.body as string[];
      this.#gone((d) => d === s.path, `the board disconnected: ${message || 'no reason given'} (${reason})`);
      return;
    }
    if (s.iface === OBJECT_MANAGER_IFACE && s.member === 'InterfacesRemoved') {
      const [path, ifaces] = s.body as [string, string[]];
      if (ifaces.includes(ADAPTER_IFACE)) this.#gone((d) => d.startsWith(path + '/'), `Bluetooth adapter ${path.split('/').pop()} went away`);
      if (ifaces.includes(DEVICE_IFACE)) this.#gone((d) => d === path, 'BlueZ removed the device (unpaired or forgotten?)');
    }
  }

  #gone(match: (devicePath: string) => boolean, reason: string): void {
    const hit = this.#goneListeners.filter((g) => match(g.devicePath));
    this.#goneListeners = this.#goneListeners.filter((g) => !match(g.devicePath));
    for (const g of hit) g.listener(reason);
  }

  #goneAll(reason: string): void {
    this.#gone(() => true, reason);
  }
}

function asBytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return Uint8Array.from(value as number[]);
  return new Uint8Array(0);
}

/** BlueZ's error as a person reads it: "org.bluez.Error.Failed: le-connection-abort-by-local". */
export function describeBluezError(error: unknown): string {
  if (error instanceof DbusError) {
    const hint = BLUEZ_HINTS[error.text] ?? BLUEZ_HINTS[error.dbusName];
    return `${error.message}${hint ? ` (${hint})` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}

// BlueZ src/error.h and error.c: the texts a failed Connect carries, and what they mean here.
const BLUEZ_HINTS: Record<string, string> = {
  'le-connection-abort-by-local': 'the board did not answer: out of range, off, or connected to another host',
  'le-connection-adapter-not-powered': 'the Bluetooth adapter is off: bluetoothctl power on',
  'le-connection-key-missing': 'the board forgot the bond: remove it (bluetoothctl remove) and pair again',
  'org.bluez.Error.NotReady': 'the Bluetooth adapter is not ready (powered off?)',
  'org.bluez.Error.InProgress': 'another connection attempt is under way',
};
