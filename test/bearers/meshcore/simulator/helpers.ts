import { connect, type Socket } from 'node:net';
import { SerialPort } from 'serialport';
import {
  type Command, decodeRadioMessage, encodeCommand, encodeFrame, FrameDecoder, type RadioMessage,
} from '../../../../src/bearers/meshcore/codec/index.ts';
import type { MeshCoreDevice } from '../../../../src/bearers/meshcore/simulator/device.ts';
import type { MeshCoreSimLink } from '../../../../src/bearers/meshcore/simulator/link.ts';

// A test "host": speaks the companion protocol to a simulated radio through our codec, over
// any carrier (direct calls, the in-process link, TCP, a pty), and keeps what the radio sent.

export class TestHost {
  readonly decoder = new FrameDecoder('from-radio');
  readonly heard: RadioMessage[] = [];
  closed = false;
  readonly #write: (bytes: Uint8Array) => void;
  readonly #close: () => Promise<void>;

  constructor(write: (bytes: Uint8Array) => void, close: () => Promise<void> = async () => {}) {
    this.#write = write;
    this.#close = close;
  }

  push(bytes: Uint8Array): void {
    for (const e of this.decoder.push(bytes)) if (e.type === 'frame') this.heard.push(decodeRadioMessage(e.body));
  }

  send(c: Command): void {
    this.#write(encodeFrame('to-radio', encodeCommand(c)));
  }

  writeRaw(bytes: Uint8Array): void {
    this.#write(bytes);
  }

  take(): RadioMessage[] {
    return this.heard.splice(0);
  }

  /** Waits for the first message of `type` (removed from `heard` with everything before it). */
  async next<T extends RadioMessage['type']>(type: T, timeoutMs = 3000): Promise<Extract<RadioMessage, { type: T }>> {
    await waitFor(type, () => this.heard.some((m) => m.type === type), timeoutMs);
    const i = this.heard.findIndex((m) => m.type === type);
    return this.heard.splice(0, i + 1)[i] as Extract<RadioMessage, { type: T }>;
  }

  /** Sends `c` and waits for the answer of one of `types`. */
  async request<T extends RadioMessage['type']>(c: Command, ...types: T[]): Promise<Extract<RadioMessage, { type: T }>> {
    const before = this.heard.length;
    this.send(c);
    await waitFor(types.join(' or '), () => this.heard.slice(before).some((m) => (types as string[]).includes(m.type)));
    const i = this.heard.findIndex((m, at) => at >= before && (types as string[]).includes(m.type));
    return this.heard.splice(i, 1)[0] as Extract<RadioMessage, { type: T }>;
  }

  /** SYNC_NEXT_MESSAGE until NO_MORE_MESSAGES; returns the messages. */
  async drain(): Promise<RadioMessage[]> {
    const got: RadioMessage[] = [];
    for (;;) {
      const m = await this.request({ type: 'SYNC_NEXT_MESSAGE' }, 'NO_MORE_MESSAGES', 'CONTACT_MSG_RECV', 'CONTACT_MSG_RECV_V3', 'CHANNEL_MSG_RECV', 'CHANNEL_MSG_RECV_V3');
      if (m.type === 'NO_MORE_MESSAGES') return got;
      got.push(m);
    }
  }

  close(): Promise<void> {
    return this.#close();
  }
}

/** A host wired to the radio by direct calls (synchronous both ways). */
export function directHost(device: MeshCoreDevice): TestHost {
  const host = new TestHost((bytes) => device.fromHost(bytes));
  device.attachHost((bytes) => host.push(bytes));
  return host;
}

export function linkHost(link: MeshCoreSimLink): TestHost {
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

export async function waitFor(what: string, condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const settle = (ms = 50) => new Promise((r) => setTimeout(r, ms));

/** The host's clock in seconds, as meshcore.js sends it. */
export const nowSeconds = () => Math.floor(Date.now() / 1000);
