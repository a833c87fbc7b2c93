import { connect, type Socket } from 'node:net';
import { systemClock, type Clock } from '../../../lib/clock.ts';
import { DeviceError } from '../../device-error.ts';
import { EventLink, writeDone } from './link-events.ts';
import type { Link } from './link.ts';

// A Link over TCP to a WiFi board (RNode firmware listens on 7633, one client; docs/protocols/rnode.md
// 1.1). TCP_NODELAY because KISS frames are small and latency matters more than packing.
// Keepalive starts probing after 5 s idle as Reticulum does; Node sets only the idle time, not
// the 2 s interval, 12 probes or TCP_USER_TIMEOUT 24 s, so a silently dead peer is noticed by
// the driver's own traffic: the RNode driver's detect request after 3.5 s of silence
// (docs/protocols/rnode.md 1.1 "TCP keep-alive") either gets an answer or fails the write.

export const KEEPALIVE_IDLE_MS = 5_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export interface TcpLinkOptions {
  clock?: Clock;
  connectTimeoutMs?: number;
  report?: (error: unknown) => void;
}

export function openTcpLink(host: string, port: number, options: TcpLinkOptions = {}): Promise<Link> {
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const description = `tcp://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, noDelay: true, keepAlive: true, keepAliveInitialDelay: KEEPALIVE_IDLE_MS });
    const timer = clock.setTimeout(() => {
      socket.destroy();
      reject(new DeviceError('ERR_TCP_CONNECT', `${description} did not answer within ${timeoutMs} ms (is the board on this network?)`, { retryable: true }));
    }, timeoutMs);
    const onError = (error: NodeJS.ErrnoException) => {
      clock.clearTimeout(timer);
      socket.destroy();
      reject(new DeviceError('ERR_TCP_CONNECT', `connecting to ${description} failed: ${describeSocketError(error)}`, { retryable: true, facts: { port: description, systemError: error.code } }));
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      clock.clearTimeout(timer);
      socket.off('error', onError);
      resolve(new TcpLink(socket, description, options.report));
    });
  });
}

class TcpLink extends EventLink implements Link {
  readonly kind = 'tcp' as const;
  readonly description: string;
  readonly #socket: Socket;
  #reason: string | null = null;

  constructor(socket: Socket, description: string, report: ((error: unknown) => void) | undefined) {
    super(report);
    this.#socket = socket;
    this.description = description;
    socket.on('data', (chunk: Buffer) => this.events.emitData(chunk));
    socket.on('end', () => {
      this.#reason ??= `${description} closed the connection`;
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.#reason ??= `${description}: ${describeSocketError(error)}`;
    });
    socket.on('close', () => this.events.emitClose(this.#reason ?? `${description} closed`));
  }

  write(data: Uint8Array): Promise<void> {
    if (this.events.closed || this.#socket.destroyed || !this.#socket.writable) return Promise.reject(this.events.closedError(this.description));
    return writeDone(this.description, (done) => this.#socket.write(data, done));
  }

  close(): Promise<void> {
    if (this.events.closed) return Promise.resolve();
    this.#reason ??= 'closed by the bridge';
    return new Promise((resolve) => {
      this.#socket.once('close', () => resolve());
      this.#socket.destroy();
    });
  }
}

function describeSocketError(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      // Said for every kind: a WiFi radio, a modem behind a serial-to-network adapter, a simulator.
      return 'connection refused (nothing listens on that port: is the device on the network, and is this its port?)';
    case 'ECONNRESET':
      return 'connection reset by the board';
    case 'ETIMEDOUT':
      return 'the board stopped answering (keepalive or connect timed out)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host name not found (${error.code})`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `no route to the board (${error.code})`;
    case 'EPIPE':
      return 'the board closed the connection while we were writing';
    default:
      return error.message;
  }
}
