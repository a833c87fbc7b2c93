import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { keyLookup } from '../../src/auth/secrets.ts';
import { openHubStore } from '../../src/hub/store/store.ts';

// `fieldbridge hub ...` as a real process, the way an operator runs it.

const dir = mkdtempSync(join(tmpdir(), 'fb-'));
const dbPath = join(dir, 'hub.db');
const main = join(import.meta.dirname, '..', '..', 'src', 'main.ts');
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [main, 'hub', ...args], { encoding: 'utf8', env: { ...process.env, HUB_SQLITE_PATH: dbPath, ...env }, timeout: 30_000 });

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('create-key never creates a database: a missing or non-hub file is refused, naming the path it looked at', () => {
  const missing = join(dir, 'nowhere', 'hub.db');
  const r = run(['create-key', '--role', 'owner', '--label', 'x'], { HUB_SQLITE_PATH: missing });
  assert.is(r.status, 1, r.stderr);
  assert.is(r.stdout, '', 'no key printed');
  assert.match(r.stderr, `no hub database at ${missing} (HUB_SQLITE_PATH)`);
  assert.match(r.stderr, 'never creates one');
  assert.not.ok(existsSync(missing), 'nothing created');
  // A file that is not a hub's (the bridge's database, an empty file) is not turned into one.
  const other = join(dir, 'bridge.db');
  const db = new DatabaseSync(other);
  db.exec('CREATE TABLE api_keys (id TEXT)');
  db.close();
  writeFileSync(join(dir, 'empty.db'), '');
  for (const path of [other, join(dir, 'empty.db')]) {
    const o = run(['create-key', '--role', 'owner', '--label', 'x'], { HUB_SQLITE_PATH: path });
    assert.is(o.status, 1, o.stderr);
    assert.match(o.stderr, `${path} (HUB_SQLITE_PATH) is not a hub database`);
  }
  // Unset: the default path is named as such (only checked where no hub lives at the default).
  if (!existsSync('/data/hub.db')) {
    const d = run(['create-key', '--role', 'owner', '--label', 'x'], { HUB_SQLITE_PATH: '' });
    assert.is(d.status, 1, d.stderr);
    assert.match(d.stderr, 'no hub database at /data/hub.db (HUB_SQLITE_PATH is unset, so the default /data/hub.db)');
    assert.not.ok(existsSync('/data/hub.db'));
  }
});

test('create-key prints the key once on stdout and creates a named tenant', async () => {
  // The hub has run once: its database exists.
  await (await openHubStore({ sqlitePath: dbPath })).close();
  const r = run(['create-key', '--role', 'owner', '--label', 'onboarding', '--tenant', 'acme']);
  assert.is(r.status, 0, r.stderr);
  const key = r.stdout.trim();
  assert.match(key, /^fbh_[a-z2-9]{12}_[A-Za-z0-9_-]{43}$/);
  assert.match(r.stderr, 'in tenant acme');
  const db = new DatabaseSync(dbPath);
  const row = db.prepare('SELECT tenant_id, role, key_hash FROM api_keys WHERE key_lookup = ?').get(keyLookup('fbh_', key)) as Record<string, string>;
  const tenants = db.prepare('SELECT id FROM tenants ORDER BY id').all().map((t) => t.id);
  db.close();
  assert.equal({ tenant: row.tenant_id, role: row.role }, { tenant: 'acme', role: 'owner' });
  assert.is.not(row.key_hash, key);
  assert.equal(tenants, ['acme']);
  const second = run(['create-key', '--role', 'admin', '--label', 'x']);
  assert.is(second.status, 0);
});

test('bad arguments exit 2 and say what is wrong', () => {
  for (const [args, text] of [
    [['create-key', '--role', 'root', '--label', 'x'], '--role must be'],
    [['create-key', '--role', 'owner'], '--label is required'],
    [['create-key', '--role', 'owner', '--label', 'x', '--tenant', 'a/b'], '--tenant must be'],
    [['rotate'], 'unknown action'],
    [['--role', 'owner'], 'belong to "hub create-key"'],
  ] as Array<[string[], string]>) {
    const r = run(args);
    assert.is(r.status, 2, args.join(' '));
    assert.match(r.stderr, text);
  }
});

test('a bad environment value stops the start with one line naming the variable', () => {
  for (const [name, value] of [['HUB_LISTEN', 'nowhere'], ['HUB_MQTT_URL', 'http://broker'], ['HUB_MQTT_SHARED', 'yes'], ['HUB_ACCEPT_UNENROLLED', 'true'], ['HUB_LOG_LEVEL', 'loud'], ['HUB_LOG_FORMAT', 'xml'], ['HUB_DATABASE_URL', 'mysql://x']]) {
    const r = run([], { [name]: value });
    assert.is(r.status, 1, name);
    assert.is(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, name);
  }
});

test('an altered recorded checksum stops the hub, non-zero, naming the migration', () => {
  const db = new DatabaseSync(dbPath);
  db.prepare("UPDATE hub_migrations SET checksum = 'edited' WHERE version = 1").run();
  db.close();
  const r = run([], { HUB_LISTEN: '127.0.0.1:0', HUB_MQTT_URL: 'mqtt://127.0.0.1:1' });
  assert.is(r.status, 1);
  assert.match(r.stderr, 'hub migration 1 (tenants_and_api_keys) differs from the one applied');
});

test.run();
