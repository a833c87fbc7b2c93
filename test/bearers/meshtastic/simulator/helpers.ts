import { connect, type Socket } from 'node:net';
import { SerialPort } from 'serialport';
import {
  type AdminMessage, decodeAdminMessage, decodeFromRadio, decodeRouting, encodeAdminMessage, encodeToRadioFrame, type FromRadio, fromRadioVariant,
  type MeshPacket, PORT_NUM, ROUTING_ERROR, StreamDecoder, type ToRadio,
} from '../../../../src/bearers/meshtastic/codec/messages.ts';
import type { MeshtasticDevice } from '../../../../src/bearers/meshtastic/simulator/device.ts';
import type { MeshtasticSimLink } from '../../../../src/bearers/meshtastic/simulator/link.ts';

// A test "host": speaks the stream API to a simulated device through the codec, over any
// carrier (direct calls, the in-process link, TCP, a pty), and keeps what the device sent.

export class TestHost {
  readonly decoder = new StreamDecoder();
  readonly heard: FromRadio[] = [];
  readonly textLines: string[] = [];
  badFrames = 0;
  closed = false;
  readonly #write: (bytes: Uint8Array) => void;
  readonly #close: () => Promise<void>;

  constructor(write: (bytes: Uint8Array) => void, close: () => Promise<void> = async () => {}) {
    this.#write = write;
    this.#close = close;
  }

  push(bytes: Uint8Array): void {
    for (const e of this.decoder.push(bytes)) {
      if (e.type === 'text') this.textLines.push(e.line);
      if (e.type !== 'frame') continue;
      const d = decodeFromRadio(e.payload);
      if (d.ok) this.heard.push(d.value);
      else this.badFrames++;
    }
  }

  send(message: ToRadio): void {
    this.#write(encodeToRadioFrame(message));
  }

  writeRaw(bytes: Uint8Array): void {
    this.#write(bytes);
  }

  take(): FromRadio[] {
    return this.heard.splice(0);
  }

  packets(): MeshPacket[] {
    return this.heard.flatMap((m) => (m.packet ? [m.packet] : []));
  }

  /** want_config_id with `nonce` (random by default); resolves with the frames up to and
   *  including config_complete_id (removed from `heard`). */
  async handshake(nonce = randomNonce(), timeoutMs = 5000): Promise<FromRadio[]> {
    this.send({ want_config_id: nonce });
    await waitFor(`config_complete_id ${nonce}`, () => this.heard.some((m) => m.config_complete_id === nonce), timeoutMs);
    const end = this.heard.findIndex((m) => m.config_complete_id === nonce);
    return this.heard.splice(0, end + 1);
  }

  close(): Promise<void> {
    return this.#close();
  }
}

/** A host wired to the device by direct calls (synchronous both ways). */
export function directHost(device: MeshtasticDevice): TestHost {
  const host = new TestHost((bytes) => device.fromHost(bytes));
  device.attachHost((bytes) => host.push(bytes));
  return host;
}

export function linkHost(link: MeshtasticSimLink): TestHost {
  const host = new TestHost((bytes) => void link.write(bytes), () => link.close());
  link.onData((chunk) => host.push(chunk));
  link.onClose(() => (host.closed = true));
  return host;
}

export async function tcpHost(device: string): Promise<TestHost & { socket: Socket }> {
  const m = /^tcp:\/\/([^:]+):(\d+)$/.exec(device);
  if (!m) throw new Error(`not a tcp device: ${device}`);
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect(Number(m[2]), m[1], () => resolve(s));
    s.once('error', reject);
  });
  const host = new TestHost(
    (bytes) => void socket.write(bytes),
    () => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.end(() => resolve()))),
  ) as TestHost & { socket: Socket };
  host.socket = socket;
  socket.on('data', (d) => host.push(d));
  socket.on('error', () => {});
  socket.on('close', () => (host.closed = true));
  return host;
}

export async function ptyHost(path: string): Promise<TestHost> {
  const port = new SerialPort({ path, baudRate: 115200, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(e) : resolve())));
  const host = new TestHost(
    (bytes) => void port.write(Buffer.from(bytes)),
    () => new Promise<void>((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve())),
  );
  port.on('data', (d: Buffer) => host.push(d));
  port.on('error', () => {});
  port.on('close', () => (host.closed = true));
  return host;
}

export async function waitFor(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Lets pending I/O run (for "nothing happened" checks). */
export const settle = (ms = 50) => new Promise((r) => setTimeout(r, ms));

/** Avoids 0, 1 (a heartbeat nonce with a side effect) and the special 69420/69421 (docs 2.7). */
export function randomNonce(): number {
  for (;;) {
    const n = Math.floor(Math.random() * 0xffffffff) >>> 0;
    if (n > 1 && n !== 69420 && n !== 69421) return n;
  }
}

let nextId = 0x1000;
export const freshId = () => ++nextId;

export function textPacket(to: number, text: string, options: { id?: number; wantAck?: boolean; hopLimit?: number; channel?: number } = {}): ToRadio {
  return {
    packet: {
      to,
      id: options.id ?? freshId(),
      channel: options.channel ?? 0,
      hop_limit: options.hopLimit ?? 3,
      want_ack: options.wantAck ?? false,
      decoded: { portnum: PORT_NUM.TEXT_MESSAGE_APP, payload: new TextEncoder().encode(text) },
    },
  };
}

export function adminPacket(own: number, admin: AdminMessage, options: { id?: number; wantResponse?: boolean; wantAck?: boolean } = {}): ToRadio {
  return {
    packet: {
      to: own,
      id: options.id ?? freshId(),
      want_ack: options.wantAck ?? false,
      decoded: { portnum: PORT_NUM.ADMIN_APP, payload: encodeAdminMessage(admin), want_response: options.wantResponse ?? false },
    },
  };
}

/** The routing answer in a packet: error name and request id, or null for other packets. */
export function routingOf(p: MeshPacket): { error: string; request_id: number; from: number; to: number } | null {
  if (p.decoded?.portnum !== PORT_NUM.ROUTING_APP) return null;
  const r = decodeRouting(p.decoded.payload ?? new Uint8Array(0));
  if (!r.ok) throw new Error(r.error);
  const code = r.value.error_reason ?? 0;
  const error = Object.entries(ROUTING_ERROR).find(([, v]) => v === code)?.[0] ?? String(code);
  return { error, request_id: p.decoded.request_id ?? 0, from: p.from ?? 0, to: p.to ?? 0 };
}

export function adminOf(p: MeshPacket): AdminMessage | null {
  if (p.decoded?.portnum !== PORT_NUM.ADMIN_APP) return null;
  const r = decodeAdminMessage(p.decoded.payload ?? new Uint8Array(0));
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

export const variants = (messages: FromRadio[]) => messages.map((m) => fromRadioVariant(m));
export const textOf = (p: MeshPacket) => new TextDecoder().decode(p.decoded?.payload ?? new Uint8Array(0));
