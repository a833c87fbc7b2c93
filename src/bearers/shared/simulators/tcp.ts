import { createServer, type Server, type Socket } from 'node:net';
import { systemClock, type Clock, type TimerHandle } from '../../../lib/clock.ts';
import type { HostedDevice, SimTransport } from './pty.ts';

// Serves a simulated device over TCP, as a WiFi board or a serial-to-network adapter does: one
// client at a time (a newcomer replaces the previous, perhaps dead, one); optionally a client
// silent for `idleTimeoutMs` is dropped, as firmware does. Every simulator uses it.

export interface TcpServeOptions {
  host?: string;
  /** 0 picks a free port (tests); it is kept across stop/start. */
  port?: number;
  clock?: Clock;
  /** Drop a client that sent nothing for this long (no limit when absent). */
  idleTimeoutMs?: number;
  /** Told when a silent client is dropped. */
  onIdle?(): void;
}

export interface TcpTransport extends SimTransport {
  /** Ends the current client; `graceful` lets written bytes go out first (a reboot). */
  dropClient(graceful?: boolean): void;
}

export async function serveDeviceTcp(device: HostedDevice, options: TcpServeOptions & { port: number }): Promise<TcpTransport> {
  const host = options.host ?? '127.0.0.1';
  const clock = options.clock ?? systemClock;
  let port = options.port;
  let server: Server | null = null;
  let client: Socket | null = null;
  let idle: TimerHandle | null = null;

  const dropClient = (graceful = false) => {
    if (idle) clock.clearTimeout(idle);
    idle = null;
    if (!client) return;
    const c = client;
    client = null;
    device.detachHost();
    if (graceful) c.end(() => c.destroy());
    else c.destroy();
  };
  const armIdle = (socket: Socket) => {
    if (options.idleTimeoutMs === undefined) return;
    if (idle) clock.clearTimeout(idle);
    idle = clock.setTimeout(() => {
      if (client !== socket) return;
      options.onIdle?.();
      dropClient();
    }, options.idleTimeoutMs);
  };
  const onConnection = (socket: Socket) => {
    dropClient();
    client = socket;
    socket.setNoDelay(true);
    device.attachHost((bytes) => {
      if (client === socket && !socket.destroyed) socket.write(bytes);
    });
    armIdle(socket);
    socket.on('data', (chunk) => {
      if (client !== socket) return;
      armIdle(socket);
      device.fromHost(chunk);
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
      return `tcp://${host.includes(':') ? `[${host}]` : host}:${port}`;
    },
    dropClient,
    dropLink: async () => dropClient(),
    stop,
    start,
    close: stop,
  };
}
