import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { watchdogIntervalMs } from '../../src/lib/systemd.ts';

// The readiness path end to end: the real bridge process, a fake NOTIFY_SOCKET and a fake
// `systemd-notify` first on PATH that records its arguments (and, for --ready, whether the
// bridge already answers /api/health).

const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'fb-'));
const record = join(dir, 'notify.log');
writeFileSync(
  join(dir, 'systemd-notify'),
  `#!${process.execPath}
const { appendFileSync } = require('node:fs');
const args = process.argv.slice(2).join(' ');
const write = (extra) => appendFileSync(${JSON.stringify(record)}, JSON.stringify({ args, socket: process.env.NOTIFY_SOCKET, ...extra }) + '\\n');
if (!args.includes('--ready')) write({});
else fetch(process.env.FAKE_HEALTH_URL).then((r) => write({ health: r.status }), (e) => write({ health: String(e.cause?.code ?? e) }));
`,
);
chmodSync(join(dir, 'systemd-notify'), 0o755);

const records = (): Array<{ args: string; socket: string; health?: number | string }> =>
  existsSync(record) ? readFileSync(record, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

async function waitFor(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 25))) if (check()) return;
  assert.unreachable(`timed out waiting for ${what}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function runBridge(extraEnv: Record<string, string>): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: `${dir}:${process.env.PATH}`,
    HOME: dir,
    SERVICE_DB_PATH: join(dir, `bridge-${port}.db`),
    SERVICE_LISTEN: `127.0.0.1:${port}`,
    SERVICE_LOG_FORMAT: 'json',
    FAKE_HEALTH_URL: `http://127.0.0.1:${port}/api/health`,
    ...extraEnv,
  };
  const child = spawn(process.execPath, [join(root, 'src', 'main.ts'), 'bridge'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  await waitFor('bridge_listening', () => output.includes('"bridge_listening"'));
  return { child, output: () => output, exited };
}

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('the watchdog period is half of WATCHDOG_USEC, only for our own pid', () => {
  assert.is(watchdogIntervalMs({ WATCHDOG_USEC: '30000000' }), 15_000);
  assert.is(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '42' }, 42), 15_000);
  assert.is(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '41' }, 42), null);
  assert.is(watchdogIntervalMs({ WATCHDOG_USEC: '1000' }), 100, 'floored: never a tight spawn loop');
  for (const bad of [undefined, '', '0', '-5', 'abc', 'Infinity']) assert.is(watchdogIntervalMs({ WATCHDOG_USEC: bad }), null, `WATCHDOG_USEC=${bad}`);
});

test('under systemd: --ready once the API answers, WATCHDOG=1 repeats, STOPPING=1 on SIGTERM, exit 0', async () => {
  const socket = join(dir, 'notify.sock');
  const bridge = await runBridge({ NOTIFY_SOCKET: socket, WATCHDOG_USEC: '400000' });
  await waitFor('--ready', () => records().some((r) => r.args.startsWith('--ready')));
  const ready = records().find((r) => r.args.startsWith('--ready'))!;
  assert.is(ready.args, '--ready --status=serving');
  assert.is(ready.health, 200, 'the API answered when readiness was sent');
  assert.is(ready.socket, socket, 'systemd-notify gets NOTIFY_SOCKET');
  await waitFor('three watchdog pings', () => records().filter((r) => r.args === 'WATCHDOG=1').length >= 3);
  assert.is(records().filter((r) => r.args.startsWith('--ready')).length, 1, 'readiness is sent once');

  bridge.child.kill('SIGTERM');
  assert.is(await bridge.exited, 0, bridge.output());
  await waitFor('STOPPING=1', () => records().some((r) => r.args === 'STOPPING=1'), 3000);
  const pingsAtExit = records().filter((r) => r.args === 'WATCHDOG=1').length;
  await new Promise((r) => setTimeout(r, 500));
  assert.is(records().filter((r) => r.args === 'WATCHDOG=1').length, pingsAtExit, 'no pings after exit');
  assert.not.match(bridge.output(), 'systemd_notify_failed');
});

test('without NOTIFY_SOCKET nothing is sent', async () => {
  rmSync(record, { force: true });
  const bridge = await runBridge({ WATCHDOG_USEC: '400000' });
  await new Promise((r) => setTimeout(r, 600));
  bridge.child.kill('SIGTERM');
  assert.is(await bridge.exited, 0);
  assert.equal(records(), []);
});

test('a missing systemd-notify is logged once as a warning, and the bridge keeps serving', async () => {
  const bridge = await runBridge({ NOTIFY_SOCKET: join(dir, 'notify.sock'), WATCHDOG_USEC: '400000', PATH: '/nonexistent' });
  await new Promise((r) => setTimeout(r, 800));
  const health = await fetch(JSON.parse(bridge.output().split('\n').find((l) => l.includes('"bridge_listening"'))!).url + '/api/health');
  assert.is(health.status, 200);
  bridge.child.kill('SIGTERM');
  assert.is(await bridge.exited, 0);
  assert.is(bridge.output().split('systemd_notify_failed').length - 1, 1, bridge.output());
});

test.run();
