import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { databaseOpenError, isReadOnlyError, isStorageFullError, openSqlite, withoutBusyWait } from '../../src/db/sqlite.ts';
import { StartupError } from '../../src/lib/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'fb-sqlite-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('SQLITE_FULL and SQLITE_READONLY are told apart from other errors', () => {
  const db = openSqlite(join(dir, 'full.db'));
  db.exec('CREATE TABLE t (v BLOB)');
  db.exec(`PRAGMA max_page_count = ${(db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count}`);
  let full: unknown;
  try {
    db.prepare('INSERT INTO t VALUES (zeroblob(100000))').run();
  } catch (error) {
    full = error;
  }
  assert.ok(isStorageFullError(full), String(full));
  assert.not.ok(isReadOnlyError(full));
  db.close();
  const ro = new DatabaseSync(join(dir, 'full.db'), { readOnly: true });
  let readOnly: unknown;
  try {
    ro.exec('INSERT INTO t VALUES (1)');
  } catch (error) {
    readOnly = error;
  }
  assert.ok(isReadOnlyError(readOnly), String(readOnly));
  assert.not.ok(isStorageFullError(readOnly));
  assert.not.ok(isStorageFullError(new Error('other')));
  ro.close();
});

test('the write check openSqlite makes at open catches a connection that can only read (test/e2e/db-open.test.ts runs it on a real file)', () => {
  const path = join(dir, 'ro.db');
  openSqlite(path).close();
  // SQLite opens a file it may not write read-only without a word; openSqlite must not.
  const shadow = new DatabaseSync(path, { readOnly: true });
  let caught: unknown;
  try {
    // The same check openSqlite makes, on a connection that can only read.
    shadow.exec('BEGIN IMMEDIATE');
    shadow.exec('PRAGMA user_version = 0');
  } catch (error) {
    caught = error;
  } finally {
    if (shadow.isTransaction) shadow.exec('ROLLBACK');
    shadow.close();
  }
  assert.ok(isReadOnlyError(caught), 'the check catches a read-only connection');
});

test('databaseOpenError: one line naming the path and the variable; a StartupError passes through', () => {
  const e = databaseOpenError(Object.assign(new Error('unable to open database file'), { errcode: 14 }), join(dir, 'x', 'y.db'), 'SERVICE_DB_PATH');
  assert.instance(e, StartupError);
  assert.match((e as Error).message, /^cannot open the database .*y\.db: .*SERVICE_DB_PATH names it/);
  assert.not.match((e as Error).message, /\n/);
  const own = new StartupError('migration 3 failed');
  assert.is(databaseOpenError(own, 'x', 'SERVICE_DB_PATH'), own);
});

test('withoutBusyWait fails at once on a held lock and restores the wait', () => {
  const path = join(dir, 'busy.db');
  const a = openSqlite(path);
  const b = openSqlite(path);
  a.exec('CREATE TABLE t (v)');
  a.exec('BEGIN IMMEDIATE');
  const started = performance.now();
  assert.throws(() => withoutBusyWait(b, () => b.exec('BEGIN IMMEDIATE')), /locked|busy/);
  assert.ok(performance.now() - started < 100);
  assert.is((b.prepare('PRAGMA busy_timeout').get() as { timeout: number }).timeout, 5000);
  a.exec('ROLLBACK');
  a.close();
  b.close();
});

test('openSqlite on a file another connection is writing opens at once (busy is writable): `fieldbridge backup` beside a running bridge', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-open-busy-'));
  const writer = openSqlite(join(dir, 'x.db'));
  try {
    writer.exec('CREATE TABLE t (x)');
    writer.exec('BEGIN IMMEDIATE');
    writer.exec('INSERT INTO t VALUES (1)');
    const started = Date.now();
    const second = openSqlite(join(dir, 'x.db'));
    const took = Date.now() - started;
    second.close();
    assert.ok(took < 1000, `opened in ${took} ms, not after the 5 s busy wait`);
    writer.exec('ROLLBACK');
  } finally {
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
