import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BRIDGE_DB, openMigrated } from '../../src/bridge/app.ts';
import { bridgeMigrations } from '../../src/bridge/migrations.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openSqlite } from '../../src/db/sqlite.ts';

// Issue 22 (migration 11, flash_writes): a database made by an earlier release keeps its page
// size and its audit entries, ids included; a new one gets the page size chosen by measurement.

const dir = mkdtempSync(join(tmpdir(), 'fb-mig11-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const pragma = (db: { prepare(sql: string): { get(): unknown } }, name: string) => Number(Object.values(db.prepare(`PRAGMA ${name}`).get() as object)[0]);

test('an existing database (4 KiB pages, migration 10) is migrated in place: page size, audit ids and indexes', () => {
  const path = join(dir, 'old.db');
  const old = openSqlite(path); // SQLite's default page size, as earlier releases made it
  migrate(old, bridgeMigrations.slice(0, 10));
  const ins = old.prepare("INSERT INTO audit_log (at, key_id, method, path, status, request_id) VALUES ('2026-01-01T00:00:00.000Z', NULL, 'POST', ?, 200, 'r')");
  for (const p of ['/api/a', '/api/b', '/api/c']) ins.run(p);
  old.exec('DELETE FROM audit_log WHERE id = 1');
  old.close();

  const { db } = openMigrated(path);
  try {
    assert.is(pragma(db, 'page_size'), 4096, 'an existing file keeps its page size');
    assert.equal((db.prepare('SELECT id, path FROM audit_log ORDER BY id').all() as Array<{ id: number; path: string }>).map((r) => [r.id, r.path]), [[2, '/api/b'], [3, '/api/c']]);
    db.prepare("INSERT INTO audit_log (at, key_id, method, path, status, request_id) VALUES ('x', NULL, 'POST', '/api/d', 200, 'r')").run();
    assert.is((db.prepare('SELECT max(id) AS id FROM audit_log').get() as { id: number }).id, 4, 'ids go on from the largest');
    assert.is(db.prepare("SELECT 1 FROM sqlite_sequence WHERE name = 'audit_log'").get(), undefined);
    const indexes = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'deliveries' AND sql IS NOT NULL ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
    assert.equal(indexes, ['deliveries_dead', 'deliveries_expiry', 'deliveries_fallback', 'deliveries_front', 'deliveries_held', 'deliveries_message', 'deliveries_queued', 'deliveries_sending', 'deliveries_unsent']);
  } finally {
    db.close();
  }
});

test('a new database gets the bridge page size, WAL, memory temp store and its checkpoint setting', () => {
  const { db } = openMigrated(join(dir, 'new.db'));
  try {
    assert.is(pragma(db, 'page_size'), BRIDGE_DB.pageSize);
    assert.is(String(Object.values(db.prepare('PRAGMA journal_mode').get() as object)[0]), 'wal');
    assert.is(pragma(db, 'temp_store'), 2, 'MEMORY');
    assert.is(pragma(db, 'wal_autocheckpoint'), BRIDGE_DB.walAutocheckpoint);
    assert.is(pragma(db, 'synchronous'), 1, 'NORMAL');
  } finally {
    db.close();
  }
});

test.run();
