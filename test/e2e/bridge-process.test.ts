import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { runCommand, startProcess } from '../helpers/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'fb-e2e-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('the bridge starts on a fresh database, serves health, and SIGTERM drains an in-flight request then exits 0', async () => {
  const dbPath = join(dir, 'a', 'bridge.db');
  const p = await startProcess([], { SERVICE_DB_PATH: dbPath, SERVICE_LISTEN: '127.0.0.1:0' });
  const health = (await (await fetch(p.url + "/api/health")).json()) as { status: string };
  assert.is(health.status, 'ok');
  const key = readFileSync(join(dir, 'a', 'owner.key'), 'utf8').trim();

  // A request whose body is still arriving when SIGTERM lands must still complete.
  const url = new URL(p.url);
  const body = JSON.stringify({ label: 'in flight', role: 'viewer' });
  let sendRest!: () => void;
  const answered = new Promise<number>((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method: 'POST', path: '/api/auth/keys', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 5));
    sendRest = () => req.end(body.slice(5));
  });
  await new Promise((r) => setTimeout(r, 100));
  p.child.kill('SIGTERM');
  await p.waitFor('signal_received');
  await new Promise((r) => setTimeout(r, 300));
  sendRest();
  assert.is(await answered, 201, 'the in-flight request completed');
  assert.is(await p.exited, 0);
  assert.ok(p.lines.some((l) => l.event === 'bridge_stopped'));
  const wal = dbPath + '-wal';
  assert.ok(!existsSync(wal) || statSync(wal).size === 0, 'no hot journal left behind');
  const db = new DatabaseSync(dbPath, { readOnly: true });
  assert.is((db.prepare("SELECT count(*) AS n FROM api_keys WHERE label = 'in flight'").get() as { n: number }).n, 1);
  db.close();
});

test('keys create makes a working key offline and prints it once on stdout', async () => {
  const dbPath = join(dir, 'b', 'bridge.db');
  const r = runCommand(['keys', 'create', '--role', 'admin', '--label', 'cli'], { SERVICE_DB_PATH: dbPath });
  assert.is(r.status, 0, r.stderr);
  const key = r.stdout.trim();
  assert.match(key, /^fbb_/);
  assert.match(r.stderr, /shown only now/);
  const p = await startProcess([], { SERVICE_DB_PATH: dbPath, SERVICE_LISTEN: '127.0.0.1:0' });
  try {
    assert.not.ok(existsSync(join(dir, 'b', 'owner.key')), 'a database with a key gets no generated owner key');
    const res = await fetch(p.url + '/metrics', { headers: { authorization: `Bearer ${key}` } });
    assert.is(res.status, 200);
    assert.ok(!p.lines.some((l) => JSON.stringify(l).includes(key)), 'the key never reaches the log');
  } finally {
    p.child.kill('SIGTERM');
    assert.is(await p.exited, 0);
  }
});

test('usage errors exit 2 with the usage on stderr', () => {
  for (const args of [['bogus'], ['--no-such-flag'], ['keys', 'create', '--role', 'god', '--label', 'x'], ['keys', 'create', '--role', 'admin'], ['keys', 'destroy'], ['version', 'extra']]) {
    const r = runCommand(args, { SERVICE_DB_PATH: join(dir, 'usage', 'bridge.db') });
    assert.is(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /usage: fieldbridge/);
    assert.is(r.stdout, '');
  }
});

test('--help and version', () => {
  const help = runCommand(['--help']);
  assert.is(help.status, 0);
  assert.match(help.stdout, /commands:/);
  const v = runCommand(['version']);
  assert.is(v.status, 0);
  assert.match(v.stdout, /^fieldbridge \d+\.\d+\.\d+\nnode v24\.\d+\.\d+\nsqlite 3\.\d+\.\d+\narch (x64|arm64)\n$/);
});

test('a bad environment value stops the start with one line naming the variable', () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ SERVICE_LISTEN: 'not-an-address' }, /^fieldbridge: SERVICE_LISTEN: expected host:port/],
    [{ SERVICE_LISTEN: '127.0.0.1:70000' }, /SERVICE_LISTEN: expected a port from 0 to 65535/],
    [{ SERVICE_LOG_LEVEL: 'loud' }, /SERVICE_LOG_LEVEL: expected one of error, warn, info, debug, got "loud"/],
    [{ SERVICE_LOG_FORMAT: 'xml' }, /^fieldbridge: SERVICE_LOG_FORMAT: expected one of json, journald, pretty, or unset to choose by where the output goes, got "xml"$/m],
    [{ SERVICE_RETENTION_DAYS: '-1' }, /SERVICE_RETENTION_DAYS/],
    [{ SERVICE_RETENTION_DAYS: 'ten' }, /SERVICE_RETENTION_DAYS/],
  ];
  for (const [env, message] of cases) {
    const r = runCommand([], { SERVICE_DB_PATH: join(dir, 'env', 'bridge.db'), ...env });
    assert.is(r.status, 1, JSON.stringify(env));
    assert.match(r.stderr, message);
    assert.is(r.stderr.trim().split('\n').length, 1, 'one line');
  }
});

test('migrate brings a database to the latest schema and says so; a second run changes nothing', () => {
  const dbPath = join(dir, 'm', 'bridge.db');
  const first = runCommand(['migrate'], { SERVICE_DB_PATH: dbPath });
  assert.is(first.status, 0, first.stderr);
  assert.match(first.stdout, /schema version 0 -> \d+/);
  const second = runCommand(['migrate'], { SERVICE_DB_PATH: dbPath });
  assert.is(second.status, 0);
  assert.not.match(second.stdout, /->/);
  assert.match(second.stdout, /at schema version \d+ \(the latest this fieldbridge knows\)/);
});

test('a database written by a newer release is refused at start', () => {
  const dbPath = join(dir, 'c', 'bridge.db');
  assert.is(runCommand(['keys', 'create', '--role', 'owner', '--label', 'x'], { SERVICE_DB_PATH: dbPath }).status, 0);
  const db = new DatabaseSync(dbPath);
  db.exec('UPDATE schema_version SET version = 999');
  db.close();
  const r = runCommand([], { SERVICE_DB_PATH: dbPath, SERVICE_LISTEN: '127.0.0.1:0' });
  assert.is(r.status, 1);
  assert.match(r.stderr, /schema version 999 but this fieldbridge knows only up to \d+/);
});

test('a port already in use is a clear error, not a stack trace', async () => {
  const p = await startProcess([], { SERVICE_DB_PATH: join(dir, 'd', 'bridge.db'), SERVICE_LISTEN: '127.0.0.1:0' });
  try {
    const port = new URL(p.url).port;
    const r = runCommand([], { SERVICE_DB_PATH: join(dir, 'e', 'bridge.db'), SERVICE_LISTEN: `127.0.0.1:${port}` });
    assert.is(r.status, 1);
    assert.match(r.stderr, /SERVICE_LISTEN.*in use/);
    assert.not.match(r.stderr, /\n\s+at /);
  } finally {
    p.child.kill('SIGTERM');
    await p.exited;
  }
});

test.run();
