import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand, startProcess } from '../helpers/process.ts';

// docs/api.md 4.8: SERVICE_RNODE_PORT and SERVICE_RNODE_PRESET seed the RNode interface on a fresh
// database only; afterwards the stored row is authoritative and the variables are ignored.

const dir = mkdtempSync(join(tmpdir(), 'fb-seed-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

async function rnodeInterfaces(env: Record<string, string>) {
  const p = await startProcess([], env);
  try {
    const key = readFileSync(join(dir, 'owner.key'), 'utf8').trim();
    const r = await fetch(p.url + '/api/routing/ifaces', { headers: { authorization: `Bearer ${key}` } });
    return { items: ((await r.json()) as { items: Array<{ name: string; device: string; settings: { preset: string } }> }).items, lines: p.lines };
  } finally {
    p.child.kill('SIGTERM');
    assert.is(await p.exited, 0);
  }
}

test('a fresh database is seeded; the second start ignores the variables and says so', async () => {
  // Nothing listens on port 9: the radio is missing, which must not stop the bridge.
  const env = { SERVICE_DB_PATH: join(dir, 'bridge.db'), SERVICE_LISTEN: '127.0.0.1:0', SERVICE_RNODE_PORT: 'tcp://127.0.0.1:9', SERVICE_RNODE_PRESET: 'eu-868' };
  const first = await rnodeInterfaces(env);
  assert.equal(first.items.map((i) => [i.name, i.device, i.settings.preset]), [['rnode', 'tcp://127.0.0.1:9', 'eu-868']]);
  assert.ok(first.lines.some((l) => l.event === 'rnode_seeded'));
  const second = await rnodeInterfaces({ ...env, SERVICE_RNODE_PORT: 'tcp://127.0.0.1:10', SERVICE_RNODE_PRESET: 'us-915' });
  assert.equal(second.items.map((i) => [i.name, i.device, i.settings.preset]), [['rnode', 'tcp://127.0.0.1:9', 'eu-868']]);
  assert.ok(second.lines.some((l) => l.event === 'rnode_seed_ignored'));
});

test('a bad seeding value stops the first start with a message naming the variable', () => {
  const base = { SERVICE_DB_PATH: join(dir, 'bad', 'bridge.db'), SERVICE_LISTEN: '127.0.0.1:0' };
  const badPort = runCommand([], { ...base, SERVICE_RNODE_PORT: 'ftp://radio' });
  assert.is(badPort.status, 1);
  assert.match(badPort.stderr, /^fieldbridge: SERVICE_RNODE_PORT: expected a port value/);
  const badPreset = runCommand([], { ...base, SERVICE_RNODE_PORT: 'auto', SERVICE_RNODE_PRESET: 'eu-433' });
  assert.is(badPreset.status, 1);
  assert.match(badPreset.stderr, /SERVICE_RNODE_PRESET: expected one of us-915, eu-868, au-915, ism-433, got "eu-433"/);
});

test.run();
