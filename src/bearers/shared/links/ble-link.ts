import { DeviceError } from '../../device-error.ts';
import { MAX_FRAME_SIZE as MESHCORE_MAX_FRAME } from '../../meshcore/codec/constants.ts';
import { encodeFrame as encodeMeshCoreFrame, FrameDecoder as MeshCoreFrameDecoder } from '../../meshcore/codec/frame.ts';
import { encodeFrame, MAX_FRAME_PAYLOAD, StreamDecoder } from '../../meshtastic/codec/stream.ts';
import { ATT_HEADER_BYTES, describeTarget, findDevice, findProfile, type BleTarget, type GattProfile } from './ble-find.ts';
import { DbusBluez, describeBluezError, GATT_CHAR_IFACE, type BluezGatt } from './bluez-client.ts';
import { LinkEvents } from './link-events.ts';
import type { Link } from './link.ts';

// A Link over Bluetooth LE, through BlueZ on the system bus (docs/ports.md "BLE"). The board
// must already be bonded. What the driver reads and writes is the byte stream it reads over
// USB serial, whatever the board's GATT service:
//  - Nordic UART (RNode): TX notifications are the stream; writes go to RX as Write Commands
//    of at most ATT_MTU - 3 bytes (docs/protocols/rnode.md 1.1 "BLE").
//  - Meshtastic: the stream API's frames (94 C3 len, docs/protocols/meshtastic.md 2.1) are
//    taken apart here: each ToRadio frame the driver writes becomes one write with response
//    of its protobuf alone; each FromRadio read becomes one frame for the driver. FromRadio is
//    read until empty after every write and whenever FromNum notifies.
//  - MeshCore: Nordic UART again, but one companion frame per write and per notification,
//    without the serial header (MeshCoreBleLink below).
// The GATT and D-Bus facts behind each step, with their sources, are in docs/ports.md
// "BLE decisions".

export { describeTarget, type BleTarget } from './ble-find.ts';
export type { BluezGatt } from './bluez-client.ts';

/** What the driver's bytes look like on the air: `stream` (RNode: the serial stream itself, cut
 *  to the MTU), `meshtastic` (the stream API's frames, one protobuf per write or read) or
 *  `meshcore` (the companion protocol's frames, one per write or notification, no header). */
export type BleFraming = 'stream' | 'meshtastic' | 'meshcore';

export interface BleLinkOptions {
  /** Speaks to BlueZ; default: a new D-Bus connection to the system bus for this link. */
  bus?: BluezGatt;
  /** The driver's framing (default `stream`); `meshtastic` also takes the Meshtastic service
   *  should a board offer it beside Nordic UART (none known does). */
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
    let link: BleLinkBase | null = null;
    bus.onGone(device.path, (reason) => {
      gone = reason;
      link?.gone(reason);
    });
    await bus.connect(device.path);
    const framing = options.framing ?? 'stream';
    const profile = findProfile(await bus.getManagedObjects(), device.path, description, framing === 'meshtastic' ? 'meshtastic' : 'nus');
    if (profile.kind === 'meshtastic') link = new MeshtasticBleLink(bus, device.path, profile, description, options.report);
    else if (framing === 'meshcore') link = new MeshCoreBleLink(bus, device.path, profile, description, options.report);
    else link = new NusLink(bus, device.path, profile, description, options.report);
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

/** The lifecycle both profiles share: gone -> onClose, close -> Disconnect, one write at a
 *  time (BlueZ answers InProgress to a second write request on a characteristic). */
abstract class BleLinkBase implements Link {
  readonly kind = 'ble' as const;
  readonly description: string;
  protected readonly bus: BluezGatt;
  protected readonly events: LinkEvents;
  readonly #devicePath: string;
  #queue: Promise<void> = Promise.resolve();
  #unwatch: Array<() => void> = [];

  constructor(bus: BluezGatt, devicePath: string, description: string, report?: (error: unknown) => void) {
    this.bus = bus;
    this.#devicePath = devicePath;
    this.description = description;
    this.events = new LinkEvents(report);
  }

  /** BlueZ says the board, its adapter or BlueZ itself is gone (bluez-client.ts onGone). */
  gone(reason: string): void {
    void this.#end(`${this.description}: ${reason}`, false);
  }

  abstract start(): Promise<void>;
  protected abstract send(data: Uint8Array): Promise<void>;

  protected watchValue(charPath: string, listener: (value: Uint8Array) => void): void {
    this.#unwatch.push(
      this.bus.watch(charPath, GATT_CHAR_IFACE, (changed) => {
        if (changed.Value instanceof Uint8Array) listener(changed.Value);
      }),
    );
  }

  protected watchMtu(charPath: string, listener: (mtu: number) => void): void {
    this.#unwatch.push(
      this.bus.watch(charPath, GATT_CHAR_IFACE, (changed) => {
        if (typeof changed.MTU === 'number' && changed.MTU > ATT_HEADER_BYTES) listener(changed.MTU);
      }),
    );
  }

  write(data: Uint8Array): Promise<void> {
    if (this.events.closed) return Promise.reject(this.events.closedError(this.description));
    const copy = Uint8Array.from(data);
    const done = this.#queue.then(() => (this.events.closed ? Promise.reject(this.events.closedError(this.description)) : this.send(copy)));
    this.#queue = done.catch(() => {});
    return done;
  }

  protected async writeValue(charPath: string, value: Uint8Array, type: 'command' | 'request'): Promise<void> {
    try {
      await this.bus.writeValue(charPath, value, type);
    } catch (error) {
      if (this.events.closed) throw this.events.closedError(this.description);
      throw new DeviceError('ERR_LINK_WRITE', `writing to ${this.description} failed: ${describeBluezError(error)}`, { retryable: true });
    }
  }

  onData(listener: (chunk: Uint8Array) => void): void {
    this.events.onData(listener);
  }

  onClose(listener: (reason: string) => void): void {
    this.events.onClose(listener);
  }

  /** For a profile that finds the board unusable while the link is up. */
  protected fail(reason: string): void {
    void this.#end(`${this.description}: ${reason}`, true);
  }

  async close(): Promise<void> {
    await this.#end('closed by the bridge', true);
  }

  async #end(reason: string, disconnect: boolean): Promise<void> {
    if (this.events.closed) return;
    for (const off of this.#unwatch) off();
    this.#unwatch = [];
    this.events.emitClose(reason);
    if (disconnect) await this.bus.disconnect(this.#devicePath).catch(() => {});
    this.bus.close();
  }
}

class NusLink extends BleLinkBase {
  readonly #profile: Extract<GattProfile, { kind: 'nus' }>;
  #mtu: number;

  constructor(bus: BluezGatt, devicePath: string, profile: Extract<GattProfile, { kind: 'nus' }>, description: string, report?: (error: unknown) => void) {
    super(bus, devicePath, description, report);
    this.#profile = profile;
    this.#mtu = profile.mtu;
  }

  async start(): Promise<void> {
    this.watchMtu(this.#profile.rxPath, (mtu) => (this.#mtu = mtu));
    this.watchValue(this.#profile.txPath, (value) => this.events.emitData(value));
    await this.bus.startNotify(this.#profile.txPath);
  }

  protected async send(data: Uint8Array): Promise<void> {
    for (const chunk of chunkForWrite(data, this.#mtu - ATT_HEADER_BYTES)) await this.writeValue(this.#profile.rxPath, chunk, 'command');
  }
}

class MeshtasticBleLink extends BleLinkBase {
  readonly #profile: Extract<GattProfile, { kind: 'meshtastic' }>;
  readonly #decoder = new StreamDecoder();
  #draining = false;
  #again = false;

  constructor(bus: BluezGatt, devicePath: string, profile: Extract<GattProfile, { kind: 'meshtastic' }>, description: string, report?: (error: unknown) => void) {
    super(bus, devicePath, description, report);
    this.#profile = profile;
  }

  async start(): Promise<void> {
    this.watchValue(this.#profile.fromNumPath, () => void this.#drain());
    await this.bus.startNotify(this.#profile.fromNumPath);
  }

  /** The driver's stream bytes: whole ToRadio frames are written one per write; the wake
   *  bytes (32 x C3) and anything else outside a frame mean nothing over BLE and are dropped. */
  protected async send(data: Uint8Array): Promise<void> {
    for (const event of this.#decoder.push(data)) {
      if (event.type !== 'frame') continue;
      await this.writeValue(this.#profile.toRadioPath, event.payload, 'request');
      void this.#drain();
    }
  }

  /** Reads FromRadio until it answers empty; a request made meanwhile reads once more. */
  async #drain(): Promise<void> {
    if (this.#draining) {
      this.#again = true;
      return;
    }
    this.#draining = true;
    try {
      do {
        this.#again = false;
        for (;;) {
          if (this.events.closed) return;
          const payload = await this.bus.readValue(this.#profile.fromRadioPath);
          if (payload.length === 0) break;
          // The firmware never sends more than MAX_TO_FROM_RADIO_SIZE; a longer read is not a frame.
          if (payload.length <= MAX_FRAME_PAYLOAD) this.events.emitData(encodeFrame(payload));
        }
      } while (this.#again);
    } catch (error) {
      if (!this.events.closed) this.fail(`reading FromRadio failed: ${describeBluezError(error)}`);
    } finally {
      this.#draining = false;
    }
  }
}

/**
 * A MeshCore companion radio over Nordic UART (docs/protocols/meshcore.md 6.1, "BLE"): the
 * firmware's SerialBLEInterface takes one frame per write of RX (a write longer than
 * MAX_FRAME_SIZE, or empty, is ignored) and sends one frame per TX notification, without the
 * `<`/`>` header and length the serial port uses. The driver speaks the serial framing; here
 * its `<` frames are taken apart into one write each, and each notification becomes a `>`
 * frame for it, so the driver is the same over every link.
 */
class MeshCoreBleLink extends BleLinkBase {
  readonly #profile: Extract<GattProfile, { kind: 'nus' }>;
  readonly #decoder = new MeshCoreFrameDecoder('to-radio');
  /** Notifications that cannot be a frame (empty, or longer than the firmware ever sends). */
  notFrames = 0;

  constructor(bus: BluezGatt, devicePath: string, profile: Extract<GattProfile, { kind: 'nus' }>, description: string, report?: (error: unknown) => void) {
    super(bus, devicePath, description, report);
    this.#profile = profile;
  }

  async start(): Promise<void> {
    this.watchValue(this.#profile.txPath, (value) => {
      if (value.length === 0 || value.length > MESHCORE_MAX_FRAME) {
        this.notFrames++;
        return;
      }
      this.events.emitData(encodeMeshCoreFrame('from-radio', value));
    });
    await this.bus.startNotify(this.#profile.txPath);
  }

  /** Each whole `<` frame of the driver is one write with response: BlueZ waits for the
   *  board's answer (flow control), and splits a frame longer than the MTU allows into a long
   *  write. Bytes outside a frame mean nothing over BLE and are dropped. */
  protected async send(data: Uint8Array): Promise<void> {
    for (const event of this.#decoder.push(data)) {
      if (event.type !== 'frame') continue;
      await this.writeValue(this.#profile.rxPath, event.body, 'request');
    }
  }
}

/** Splits a write into pieces of at most `size` bytes, in order. Pure. */
export function chunkForWrite(data: Uint8Array, size: number): Uint8Array[] {
  if (size < 1) throw new RangeError(`chunk size must be at least 1, got ${size}`);
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < data.length; at += size) chunks.push(data.subarray(at, Math.min(at + size, data.length)));
  return chunks;
}
