import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DB_CHECK_INTERVAL_MS, DbHealth, MIN_FREE_BYTES } from '../../src/db/health.ts';
import { openSqlite } from '../../src/db/sqlite.ts';

// db/health.ts: the database's state for GET /api/health (issue 14). The bridge-level checks
// (a lock held by another process, a full database) are in test/bridge/system.test.ts and
// test/bridge/storage.test.ts; these cover the parts a test can only reach with fakes.

const dir = mkdtempSync(join(tmpdir(), 'fb-health-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function open(name: string) {
  const db = openSqlite(join(dir, name));
  db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1)');
  return db;
}

test('a file system with less than 1 MiB free is "full"; checked at most once a second', () => {
  const db = open('a.db');
  let now = 0;
  let free: number | null = MIN_FREE_BYTES - 1;
  const folders: string[] = [];
  const health = new DbHealth(db, { now: () => now, freeBytes: (f) => (folders.push(f), free) });
  const first = health.status();
  assert.is(first.db, 'full');
  assert.match(first.detail!, /1048575 bytes left for the database/);
  assert.equal(folders, [dir], 'the folder holding the database is measured');
  free = 10 * MIN_FREE_BYTES;
  now += DB_CHECK_INTERVAL_MS - 1;
  assert.is(health.status().db, 'full', 'the last answer, within the second');
  assert.is(folders.length, 1, 'no new check');
  now += 1;
  assert.equal(health.status(), { db: 'ok', detail: null });
  free = null; // statfs unavailable: the database's own page limit still counts
  now += DB_CHECK_INTERVAL_MS;
  assert.is(health.status().db, 'ok');
  db.close();
  now += DB_CHECK_INTERVAL_MS;
  assert.is(health.status().db, 'closed');
});
test.run();
