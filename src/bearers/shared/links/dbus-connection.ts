import * as dbusNative from '@homebridge/dbus-native';
import { DeviceError } from '../../device-error.ts';

// One connection to a D-Bus bus (the system bus, where BlueZ lives), over the pure-JavaScript
// client @homebridge/dbus-native (docs/dependencies.md "D-Bus"). It adds what that library
// leaves to its user: a promise per method call with a time limit, errors as DeviceErrors, one
// close report (the socket ended, failed, or we closed it), and plain values out of variants.
// Nothing here knows BlueZ; bluez-client.ts does.

/** Where the system bus is when DBUS_SYSTEM_BUS_ADDRESS is unset (D-Bus specification,
 *  "Well-known Message Bus Instances"; Debian's /var/run is a link to /run). */
export const DEFAULT_SYSTEM_BUS_ADDRESS = 'unix:path=/run/dbus/system_bus_socket';
/** What libdbus waits for a reply by default (DBUS_TIMEOUT_USE_DEFAULT, 25 s). */
export const DEFAULT_CALL_TIMEOUT_MS = 25_000;
const CONNECT_TIMEOUT_MS = 5_000;

export function systemBusAddress(env: NodeJS.ProcessEnv = process.env): string {
  return env.DBUS_SYSTEM_BUS_ADDRESS || DEFAULT_SYSTEM_BUS_ADDRESS;
}

export interface DbusSignal {
  sender: string;
  path: string;
  iface: string;
  member: string;
  body: unknown[];
}

/** A D-Bus error reply: `name` is the error name (org.bluez.Error.Failed, ...). */
export class DbusError extends Error {
  readonly dbusName: string;
  /** The error's own text, without its name. */
  readonly text: string;
  constructor(dbusName: string, text: string) {
    super(text ? `${dbusName}: ${text}` : dbusName);
    this.dbusName = dbusName;
    this.text = text;
  }
}

// The parts of the library used here (its index.d.ts declares fewer).
interface NativeMessage {
  type: number;
  sender?: string;
  path?: string;
  interface?: string;
  member?: string;
  body?: unknown[];
}
interface NativeBus {
  connection: {
    on(event: 'message', listener: (msg: NativeMessage) => void): void;
    on(event: 'connect' | 'end', listener: () => void): void;
    on(event: 'error', listener: (error: Error) => void): void;
    end(): void;
    stream: { destroy(): void };
  };
  invoke(msg: Record<string, unknown>, callback: (error: { name?: string; message?: string } | null | undefined, ...body: unknown[]) => void): void;
}
const native = dbusNative as unknown as { createClient(options: { busAddress: string }): NativeBus };
const SIGNAL = 4; // D-Bus message type 4 (specification, "Message Types")

export class DbusConnection {
  readonly address: string;
  readonly #bus: NativeBus;
  #closed: string | null = null;
  #closeListeners: Array<(reason: string) => void> = [];
  #signalListeners: Array<(signal: DbusSignal) => void> = [];
  #pending = new Set<(reason: string) => void>();

  private constructor(address: string, bus: NativeBus) {
    this.address = address;
    this.#bus = bus;
  }

  /** Connects and authenticates; rejects with ERR_BLE_UNAVAILABLE when no bus answers. */
  static open(address: string, timeoutMs = CONNECT_TIMEOUT_MS): Promise<DbusConnection> {
    return new Promise((resolve, reject) => {
      let bus: NativeBus;
      try {
        bus = native.createClient({ busAddress: address });
      } catch (error) {
        reject(unavailable(address, (error as Error).message));
        return;
      }
      const conn = new DbusConnection(address, bus);
      let settled = false;
      const timer = setTimeout(() => fail(`no answer within ${timeoutMs} ms`), timeoutMs);
      timer.unref?.();
      const fail = (why: string) => {
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          try {
            bus.connection.stream.destroy();
          } catch {}
          reject(unavailable(address, why));
        }
        conn.#end(why);
      };
      bus.connection.on('error', (error) => fail(describeSocketError(error)));
      bus.connection.on('end', () => fail('the bus closed the connection'));
      bus.connection.on('message', (msg) => conn.#onMessage(msg));
      bus.connection.on('connect', () => {
        // The library sends Hello by itself once authenticated; a first call proves the bus answers.
        conn.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'GetId').then(
          () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve(conn);
          },
          (error) => fail((error as Error).message),
        );
      });
    });
  }

  get closed(): boolean {
    return this.#closed !== null;
  }

  /** Calls a method; resolves with the reply's body. Rejects with DbusError for an error
   *  reply, or an Error when the connection ends or no reply comes in time. */
  call(destination: string, path: string, iface: string, member: string, signature = '', body: unknown[] = [], timeoutMs = DEFAULT_CALL_TIMEOUT_MS): Promise<unknown[]> {
    if (this.#closed !== null) return Promise.reject(new Error(`the D-Bus connection is closed (${this.#closed})`));
    return new Promise((resolve, reject) => {
      const onClose = (reason: string) => finish(new Error(`the D-Bus connection closed during ${iface}.${member} (${reason})`));
      const timer = setTimeout(() => finish(new Error(`${iface}.${member} got no reply within ${timeoutMs} ms`)), timeoutMs);
      timer.unref?.();
      let done = false;
      const finish = (error: Error | null, result?: unknown[]) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.#pending.delete(onClose);
        if (error) reject(error);
        else resolve(result ?? []);
      };
      this.#pending.add(onClose);
      const message: Record<string, unknown> = { destination, path, interface: iface, member };
      if (signature) {
        message.signature = signature;
        message.body = body;
      }
      try {
        this.#bus.invoke(message, (error, ...result) => {
          if (error) finish(new DbusError(error.name ?? 'org.freedesktop.DBus.Error.Failed', error.message ?? ''));
          else finish(null, result);
        });
      } catch (error) {
        finish(new Error(`${iface}.${member} could not be sent: ${(error as Error).message}`));
      }
    });
  }

  /** org.freedesktop.DBus.AddMatch: the bus then routes matching signals to us. */
  async addMatch(rule: string): Promise<void> {
    await this.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'AddMatch', 's', [rule]);
  }

  onSignal(listener: (signal: DbusSignal) => void): () => void {
    this.#signalListeners.push(listener);
    return () => {
      this.#signalListeners = this.#signalListeners.filter((l) => l !== listener);
    };
  }

  /** Once, when the connection ends for any reason. */
  onClose(listener: (reason: string) => void): void {
    if (this.#closed !== null) queueMicrotask(() => listener(this.#closed!));
    else this.#closeListeners.push(listener);
  }

  close(): void {
    if (this.#closed !== null) return;
    this.#end('closed by the bridge');
    try {
      this.#bus.connection.end();
    } catch {}
    try {
      this.#bus.connection.stream.destroy();
    } catch {}
  }

  #onMessage(msg: NativeMessage): void {
    if (msg.type !== SIGNAL) return;
    const signal: DbusSignal = {
      sender: msg.sender ?? '',
      path: msg.path ?? '',
      iface: msg.interface ?? '',
      member: msg.member ?? '',
      body: msg.body ?? [],
    };
    for (const listener of [...this.#signalListeners]) {
      try {
        listener(signal);
      } catch {
        // A listener's bug must not stop the bus's other listeners (link-events.ts does the reporting).
      }
    }
  }

  #end(reason: string): void {
    if (this.#closed !== null) return;
    this.#closed = reason;
    for (const reject of [...this.#pending]) reject(reason);
    this.#pending.clear();
    const listeners = this.#closeListeners;
    this.#closeListeners = [];
    for (const listener of listeners) listener(reason);
  }
}

function unavailable(address: string, why: string): DeviceError {
  return new DeviceError('ERR_BLE_UNAVAILABLE', `no D-Bus system bus at ${address} (${why}); BLE needs BlueZ on the host and its bus socket reachable (in a container, mount /run/dbus)`, { retryable: true });
}

function describeSocketError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no socket there';
  if (code === 'ECONNREFUSED') return 'connection refused: nothing listens on the socket';
  if (code === 'EACCES') return 'permission denied on the socket';
  return error.message;
}

// ---- values out of the library's variant form -----------------------------------------

/**
 * The library reads a variant as [signatureTree, [value]]; this returns the value, and turns
 * a dictionary a{sv} (an array of [key, variant]) into a plain object. Buffers stay Buffers.
 */
export function variantValue(variant: unknown): unknown {
  if (!Array.isArray(variant) || variant.length !== 2 || !Array.isArray(variant[1])) return variant;
  return variant[1][0];
}

/** a{sv} as the library reads it -> { key: plain value }. */
export function propertyMap(entries: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!Array.isArray(entries)) return out;
  for (const entry of entries) {
    if (Array.isArray(entry) && typeof entry[0] === 'string') out[entry[0]] = variantValue(entry[1]);
  }
  return out;
}
