import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readlinkSync, renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort } from 'serialport';

// Serves a simulated device on a pseudo-terminal pair made by socat, so the bridge (or an
// independent client such as Gammu) opens `path` through the real serial binding. Every
// simulator's device speaks to its host the same way: attachHost(write), fromHost(bytes),
// detachHost().

/** A simulated device's host side. */
export interface HostedDevice {
  attachHost(write: (bytes: Uint8Array) => void): void;
  detachHost(): void;
  fromHost(bytes: Uint8Array): void;
}

/** A running simulator transport: what tests and `fieldbridge sim` hold. */
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

/** A device whose events a transport follows while it serves it (a simulated fault). */
export interface EventfulDevice {
  on(event: string, listener: () => void): unknown;
  off(event: string, listener: () => void): unknown;
}

/** `transport`, following the device's `events` until it closes. */
export function followEvents(transport: SimTransport, device: EventfulDevice, events: Record<string, () => void>): SimTransport {
  for (const [event, listener] of Object.entries(events)) device.on(event, listener);
  return {
    ...transport,
    device: transport.device,
    close: async () => {
      for (const [event, listener] of Object.entries(events)) device.off(event, listener);
      await transport.close();
    },
  };
}

export interface PtyServeOptions {
  /** Where the host's end appears (a symlink socat keeps to the current /dev/pts/N). */
  path: string;
  baudRate?: number;
}

export async function serveDevicePty(device: HostedDevice, options: PtyServeOptions): Promise<SimTransport> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-sim-pty-'));
  const devicePath = join(dir, 'device');
  // socat links the host's end here; `path` is pointed at it only once the device side is
  // open, and taken away before socat stops. A host that opens `path` early finds nothing
  // (and retries) instead of a pair nobody listens on, or a stale link to a /dev/pts number
  // that a later pair has reused.
  const hostPath = join(dir, 'host');
  let socat: ChildProcess | null = null;
  let port: SerialPort | null = null;

  const start = async () => {
    if (socat) return;
    const child = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${devicePath}`, `pty,raw,echo=0,link=${hostPath}`], {
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
    const p = new SerialPort({ path: devicePath, baudRate: options.baudRate ?? 115200, autoOpen: false });
    await new Promise<void>((resolve, reject) => p.open((e) => (e ? reject(e) : resolve())));
    port = p;
    p.on('data', (chunk: Buffer) => device.fromHost(chunk));
    p.on('error', () => {});
    device.attachHost((bytes) => {
      if (port === p && p.isOpen) p.write(Buffer.from(bytes));
    });
    publish(readlinkSync(hostPath));
  };
  /** Points `path` at the host's /dev/pts/N in one step (a rename within its directory). */
  const publish = (pts: string) => {
    const temporary = `${options.path}.${process.pid}.tmp`;
    rmSync(temporary, { force: true });
    symlinkSync(pts, temporary);
    renameSync(temporary, options.path);
  };
  const unpublish = () => {
    try {
      unlinkSync(options.path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  };
  const stop = async () => {
    unpublish();
    device.detachHost();
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
  try {
    await start();
  } catch (error) {
    // A half-started pair (socat up, the port not opened) would keep the process alive.
    await stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
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
