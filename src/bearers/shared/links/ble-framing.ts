import type { WriteType } from './bluez-client.ts';

// How a driver's bytes travel over a GATT service (docs/ports.md "BLE"). The shared BLE link
// finds the board, connects, finds the first service of the framing's list the board offers,
// and hands the framer a channel to that service's characteristics by role. A kind whose board
// speaks BLE differently brings its own framing from its folder (DriverModule.bleFraming);
// the Nordic UART byte stream, the RNode's, is the default and lives here.

/** One GATT service a framing speaks, with its characteristics by role. */
export interface BleService {
  uuid: string;
  /** How errors name it: "the Nordic UART service (6e400001-…, RNode)". */
  title: string;
  /** How `fieldbridge ports` labels a bonded board offering it. */
  listedAs: string;
  /** Role -> characteristic UUID; every role must be present for the service to count. */
  characteristics: Readonly<Record<string, string>>;
  /** The role whose characteristic's MTU the link follows. */
  mtuRole: string;
  /** Builds the framer for one link over this service. */
  attach(channel: BleChannel): BleFramer;
}

/** What a driver's framing is: the services it speaks, in the order it prefers them. */
export interface BleFraming {
  services: readonly BleService[];
}

/** What the shared link lends a framer: its service's characteristics, and the driver's side. */
export interface BleChannel {
  readonly closed: boolean;
  /** The ATT MTU of the service's `mtuRole` characteristic, followed as BlueZ reports it. */
  readonly mtu: number;
  write(role: string, value: Uint8Array, type: WriteType): Promise<void>;
  /** Rejects with an Error whose message says what BlueZ answered. */
  read(role: string): Promise<Uint8Array>;
  /** Listens for value changes (notifications) of a role's characteristic. */
  onValue(role: string, listener: (value: Uint8Array) => void): void;
  startNotify(role: string): Promise<void>;
  /** Bytes for the driver, as it reads them over serial. */
  emit(data: Uint8Array): void;
  /** A value the framing could not take as a frame: counted (BleLink.notFrames), dropped. */
  discard(): void;
  /** Ends the link: the board is unusable while connected. */
  fail(reason: string): void;
}

export interface BleFramer {
  /** Starts notifications; the link is open when it resolves. */
  start(): Promise<void>;
  /** Carries the driver's bytes, one call at a time. */
  send(data: Uint8Array): Promise<void>;
}

/** Nordic UART service: the RNode's BLE serial port (RNode_Firmware BLESerial). */
export const NUS_SERVICE_UUID = '6e400001-b5a3-f393-e0a9-e50e24dcca9e';
/** Host -> board: write (without response). */
export const NUS_RX_CHAR_UUID = '6e400002-b5a3-f393-e0a9-e50e24dcca9e';
/** Board -> host: notify. */
export const NUS_TX_CHAR_UUID = '6e400003-b5a3-f393-e0a9-e50e24dcca9e';

// Core spec Vol 3 Part F 3.4.5.3: a Write Command carries ATT_MTU - 3 bytes; every LE link
// starts at ATT_MTU 23.
export const ATT_HEADER_BYTES = 3;
export const DEFAULT_ATT_MTU = 23;

/** The Nordic UART service with a framer of the caller's: the roles `rx` (host -> board) and `tx`. */
export function nordicUart(attach: (channel: BleChannel) => BleFramer): BleService {
  return {
    uuid: NUS_SERVICE_UUID,
    title: `the Nordic UART service (${NUS_SERVICE_UUID}, RNode)`,
    listedAs: 'RNode (Nordic UART)',
    characteristics: { rx: NUS_RX_CHAR_UUID, tx: NUS_TX_CHAR_UUID },
    mtuRole: 'rx',
    attach,
  };
}

/** The serial stream itself over Nordic UART: TX notifications are the stream; writes go to RX
 *  as Write Commands of at most ATT_MTU - 3 bytes (docs/protocols/rnode.md 1.1 "BLE"). */
export const NUS_STREAM = nordicUart((channel) => ({
  async start() {
    channel.onValue('tx', (value) => channel.emit(value));
    await channel.startNotify('tx');
  },
  async send(data) {
    for (const chunk of chunkForWrite(data, channel.mtu - ATT_HEADER_BYTES)) await channel.write('rx', chunk, 'command');
  },
}));

/** The default framing: the byte stream over Nordic UART. */
export const STREAM_FRAMING: BleFraming = { services: [NUS_STREAM] };

/** Splits a write into pieces of at most `size` bytes, in order. Pure. */
export function chunkForWrite(data: Uint8Array, size: number): Uint8Array[] {
  if (size < 1) throw new RangeError(`chunk size must be at least 1, got ${size}`);
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < data.length; at += size) chunks.push(data.subarray(at, Math.min(at + size, data.length)));
  return chunks;
}
