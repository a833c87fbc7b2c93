import { createServer, type Server, type Socket } from 'node:net';
import { systemClock, type Clock, type TimerHandle } from '../../../lib/clock.ts';
import { serveDevicePty, type PtyServeOptions, type SimTransport } from '../pty.ts';
import type { RNodeSimulator } from './simulator.ts';

// Carries a simulated RNode over a real byte stream, so the bridge's driver runs unchanged:
//  - TCP, like a WiFi RNode (docs/protocols/rnode.md 1.1): one client; the device drops a client it has
//    heard nothing from for 6500 ms (WR_READ_TIMEOUT_MS), which the host's 3.5 s detect
//    keep-alive prevents;
//  - a pseudo-terminal pair made by socat: the simulator opens one end with serialport at
//    115200 baud, the bridge opens the other (a stable symlink) with the real binding.
// Both can be taken down and brought up again (stop/start) to test reconnection.

export const WR_READ_TIMEOUT_MS = 6500;

export type { PtyServeOptions, SimTransport };

export interface TcpServeOptions {
  host?: string;
  /** 0 picks a free port (tests); it is kept across stop/start. */
  port?: number;
  clock?: Clock;
  readTimeoutMs?: number;
}

export async function serveRNodeTcp(sim: RNodeSimulator, options: TcpServeOptions = {}): Promise<SimTransport> {
  const host = options.host ?? '127.0.0.1';
  const clock = options.clock ?? systemClock;
  const readTimeoutMs = options.readTimeoutMs ?? WR_READ_TIMEOUT_MS;
  let port = options.port ?? 7633;
  let server: Server | null = null;
  let client: Socket | null = null;
  let idle: TimerHandle | null = null;

  const dropClient = () => {
    if (idle) clock.clearTimeout(idle);
    idle = null;
    if (client) {
      const c = client;
      client = null;
      sim.detachHost();
      c.destroy();
    }
  };
  const armIdle = (socket: Socket) => {
    if (idle) clock.clearTimeout(idle);
    idle = clock.setTimeout(() => {
      if (client === socket) {
        sim.emit('client-timeout');
        dropClient();
      }
    }, readTimeoutMs);
  };
  const onConnection = (socket: Socket) => {
    // One client, like the firmware: a newcomer replaces a previous (perhaps dead) one.
    dropClient();
    client = socket;
    socket.setNoDelay(true);
    sim.attachHost((bytes) => {
      if (client === socket && !socket.destroyed) socket.write(bytes);
    });
    armIdle(socket);
    socket.on('data', (chunk) => {
      if (client !== socket) return;
      armIdle(socket);
      sim.fromHost(chunk);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (client === socket) dropClient();
    });
  };
  const start = async () => {
    if (server) return;
    const s = createServer(onConnection);
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, host, () => resolve());
    });
    port = (s.address() as { port: number }).port;
    server = s;
  };
  const stop = async () => {
    dropClient();
    const s = server;
    server = null;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await start();
  return {
    get device() {
      return `tcp://${host}:${port}`;
    },
    dropLink: async () => dropClient(),
    stop,
    start,
    close: stop,
  };
}


/** The simulated RNode on a pty pair (simulators/pty.ts). */
export function serveRNodePty(sim: RNodeSimulator, options: PtyServeOptions): Promise<SimTransport> {
  return serveDevicePty(sim, options);
}
