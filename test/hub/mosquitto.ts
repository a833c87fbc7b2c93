import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A private Mosquitto for tests that stop and start the broker or use a shared subscription
// group: the machine's broker (TEST_MQTT_URL) is shared with other test files running at the
// same time. Persistence is on, so a persistent session (the hub's) survives a restart, as it
// does on a production broker configured per docs/hub.md.

export interface PrivateBroker {
  url: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops the broker and removes its folder. */
  dispose(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcpConnect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** `extra`: more mosquitto.conf lines (e.g. queue limits). */
export async function privateBroker(extra: string[] = []): Promise<PrivateBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-'));
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(
    conf,
    [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'persistence true', `persistence_location ${dir}/`, 'autosave_interval 1', 'user root', 'log_dest none', ...extra, ''].join('\n'),
  );
  let child: ChildProcess | undefined;
  const broker: PrivateBroker = {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    start: async () => {
      child = spawn('mosquitto', ['-c', conf], { stdio: 'ignore' });
      const deadline = Date.now() + 10_000;
      while (!(await canConnect(port))) {
        if (Date.now() > deadline) throw new Error(`mosquitto did not listen on ${port}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: async () => {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.kill('SIGTERM');
      });
    },
    dispose: async () => {
      await broker.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await broker.start();
  return broker;
}

/** Polls until check() is true; fails with the message after timeoutMs. */
export async function eventually(check: () => boolean | Promise<boolean>, message: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${message}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
