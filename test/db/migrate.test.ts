import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bridgeMigrations } from '../../src/bridge/migrations.ts';
import { currentSchemaVersion, migrate, migrationChecksum, type Migration } from '../../src/db/migrate.ts';
import { openSqlite } from '../../src/db/sqlite.ts';
import { StartupError } from '../../src/lib/errors.ts';

const LOCK = join(import.meta.dirname, 'migrations.lock.json');
const dir = mkdtempSync(join(tmpdir(), 'fb-migrate-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const sample: Migration[] = [
  { version: 1, name: 'one', sql: 'CREATE TABLE a (x INTEGER);' },
  { version: 2, name: 'two', sql: 'CREATE TABLE b (y INTEGER);' },
  { version: 3, name: 'three', sql: 'ALTER TABLE a ADD COLUMN z TEXT;' },
];
let n = 0;
const fresh = () => openSqlite(join(dir, `db${n++}`, 'x.db'));

test('a fresh database gets every migration, in order, and records the version', () => {
  const db = fresh();
  const result = migrate(db, sample);
  assert.equal(result.applied.map((m) => m.version), [1, 2, 3]);
  assert.is(currentSchemaVersion(db), 3);
  db.prepare('INSERT INTO a (x, z) VALUES (1, ?)').run('ok');
  db.close();
});

test('an older database gets only the migrations above its version, keeping its data', () => {
  const db = fresh();
  migrate(db, sample.slice(0, 1));
  db.prepare('INSERT INTO a (x) VALUES (42)').run();
  const result = migrate(db, sample);
  assert.equal(result.applied.map((m) => m.version), [2, 3]);
  assert.equal({ ...(db.prepare('SELECT x FROM a').get() as object) }, { x: 42 });
  assert.is(migrate(db, sample).applied.length, 0, 'a second start applies nothing');
  db.close();
});

test('a database newer than the binary is refused with a clear message', () => {
  const db = fresh();
  migrate(db, sample);
  try {
    migrate(db, sample.slice(0, 2));
    assert.unreachable('should refuse');
  } catch (e) {
    assert.instance(e, StartupError);
    assert.match((e as Error).message, /schema version 3 but this fieldbridge knows only up to 2/);
  }
  db.close();
});

test('a failing migration rolls back alone: earlier ones stay applied, the version stays put', () => {
  const db = fresh();
  const broken = [...sample.slice(0, 2), { version: 3, name: 'broken', sql: 'CREATE TABLE c (q INTEGER); SELECT * FROM nowhere;' }];
  assert.throws(() => migrate(db, broken), /migration 3 \(broken\) failed/);
  assert.is(currentSchemaVersion(db), 2);
  assert.not.ok(db.prepare("SELECT name FROM sqlite_master WHERE name = 'c'").get(), 'partial work of the failed migration is rolled back');
  db.close();
});

test('the migration list must be numbered 1..n without gaps', () => {
  const db = fresh();
  assert.throws(() => migrate(db, [sample[0], sample[2]]), /out of order/);
  db.close();
});

test('the bridge migrations apply to an empty file and the database opens with WAL and foreign keys', () => {
  const path = join(dir, 'bridge', 'deep', 'bridge.db');
  const db = openSqlite(path);
  migrate(db, bridgeMigrations);
  assert.ok(existsSync(path), 'parent folders are created');
  assert.equal({ ...(db.prepare('PRAGMA journal_mode').get() as object) }, { journal_mode: 'wal' });
  assert.equal({ ...(db.prepare('PRAGMA foreign_keys').get() as object) }, { foreign_keys: 1 });
  assert.equal({ ...(db.prepare('PRAGMA busy_timeout').get() as object) }, { timeout: 5000 });
  db.close();
});

// Shipped migrations are frozen: the lock pins each one's checksum. Editing an old migration
// fails here; adding a new one fails until the lock is updated on purpose with
//   UPDATE_MIGRATION_LOCK=1 npm test -- test/db/migrate
test('no shipped bridge migration was edited (migrations.lock.json)', () => {
  const current = Object.fromEntries(bridgeMigrations.map((m) => [String(m.version), `${m.name} ${migrationChecksum(m)}`]));
  const locked = existsSync(LOCK) ? (JSON.parse(readFileSync(LOCK, 'utf8')).bridge as Record<string, string>) : {};
  if (process.env.UPDATE_MIGRATION_LOCK === '1') {
    for (const [v, sum] of Object.entries(locked)) {
      assert.is(current[v], sum, `migration ${v} was edited; the lock only ever grows`);
    }
    writeFileSync(LOCK, JSON.stringify({ bridge: current }, null, 2) + '\n');
    return;
  }
  for (const [v, sum] of Object.entries(locked)) {
    assert.ok(current[v], `migration ${v} was removed: migrations are append-only`);
    assert.is(current[v], sum, `migration ${v} was edited after it shipped: add a new migration instead`);
  }
  for (const v of Object.keys(current)) {
    assert.ok(locked[v], `migration ${v} is new: run UPDATE_MIGRATION_LOCK=1 npm test -- test/db/migrate to pin it`);
  }
});

test.run();
