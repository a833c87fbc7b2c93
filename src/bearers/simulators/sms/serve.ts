import { createServer, type Server, type Socket } from 'node:net';
import { serveDevicePty, type PtyServeOptions, type SimTransport } from '../pty.ts';
import type { SmsModem } from './modem.ts';

// Carries a simulated modem over a real byte stream, so a host (the bridge's driver, Gammu,
// minicom) drives it unchanged:
//  - TCP, like a serial-to-network adapter: one client at a time (a newcomer replaces the
//    previous one); the modem keeps its state and stored messages across clients;
//  - a pseudo-terminal pair made by socat, like a USB modem: the modem opens one end at
//    115200 baud, the host the other (a stable symlink, e.g. for Gammu's `device =`).
// Both can be taken down and brought up again (stop/start) to test reconnection.

export type { SimTransport };

export interface SmsTcpServeOptions {
  host?: string;
  /** 0 picks a free port (tests); kept across stop/start. */
  port?: number;
}

export async function serveSmsTcp(modem: SmsModem, options: SmsTcpServeOptions = {}): Promise<SimTransport> {
  const host = options.host ?? '127.0.0.1';
  let port = options.port ?? 0;
  let server: Server | null = null;
  let client: Socket | null = null;

  const dropClient = () => {
    if (!client) return;
    const c = client;
    client = null;
    modem.detachHost();
    c.destroy();
  };
  const onConnection = (socket: Socket) => {
    dropClient();
    client = socket;
    socket.setNoDelay(true);
    modem.attachHost((bytes) => {
      if (client === socket && !socket.destroyed) socket.write(bytes);
    });
    socket.on('data', (chunk) => {
      if (client === socket) modem.fromHost(chunk);
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
    dropLink: async () => dropClient(),
    stop,
    start,
    close: stop,
  };
}


export type SmsPtyServeOptions = PtyServeOptions;

/** A simulated modem on a pty pair (simulators/pty.ts), for the bridge and for Gammu. */
export function serveSmsPty(modem: SmsModem, options: PtyServeOptions): Promise<SimTransport> {
  return serveDevicePty(modem, options);
}
