import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUSY_SLICE_MS, DatabaseBusyError, retryWhileBusy, writeLockFree } from '../../src/db/busy.ts';
import { isBusyError, openSqlite, transaction } from '../../src/db/sqlite.ts';
import { holdLock } from '../helpers/db-lock.ts';

// db/busy.ts with a real second process holding the write lock: what is run again after the
// lock, what is not, and that waiting never spins.


function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'fb-busy-'));
  const path = join(dir, 'x.db');
  const db = openSqlite(path);
  db.exec('CREATE TABLE t (v INTEGER)');
  db.exec(`PRAGMA busy_timeout = ${BUSY_SLICE_MS}`);
  const count = () => (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;
  return { dir, path, db, count, done: () => (db.close(), rmSync(dir, { recursive: true, force: true })) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('work that met the lock before writing anything is run again once the lock is free, and writes once', async () => {
  const s = setup();
  try {
    const lock = await holdLock(s.path);
    assert.not.ok(writeLockFree(s.db));
    let tries = 0;
    const run = retryWhileBusy(s.db, () => {
      tries++;
      transaction(s.db, () => s.db.prepare('INSERT INTO t VALUES (1)').run());
      return 'saved';
    });
    await sleep(600);
    const during = tries;
    await lock.release();
    assert.is(await run, 'saved');
    assert.ok(during >= 1 && during <= 10, `tried ${during} times in 600 ms of lock: it waits between tries`);
    assert.is(s.count(), 1, 'written once');
  } finally {
    s.done();
  }
});

test('work that wrote something before it met the lock is not repeated: its error goes to the caller', async () => {
  const s = setup();
  try {
    const lock = await holdLock(s.path);
    let tries = 0;
    const outcome = await retryWhileBusy(s.db, () => {
      tries++;
      // What another await in a handler could look like: a first change made, then the lock.
      s.db.exec('CREATE TEMP TABLE IF NOT EXISTS scratch (v)');
      s.db.prepare('INSERT INTO scratch VALUES (1)').run();
      transaction(s.db, () => s.db.prepare('INSERT INTO t VALUES (1)').run());
    }).catch((e: unknown) => e);
    await lock.release();
    assert.is(tries, 1);
    assert.ok(isBusyError(outcome), String(outcome));
    assert.is(s.count(), 0);
  } finally {
    s.done();
  }
});

test('with the gate, work waits for the lock before it runs at all; past the total, DatabaseBusyError (a 503 db-busy)', async () => {
  const s = setup();
  try {
    const lock = await holdLock(s.path);
    let ran = false;
    const outcome = await retryWhileBusy(s.db, () => (ran = true), { gate: true, totalMs: 400 }).catch((e: unknown) => e);
    await lock.release();
    assert.not.ok(ran, 'never run while the lock was held');
    assert.instance(outcome, DatabaseBusyError);
    assert.ok(isBusyError(outcome));
    const again = await retryWhileBusy(s.db, () => 'now', { gate: true });
    assert.is(again, 'now');
  } finally {
    s.done();
  }
});

test('an error that is not the lock, and a handler that began its answer, are never repeated', async () => {
  const s = setup();
  try {
    let tries = 0;
    const plain = await retryWhileBusy(s.db, () => {
      tries++;
      throw new Error('a bug');
    }).catch((e: Error) => e.message);
    assert.is(plain, 'a bug');
    assert.is(tries, 1);
    const lock = await holdLock(s.path);
    tries = 0;
    const answered = await retryWhileBusy(s.db, () => {
      tries++;
      transaction(s.db, () => s.db.prepare('INSERT INTO t VALUES (1)').run());
    }, { repeatable: () => false }).catch((e: unknown) => e);
    await lock.release();
    assert.is(tries, 1);
    assert.ok(isBusyError(answered));
  } finally {
    s.done();
  }
});

test.run();
