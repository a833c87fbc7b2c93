import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import type { SimTransport } from '../rnode/serve.ts';
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

export interface SmsPtyServeOptions {
  /** Where the host's end appears (a symlink socat keeps to the current /dev/pts/N). */
  path: string;
}

export async function serveSmsPty(modem: SmsModem, options: SmsPtyServeOptions): Promise<SimTransport> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-sms-pty-'));
  const devicePath = join(dir, 'device');
  let socat: ChildProcess | null = null;
  let port: SerialPort | null = null;

  const start = async () => {
    if (socat) return;
    const child = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${devicePath}`, `pty,raw,echo=0,link=${options.path}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    socat = child;
    await new Promise<void>((resolve, reject) => {
      let log = '';
      const timer = setTimeout(() => reject(new Error(`socat did not start: ${log.trim()}`)), 5000);
      child.stderr!.on('data', (d) => {
        log += d;
        if (log.includes('starting data transfer loop')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`socat could not run (is it installed? scripts/setup-services.sh installs it): ${e.message}`));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`socat exited with ${code}: ${log.trim()}`));
      });
    });
    child.stderr!.resume();
    const p = new SerialPort({ path: devicePath, baudRate: 115200, autoOpen: false });
    await new Promise<void>((resolve, reject) => p.open((e) => (e ? reject(e) : resolve())));
    port = p;
    p.on('data', (chunk: Buffer) => modem.fromHost(chunk));
    p.on('error', () => {});
    modem.attachHost((bytes) => {
      if (port === p && p.isOpen) p.write(Buffer.from(bytes));
    });
  };
  const stop = async () => {
    modem.detachHost();
    const p = port;
    port = null;
    if (p?.isOpen) await new Promise<void>((resolve) => p.close(() => resolve()));
    const child = socat;
    socat = null;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    }
  };
  await start();
  return {
    device: options.path,
    dropLink: async () => {
      await stop();
      await start();
    },
    stop,
    start,
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
