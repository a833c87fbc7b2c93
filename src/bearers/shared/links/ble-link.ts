import { DeviceError } from '../../device-error.ts';
import { describeTarget, findDevice, findProfile, type BleTarget, type GattProfile } from './ble-find.ts';
import { ATT_HEADER_BYTES, STREAM_FRAMING, type BleChannel, type BleFramer, type BleFraming } from './ble-framing.ts';
import { DbusBluez, describeBluezError, GATT_CHAR_IFACE, type BluezGatt, type WriteType } from './bluez-client.ts';
import { EventLink } from './link-events.ts';
import type { Link } from './link.ts';

// A Link over Bluetooth LE, through BlueZ on the system bus (docs/ports.md "BLE"). The board
// must already be bonded. What the driver reads and writes is the byte stream it reads over
// USB serial, whatever the board's GATT service: the driver's framing (ble-framing.ts; a kind
// brings its own from its folder) turns that stream into the service's writes, reads and
// notifications and back. The GATT and D-Bus facts behind each step, with their sources, are
// in docs/ports.md "BLE decisions".

export { describeTarget, type BleTarget } from './ble-find.ts';
export type { BluezGatt } from './bluez-client.ts';
export type { BleFraming } from './ble-framing.ts';

export interface BleLinkOptions {
  /** Speaks to BlueZ; default: a new D-Bus connection to the system bus for this link. */
  bus?: BluezGatt;
  /** The driver's framing (default: the byte stream over Nordic UART). */
  framing?: BleFraming;
  report?: (error: unknown) => void;
}

export async function openBleLink(target: BleTarget, options: BleLinkOptions = {}): Promise<Link> {
  const description = describeTarget(target);
  const bus = options.bus ?? (await DbusBluez.open());
  let devicePath: string | null = null;
  try {
    const device = findDevice(await bus.getManagedObjects(), target);
    devicePath = device.path;
    // Listened for from before Connect, so a board that drops while the link is being set up
    // closes it too (the link takes the reason over once it exists).
    let gone: string | null = null;
    let link: BleLink | null = null;
    bus.onGone(device.path, (reason) => {
      gone = reason;
      link?.gone(reason);
    });
    await bus.connect(device.path);
    const profile = findProfile(await bus.getManagedObjects(), device.path, description, (options.framing ?? STREAM_FRAMING).services);
    link = new BleLink(bus, device.path, profile, description, options.report);
    await link.start();
    if (gone !== null) throw new DeviceError('ERR_BLE_CONNECT', `${description}: ${gone}`, { retryable: true });
    return link;
  } catch (error) {
    if (devicePath) await bus.disconnect(devicePath).catch(() => {});
    bus.close();
    if (error instanceof DeviceError) throw error;
    throw new DeviceError('ERR_BLE_CONNECT', `${description}: ${describeBluezError(error)}`, { retryable: true });
  }
}

/** The link over one found service: gone -> onClose, close -> Disconnect, one write at a time
 *  (BlueZ answers InProgress to a second write request on a characteristic); the framer does
 *  the rest. */
class BleLink extends EventLink implements Link {
  readonly kind = 'ble' as const;
  readonly description: string;
  /** Values the framing could not take as a frame (BleChannel.discard). */
  notFrames = 0;
  readonly #bus: BluezGatt;
  readonly #devicePath: string;
  readonly #paths: Record<string, string>;
  readonly #framer: BleFramer;
  #mtu: number;
  #queue: Promise<void> = Promise.resolve();
  #unwatch: Array<() => void> = [];

  constructor(bus: BluezGatt, devicePath: string, profile: GattProfile, description: string, report?: (error: unknown) => void) {
    super(report);
    this.#bus = bus;
    this.#devicePath = devicePath;
    this.#paths = profile.paths;
    this.#mtu = profile.mtu;
    this.description = description;
    this.#watch(profile.paths[profile.service.mtuRole], (changed) => {
      if (typeof changed.MTU === 'number' && changed.MTU > ATT_HEADER_BYTES) this.#mtu = changed.MTU;
    });
    this.#framer = profile.service.attach(this.#channel());
  }

  start(): Promise<void> {
    return this.#framer.start();
  }

  #channel(): BleChannel {
    const link = this;
    return {
      get closed() {
        return link.events.closed;
      },
      get mtu() {
        return link.#mtu;
      },
      write: (role, value, type) => this.#writeValue(this.#paths[role], value, type),
      read: (role) => this.#bus.readValue(this.#paths[role]).catch((error: unknown) => Promise.reject(new Error(describeBluezError(error)))),
      onValue: (role, listener) =>
        this.#watch(this.#paths[role], (changed) => {
          if (changed.Value instanceof Uint8Array) listener(changed.Value);
        }),
      startNotify: (role) => this.#bus.startNotify(this.#paths[role]),
      emit: (data) => this.events.emitData(data),
      discard: () => void this.notFrames++,
      fail: (reason) => void this.#end(`${this.description}: ${reason}`, true),
    };
  }

  #watch(charPath: string, listener: (changed: Record<string, unknown>) => void): void {
    this.#unwatch.push(this.#bus.watch(charPath, GATT_CHAR_IFACE, listener));
  }

  /** BlueZ says the board, its adapter or BlueZ itself is gone (bluez-client.ts onGone). */
  gone(reason: string): void {
    void this.#end(`${this.description}: ${reason}`, false);
  }

  write(data: Uint8Array): Promise<void> {
    if (this.events.closed) return Promise.reject(this.events.closedError(this.description));
    const copy = Uint8Array.from(data);
    const done = this.#queue.then(() => (this.events.closed ? Promise.reject(this.events.closedError(this.description)) : this.#framer.send(copy)));
    this.#queue = done.catch(() => {});
    return done;
  }

  async #writeValue(charPath: string, value: Uint8Array, type: WriteType): Promise<void> {
    try {
      await this.#bus.writeValue(charPath, value, type);
    } catch (error) {
      if (this.events.closed) throw this.events.closedError(this.description);
      throw new DeviceError('ERR_LINK_WRITE', `writing to ${this.description} failed: ${describeBluezError(error)}`, { retryable: true });
    }
  }

  async close(): Promise<void> {
    await this.#end('closed by the bridge', true);
  }

  async #end(reason: string, disconnect: boolean): Promise<void> {
    if (this.events.closed) return;
    for (const off of this.#unwatch) off();
    this.#unwatch = [];
    this.events.emitClose(reason);
    if (disconnect) await this.#bus.disconnect(this.#devicePath).catch(() => {});
    this.#bus.close();
  }
}

export { chunkForWrite } from './ble-framing.ts';
