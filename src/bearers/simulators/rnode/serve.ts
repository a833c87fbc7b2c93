import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import { systemClock, type Clock, type TimerHandle } from '../../../lib/clock.ts';
import type { RNodeSimulator } from './simulator.ts';

// Carries a simulated RNode over a real byte stream, so the bridge's driver runs unchanged:
//  - TCP, like a WiFi RNode (docs/protocols/rnode.md 1.1): one client; the device drops a client it has
//    heard nothing from for 6500 ms (WR_READ_TIMEOUT_MS), which the host's 3.5 s detect
//    keep-alive prevents;
//  - a pseudo-terminal pair made by socat: the simulator opens one end with serialport at
//    115200 baud, the bridge opens the other (a stable symlink) with the real binding.
// Both can be taken down and brought up again (stop/start) to test reconnection.

export const WR_READ_TIMEOUT_MS = 6500;

export interface SimTransport {
  /** "tcp://127.0.0.1:7633" or the pty path: the port value the bridge uses. */
  readonly device: string;
  /** Fault: drops the current link (TCP: closes the client; pty: the pair vanishes and
   *  comes back as a new device under the same path). */
  dropLink(): Promise<void>;
  /** Takes the device away until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

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

export interface PtyServeOptions {
  /** Where the bridge's end appears (a symlink socat keeps to the current /dev/pts/N). */
  path: string;
}

export async function serveRNodePty(sim: RNodeSimulator, options: PtyServeOptions): Promise<SimTransport> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-rnode-pty-'));
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
        reject(new Error(`socat could not run (is it installed?): ${e.message}`));
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
    p.on('data', (chunk: Buffer) => sim.fromHost(chunk));
    p.on('error', () => {});
    sim.attachHost((bytes) => {
      if (port === p && p.isOpen) p.write(Buffer.from(bytes));
    });
  };
  const stop = async () => {
    sim.detachHost();
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
