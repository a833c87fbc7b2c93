import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { HostedDevice } from '../../../src/bearers/shared/simulators/pty.ts';

// Test side of the BlueZ stand-in (bluez_standin.py): a private dbus-daemon (Debian's `dbus`)
// listening on a socket path of our choosing, the stand-in exporting org.bluez objects on it,
// and small TCP relays through which the stand-in's GATT characteristics reach a simulator
// (attachHost/fromHost/detachHost). The bridge finds the bus through DBUS_SYSTEM_BUS_ADDRESS.

const STANDIN = join(import.meta.dirname, 'bluez_standin.py');
// Debian's python3-dbus and python3-gi are for the system interpreter (scripts/setup-services.sh).
const PYTHON = '/usr/bin/python3';

export interface AdapterSpec {
  name: string;
  address: string;
  powered?: boolean;
}

export interface DeviceSpec {
  address: string;
  name?: string;
  alias?: string;
  adapter?: string;
  paired?: boolean;
  bonded?: boolean;
  trusted?: boolean;
  profile?: 'nus' | 'meshtastic' | 'meshcore';
  /** host:port of the relay that carries this board's bytes (relayTo()). */
  relay?: string;
  mtu?: number;
  /** No Bonded property, as BlueZ before 5.67. */
  old_bluez?: boolean;
}

export const DEFAULT_ADAPTER: AdapterSpec = { name: 'hci0', address: '00:1A:7D:DA:71:13' };

/** A dbus-daemon of its own on `dir`/system_bus_socket. */
export class PrivateBus {
  readonly dir: string;
  readonly socketPath: string;
  readonly address: string;
  #daemon: ChildProcess | null = null;

  constructor(dir = mkdtempSync(join(tmpdir(), 'fb-dbus-'))) {
    this.dir = dir;
    this.socketPath = join(dir, 'system_bus_socket');
    this.address = `unix:path=${this.socketPath}`;
    // A bus like the session bus: anyone may own any name (no policy file to install).
    writeFileSync(
      join(dir, 'bus.conf'),
      `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>${this.address}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    <allow user="*"/>
  </policy>
</busconfig>
`,
    );
  }

  async start(): Promise<void> {
    const daemon = spawn('dbus-daemon', ['--nofork', '--nopidfile', `--config-file=${join(this.dir, 'bus.conf')}`, '--print-address'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#daemon = daemon;
    await new Promise<void>((resolve, reject) => {
      let err = '';
      daemon.stderr!.on('data', (d) => (err += d));
      daemon.stdout!.once('data', () => resolve());
      daemon.once('exit', (code) => reject(new Error(`dbus-daemon exited with ${code}: ${err}`)));
      daemon.once('error', reject);
    });
  }

  async stop(): Promise<void> {
    const daemon = this.#daemon;
    this.#daemon = null;
    if (!daemon || daemon.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      daemon.once('exit', () => resolve());
      daemon.kill('SIGTERM');
    });
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** bluez_standin.py on a bus; command() sends one JSON line and waits for its answer. */
export class BluezStandin {
  readonly #config: { bus: string; adapters: AdapterSpec[]; devices: DeviceSpec[] };
  readonly #dir: string;
  #process: ChildProcess | null = null;
  #answers: Array<(line: string) => void> = [];
  stderr = '';

  constructor(bus: PrivateBus, config: { adapters?: AdapterSpec[]; devices: DeviceSpec[] }) {
    this.#dir = bus.dir;
    this.#config = { bus: bus.address, adapters: config.adapters ?? [DEFAULT_ADAPTER], devices: config.devices };
  }

  async start(): Promise<void> {
    const file = join(this.#dir, `standin-${process.pid}-${Date.now()}.json`);
    writeFileSync(file, JSON.stringify(this.#config));
    const child = spawn(PYTHON, [STANDIN, file], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.#process = child;
    child.stderr!.on('data', (d) => (this.stderr += d));
    const lines = createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`bluez stand-in exited with ${code}: ${this.stderr}`));
      child.once('exit', onExit);
      lines.once('line', (line) => {
        child.off('exit', onExit);
        if (line === 'ready') resolve();
        else reject(new Error(`bluez stand-in said ${line}`));
        lines.on('line', (l) => this.#answers.shift()?.(l));
      });
    });
  }

  async command(cmd: Record<string, unknown>): Promise<{ ok: boolean; counters: Record<string, { count: number; max: number }>; error?: string }> {
    const child = this.#process;
    if (!child) throw new Error('the stand-in is not running');
    const answer = new Promise<string>((resolve) => this.#answers.push(resolve));
    child.stdin!.write(JSON.stringify(cmd) + '\n');
    const parsed = JSON.parse(await answer);
    if (!parsed.ok) throw new Error(`stand-in: ${parsed.error}`);
    return parsed;
  }

  /** Ends the stand-in as a crashed or restarted bluetoothd would end. */
  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = null;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
}

/**
 * A TCP relay the stand-in connects to when BlueZ "connects" to the board: the simulator hears
 * what the host wrote and its answers go back. One client at a time, like a BLE peripheral.
 * `inject` writes raw bytes toward the host (half a frame before a drop, say).
 */
export class Relay {
  readonly #server: Server;
  readonly #device: HostedDevice;
  #client: Socket | null = null;
  port = 0;

  constructor(device: HostedDevice) {
    this.#device = device;
    this.#server = createServer((socket) => this.#attach(socket));
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get connected(): boolean {
    return this.#client !== null;
  }

  async listen(port = this.port): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.#server.address() as { port: number }).port;
  }

  /** The board goes out of range: the link drops and new connections are refused. */
  async stop(): Promise<void> {
    this.drop();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  drop(): void {
    const client = this.#client;
    this.#client = null;
    if (client) {
      this.#device.detachHost();
      client.destroy();
    }
  }

  inject(bytes: Uint8Array): void {
    this.#client?.write(bytes);
  }

  #attach(socket: Socket): void {
    this.drop();
    this.#client = socket;
    socket.setNoDelay(true);
    this.#device.attachHost((bytes) => {
      if (this.#client === socket && !socket.destroyed) socket.write(bytes);
    });
    socket.on('data', (chunk) => {
      if (this.#client === socket) this.#device.fromHost(chunk);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.#client === socket) {
        this.#client = null;
        this.#device.detachHost();
      }
    });
  }
}
