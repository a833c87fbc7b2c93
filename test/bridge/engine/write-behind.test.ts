import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { openBridgeDatabase } from '../../../src/bridge/app.ts';
import { AuditStore } from '../../../src/bridge/audit/store.ts';
import { newDelivery } from '../../../src/bridge/engine/admission.ts';
import { DeliveryStore } from '../../../src/bridge/engine/delivery-store.ts';
import { GROUP_COMMIT_MS, WriteBehind } from '../../../src/bridge/engine/write-behind.ts';
import { commitCount, commitGroup, enableGroupCommit, pendingCommit, transaction } from '../../../src/db/sqlite.ts';
import { EventStream } from '../../../src/lib/events.ts';
import { createLogger } from '../../../src/lib/log.ts';

// Issue 22: the dispatcher's delivery states and the audit entries are committed in groups:
// with the next transaction on the connection (the next message stored), or on their own
// GROUP_COMMIT_MS later; a retry (the delivery waits again) at the next turn. A rider that fails
// is rolled back alone: the transaction it rode still commits.

const quiet = createLogger({ level: 'error', format: 'json', write: () => {} });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'fb-group-'));
  const db = openBridgeDatabase(join(dir, 'b.db'));
  /** What the write-behind logged (info and above), one JSON line each. */
  const lines: string[] = [];
  const wb = new WriteBehind(db, createLogger({ level: 'info', format: 'json', write: (line) => void lines.push(line) }));
  const events = new EventStream<never>();
  const store = new DeliveryStore(db, wb, events as never);
  const iface = { id: 'ifc_a', name: 'a', retry: {} };
  let now = Date.parse('2026-01-01T00:00:00Z');
  const make = () => newDelivery({ message: { id: `msg_${now}`, from: 'local', channel: null, kind: 'text', text: 'x', payload: null }, precedence: 4, nowMs: now++ }, iface, 'peer');
  /** The state as the file holds it (not flushing the write-behind, as get() would). */
  const committed = (id: string) => (db.prepare('SELECT state FROM deliveries WHERE id = ?').get(id) as { state: string } | undefined)?.state;
  const close = () => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  };
  /** Two deliveries stored in one transaction. */
  const insertPair = () => {
    const pair = [make(), make()] as const;
    transaction(db, () => pair.forEach((d) => store.insert(d)));
    return pair;
  };
  return { db, wb, store, make, insertPair, committed, close, lines, nowMs: () => now };
}

/** From now on a write of "INSERT INTO child VALUES ('nobody')" makes its COMMIT fail (a deferred
 *  foreign key: the work succeeds, the COMMIT is refused), until a parent 'nobody' exists. */
function failCommitsOnOrphans(db: DatabaseSync): void {
  db.exec('CREATE TABLE parent (id TEXT PRIMARY KEY); CREATE TABLE child (p TEXT REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)');
}

/** The dispatcher's way: the 'sending' mark, then the outcome. */
function deliver(s: ReturnType<typeof setup>, id: string): void {
  s.wb.deferSending(id, 'ifc_a', s.nowMs(), () => s.store.markSending(id, s.nowMs()));
  s.wb.defer(id, 'ifc_a', (fromWaiting) => void s.store.settle(id, 'delivered', null, s.nowMs(), fromWaiting));
}

test('a delivered state rides the next transaction: one commit carries the next message and the last outcome', async () => {
  const s = setup();
  try {
    const first = s.make();
    transaction(s.db, () => s.store.insert(first));
    deliver(s, first.id);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.is(s.committed(first.id), 'pending', 'not committed on its own at the next turn');
    const before = commitCount(s.db);
    const second = s.make();
    transaction(s.db, () => s.store.insert(second));
    assert.is(commitCount(s.db) - before, 1, 'one commit');
    assert.is(s.committed(first.id), 'delivered', 'the outcome went with the next message');
    assert.is(s.committed(second.id), 'pending');
    assert.equal(s.wb.dirtyIds(), []);
    // The outcome replaced the queued 'sending' mark: one UPDATE, attempt counted.
    assert.is((s.db.prepare('SELECT attempts FROM deliveries WHERE id = ?').get(first.id) as { attempts: number }).attempts, 1);
  } finally {
    s.close();
  }
});

test('with no other commit the group commits on its own within GROUP_COMMIT_MS; a retry at the next turn', async () => {
  const s = setup();
  try {
    const [a, b] = s.insertPair();
    deliver(s, a.id);
    await sleep(GROUP_COMMIT_MS / 2);
    assert.is(s.committed(a.id), 'pending', 'still waiting for a commit to ride');
    await sleep(GROUP_COMMIT_MS / 2 + 200);
    assert.is(s.committed(a.id), 'delivered', 'committed by the timer');

    s.wb.deferSending(b.id, 'ifc_a', s.nowMs(), () => s.store.markSending(b.id, s.nowMs()));
    const woken: string[][] = [];
    s.wb.flushed.subscribe((ids) => woken.push(ids));
    s.wb.defer(b.id, 'ifc_a', (fromWaiting) => void s.store.scheduleRetry(b.id, s.nowMs() + 60_000, 'busy', s.nowMs(), fromWaiting), true);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.is(s.committed(b.id), 'retrying', 'a retry is committed at once');
    assert.equal(woken, [['ifc_a']], 'and its queue is woken');
  } finally {
    s.close();
  }
});

test('a send that outlives the group has its sending mark committed (recovery after a crash sees it on the air)', async () => {
  const s = setup();
  try {
    const a = s.make();
    transaction(s.db, () => s.store.insert(a));
    s.wb.deferSending(a.id, 'ifc_a', s.nowMs(), () => s.store.markSending(a.id, s.nowMs()));
    await sleep(GROUP_COMMIT_MS + 200);
    assert.is(s.committed(a.id), 'sending');
    s.wb.defer(a.id, 'ifc_a', (fromWaiting) => void s.store.settle(a.id, 'delivered', null, s.nowMs(), fromWaiting));
    s.wb.flush();
    assert.is(s.committed(a.id), 'delivered');
  } finally {
    s.close();
  }
});

test('a rider that fails is rolled back alone: the host transaction commits, the rider keeps its writes for later', () => {
  const s = setup();
  try {
    const a = s.make();
    const b = s.make();
    transaction(s.db, () => s.store.insert(a));
    let fail = true;
    s.wb.deferSending(a.id, 'ifc_a', s.nowMs(), () => s.store.markSending(a.id, s.nowMs()));
    s.wb.defer(a.id, 'ifc_a', (fromWaiting) => {
      s.store.settle(a.id, 'delivered', null, s.nowMs(), fromWaiting);
      if (fail) throw new Error('rider trouble');
    });
    transaction(s.db, () => s.store.insert(b));
    assert.is(s.committed(b.id), 'pending', 'the host committed');
    assert.is(s.committed(a.id), 'pending', "the rider's write was rolled back");
    assert.ok(s.wb.backlogged, 'and kept, with sends held until it commits');
    fail = false;
    s.wb.flush();
    assert.is(s.committed(a.id), 'delivered');
    assert.not.ok(s.wb.backlogged);
  } finally {
    s.close();
  }
});

test('a host transaction that rolls back takes the riders with it, and they are kept', () => {
  const s = setup();
  try {
    const a = s.make();
    transaction(s.db, () => s.store.insert(a));
    deliver(s, a.id);
    // The host's own work succeeds but its COMMIT is refused: a deferred foreign key check.
    failCommitsOnOrphans(s.db);
    assert.throws(() => transaction(s.db, () => s.db.exec("INSERT INTO child VALUES ('nobody')")));
    assert.is(s.committed(a.id), 'pending');
    assert.equal(s.wb.dirtyIds(), [a.id], 'kept');
    s.wb.flush();
    assert.is(s.committed(a.id), 'delivered');
  } finally {
    s.close();
  }
});

/** A store with group commit on and a group open (the first frame of a repeating sender commits
 *  alone, the next within the window opens a group). */
function withOpenGroup(s: ReturnType<typeof setup>) {
  enableGroupCommit(s.db, 10_000);
  const a = s.make();
  transaction(s.db, () => s.store.insert(a), { group: 'paced' });
  transaction(s.db, () => s.store.insert(s.make()), { group: 'paced' });
  assert.ok(pendingCommit(s.db), 'a group is open');
  /** The next ingest of the group: the waiting writes ride it. */
  const ingest = () => transaction(s.db, () => s.store.insert(s.make()), { group: 'paced' });
  const due = () => s.store.dueRows('ifc_a', s.nowMs() + 1000, 32).map((d) => d.id);
  return { a, ingest, due };
}

/** A test on a store with a group open (withOpenGroup), closed after it. */
function groupTest(name: string, fn: (s: ReturnType<typeof setup>, g: ReturnType<typeof withOpenGroup>) => void): void {
  test(name, () => {
    const s = setup();
    try {
      fn(s, withOpenGroup(s));
    } finally {
      s.close();
    }
  });
}

groupTest('a retry written inside an open group stays out of the queue until the group commits (never sent twice in one group)', (s, g) => {
  // a was sent and failed: its retry is due at once, and rides the next ingest of the group.
  s.wb.deferSending(g.a.id, 'ifc_a', s.nowMs(), () => s.store.markSending(g.a.id, s.nowMs()));
  s.wb.defer(g.a.id, 'ifc_a', (fromWaiting) => void s.store.scheduleRetry(g.a.id, s.nowMs(), 'no ack', s.nowMs(), fromWaiting), true);
  g.ingest();
  assert.ok(pendingCommit(s.db), 'the group is still open');
  assert.not.ok(g.due().includes(g.a.id), 'skipped while its retry is not committed');
  commitGroup(s.db);
  assert.is(s.committed(g.a.id), 'retrying');
  assert.ok(g.due().includes(g.a.id), 'due once the group committed');
});

groupTest('a delivery settled inside the open group leaves the skip list: the connection reads its new state', (s, g) => {
  deliver(s, g.a.id);
  assert.equal(s.wb.dirtyIds(), [g.a.id], 'skipped while its writes wait in memory');
  g.ingest();
  assert.equal(s.wb.dirtyIds(), [], 'written into the group: nothing to skip');
  assert.not.ok(g.due().includes(g.a.id), 'and not due: the queue reads it delivered');
  commitGroup(s.db);
  assert.is(s.committed(g.a.id), 'delivered');
});

groupTest("a group carrying a send's mark and, in a later ride, its retry wakes the queue once the retry is no longer skipped", (s, g) => {
  s.wb.deferSending(g.a.id, 'ifc_a', s.nowMs(), () => s.store.markSending(g.a.id, s.nowMs()));
  g.ingest(); // the mark rides one unit
  s.wb.defer(g.a.id, 'ifc_a', (fromWaiting) => void s.store.scheduleRetry(g.a.id, s.nowMs(), 'no ack', s.nowMs(), fromWaiting), true);
  // What the dispatcher does when woken: read the queue (a queue that finds nothing sleeps
  // without a timer for what it skipped).
  const seen: string[][] = [];
  s.wb.flushed.subscribe(() => void seen.push(g.due()));
  commitGroup(s.db); // the retry rides the COMMIT
  assert.is(s.committed(g.a.id), 'retrying');
  assert.is(seen.length, 1, 'woken once');
  assert.ok(seen[0].includes(g.a.id), 'with the retry due');
});

groupTest('a group whose COMMIT fails gives its deliveries back to the skip list with their writes', (s, g) => {
  deliver(s, g.a.id);
  failCommitsOnOrphans(s.db);
  // The next unit's own work is fine until the COMMIT checks the deferred foreign key.
  transaction(s.db, () => s.db.exec("INSERT INTO child VALUES ('nobody')"), { group: 'paced' });
  assert.equal(s.wb.dirtyIds(), [], 'written into the group');
  assert.throws(() => commitGroup(s.db));
  assert.is(s.committed(g.a.id), 'pending', "a's delivered state went with the group");
  assert.equal(s.wb.dirtyIds(), [g.a.id], 'skipped again: its writes wait in memory');
  s.wb.flush();
  assert.is(s.committed(g.a.id), 'delivered', 'and written by the next flush');
});

groupTest('a group SQLite rolled back unannounced is noticed before the queue is read: its deliveries are skipped again', (s, g) => {
  const b = s.make();
  g.ingest();
  transaction(s.db, () => s.store.insert(b), { group: 'paced' });
  commitGroup(s.db);
  // b is sent and delivered; its writes ride the next group.
  transaction(s.db, () => s.store.insert(s.make()), { group: 'paced' });
  transaction(s.db, () => s.store.insert(s.make()), { group: 'paced' });
  deliver(s, b.id);
  g.ingest();
  assert.equal(s.wb.dirtyIds(), []);
  // What SQLITE_FULL on a statement outside transaction() can do: the whole transaction goes.
  s.db.exec('ROLLBACK');
  assert.is(s.committed(b.id), 'pending', 'b reads as waiting again');
  assert.not.ok(g.due().includes(b.id), 'but is not handed to the dispatcher a second time');
  assert.equal(s.wb.dirtyIds(), [b.id], 'its writes are kept, and it is skipped until they commit');
  s.wb.flush();
  assert.is(s.committed(b.id), 'delivered');
});

groupTest("the write-behind's own flush gives a silently lost group's writes back before it takes newer ones: they commit in order", (s, g) => {
  s.wb.deferSending(g.a.id, 'ifc_a', s.nowMs(), () => s.store.markSending(g.a.id, s.nowMs()));
  g.ingest(); // the 'sending' mark rides the group
  s.db.exec('ROLLBACK'); // SQLite lost the group without a word (SQLITE_FULL outside transaction())
  // The send failed: its retry is written against the mark, from the timer's flush (no wait).
  s.wb.defer(g.a.id, 'ifc_a', (fromWaiting) => void s.store.scheduleRetry(g.a.id, s.nowMs() + 60_000, 'no ack', s.nowMs(), fromWaiting), true);
  s.wb.flush({ wait: false });
  s.wb.flush();
  const row = s.db.prepare('SELECT state, attempts FROM deliveries WHERE id = ?').get(g.a.id) as { state: string; attempts: number };
  assert.equal({ ...row }, { state: 'retrying', attempts: 1 }, 'the mark, then the retry: not left sending with nothing on the air');
  assert.equal(s.wb.dirtyIds(), []);
});

test('an interface going down does not hold a delivery whose writes could not be committed (it may be on the air)', () => {
  const s = setup();
  try {
    const [a, b] = s.insertPair();
    failCommitsOnOrphans(s.db);
    // a is on the air; a write of the same flush makes every COMMIT of it fail.
    s.wb.deferSending(a.id, 'ifc_a', s.nowMs(), () => s.store.markSending(a.id, s.nowMs()));
    s.wb.defer(b.id, 'ifc_a', () => s.db.exec("INSERT INTO child VALUES ('nobody')"));
    assert.is(s.store.holdWaiting('ifc_a', s.nowMs(), false), 0, 'b waits in memory too: nothing held');
    assert.ok(s.wb.backlogged, 'the flush failed and kept its writes');
    assert.is(s.committed(a.id), 'pending', 'a reads as waiting');
    s.db.exec("INSERT INTO parent VALUES ('nobody')"); // the trouble is gone
    s.wb.flush();
    assert.is(s.committed(a.id), 'sending', 'its mark written once the flush succeeds, not lost against held');
  } finally {
    s.close();
  }
});

test('a database that turns read-only (an SD card remounted after errors) fails the timer flush without throwing: writes kept, committed once it is writable', async () => {
  const s = setup();
  const thrown: unknown[] = [];
  const onUncaught = (error: unknown) => void thrown.push(error);
  process.on('uncaughtException', onUncaught);
  try {
    const d = s.make();
    transaction(s.db, () => s.store.insert(d));
    // query_only refuses BEGIN IMMEDIATE with SQLITE_READONLY, as a read-only file system does.
    s.db.exec('PRAGMA query_only = ON');
    deliver(s, d.id);
    await sleep(GROUP_COMMIT_MS + 100); // the write-behind's own timer fires and fails
    assert.equal(thrown, [], 'nothing thrown out of the timer (it would end the process)');
    assert.ok(s.wb.backlogged, 'the write is kept in memory');
    assert.ok(s.lines.some((l) => l.includes('delivery_state_write_failed') && l.includes('readonly')), `the failure is logged with its cause: ${s.lines.join(' ')}`);
    s.db.exec('PRAGMA query_only = OFF');
    await sleep(1300); // the retry timer (1 s)
    assert.equal(thrown, []);
    assert.not.ok(s.wb.backlogged, 'committed once the database takes writes again');
    assert.is(s.committed(d.id), 'delivered');
  } finally {
    process.off('uncaughtException', onUncaught);
    s.close();
  }
});

test('a flush that keeps failing for the same cause logs it once, not at every retry; a new cause and the recovery are logged', () => {
  const s = setup();
  const count = (event: string) => s.lines.filter((l) => l.includes(`"event":"${event}"`)).length;
  try {
    const d = s.make();
    transaction(s.db, () => s.store.insert(d));
    // A write whose COMMIT fails, as a full disk fails every retry.
    failCommitsOnOrphans(s.db);
    s.wb.defer(d.id, 'ifc_a', () => s.db.exec("INSERT INTO child VALUES ('nobody')"));
    for (let i = 0; i < 5; i++) s.wb.flush();
    assert.is(count('delivery_state_write_failed'), 1, s.lines.join('\n'));
    assert.ok(s.wb.backlogged);
    s.db.exec('PRAGMA query_only = ON'); // another cause: logged again, once
    for (let i = 0; i < 3; i++) s.wb.flush();
    assert.is(count('delivery_state_write_failed'), 2, s.lines.join('\n'));
    s.db.exec('PRAGMA query_only = OFF');
    s.db.exec("INSERT INTO parent VALUES ('nobody')");
    s.wb.flush();
    assert.not.ok(s.wb.backlogged);
    assert.is(count('delivery_state_write_recovered'), 1);
    s.wb.defer(d.id, 'ifc_a', () => s.db.exec("INSERT INTO child VALUES ('nobody2')"));
    s.wb.flush();
    assert.is(count('delivery_state_write_failed'), 3, 'a failure after the recovery is a new one');
  } finally {
    s.close();
  }
});

test('audit entries ride the next commit too, or commit on their own within GROUP_COMMIT_MS', async () => {
  const s = setup();
  const audit = new AuditStore(s.db, quiet);
  const rows = (db: DatabaseSync) => (db.prepare('SELECT count(*) AS n FROM audit_log').get() as { n: number }).n;
  try {
    const entry = (i: number) => ({ at: new Date().toISOString(), key_id: 'key_1', method: 'POST', path: `/api/x/${i}`, status: 200, request_id: `r${i}` });
    audit.insert(entry(1));
    audit.insert(entry(2));
    await new Promise((r) => setImmediate(r));
    assert.is(rows(s.db), 0, 'waiting for a commit');
    const before = commitCount(s.db);
    transaction(s.db, () => s.store.insert(s.make()));
    assert.is(commitCount(s.db) - before, 1);
    assert.is(rows(s.db), 2, 'carried by the next transaction');
    audit.insert(entry(3));
    await sleep(GROUP_COMMIT_MS + 200);
    assert.is(rows(s.db), 3, 'committed on its own');
    // Ids keep growing without AUTOINCREMENT (migration 11).
    const ids = (s.db.prepare('SELECT id FROM audit_log ORDER BY id').all() as Array<{ id: number }>).map((r) => r.id);
    assert.equal(ids, [1, 2, 3]);
    assert.is(s.db.prepare("SELECT name FROM sqlite_sequence WHERE name = 'audit_log'").get(), undefined, 'no sqlite_sequence row is written for it');
  } finally {
    s.close();
  }
});

test('counts by state come from the partial indexes and the total', () => {
  const s = setup();
  try {
    const made = Array.from({ length: 7 }, () => s.make());
    transaction(s.db, () => made.forEach((d) => s.store.insert(d)));
    const set = (id: string, state: string) => s.db.prepare('UPDATE deliveries SET state = ? WHERE id = ?').run(state, id);
    ['delivered', 'delivered', 'dead', 'sending', 'cancelled', 'expired'].forEach((state, i) => set(made[i].id, state));
    assert.equal(s.store.countByState(), { pending: 1, sending: 1, dead: 1, cancelled: 1, expired: 1, delivered: 2 });
    assert.is(s.store.queueDepth('ifc_a'), 2, 'pending and sending');
    const plan = (sql: string) => (s.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    assert.match(plan("SELECT count(*) FROM deliveries"), /COVERING INDEX deliveries_message/, 'the total reads a narrow index, not the rows');
    assert.match(plan("SELECT id FROM deliveries WHERE state = 'sending'"), /deliveries_sending/);
    assert.equal(s.store.list({ state: 'dead' }, 10).map((d) => d.id), [made[2].id], 'the dead letter queue, through deliveries_dead');
    assert.match(plan("UPDATE deliveries SET state = 'held' WHERE interface_id = 'x' AND state IN ('pending', 'held', 'retrying') AND state != 'held'"), /deliveries_queued/);
  } finally {
    s.close();
  }
});

test.run();
