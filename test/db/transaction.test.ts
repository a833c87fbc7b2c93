import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeLockFree } from '../../src/db/busy.ts';
import {
  afterCommit, commitGroup, committed, enableGroupCommit, inTransaction, isStorageFullError, onGroupFailed, openSqlite, pendingCommit, rideNextCommit, transaction,
  withoutBusyWait,
} from '../../src/db/sqlite.ts';
import { expectWrite, MAX_WAITING } from '../../src/db/transaction.ts';

// Group commit of ingests (issues 22 and 30, db/transaction.ts), on real SQLite files: frames
// whose senders repeat ('paced') that come within the window of the last COMMIT share the next
// one; API ingests share one only with writers known to be coming; each is a savepoint that fails
// alone; committed() settles with the COMMIT; a failed COMMIT is told to every waiter and
// listener and leaves nothing in the file.

const WINDOW_MS = 80;
const dir = mkdtempSync(join(tmpdir(), 'fb-group-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A database with group commit on, its COMMITs counted as scripts/bench-writes.ts counts them
 *  (every COMMIT statement on the connection), and a second connection that sees only what is
 *  committed (what a crash would leave). */
function open(windowMs = WINDOW_MS, yieldTo?: () => boolean) {
  const path = join(dir, `g${n++}.db`);
  const db = openSqlite(path);
  db.exec('CREATE TABLE t (v TEXT NOT NULL CHECK (v != \'bad\'))');
  enableGroupCommit(db, windowMs, yieldTo);
  const counted = { commits: 0 };
  const exec = db.exec.bind(db);
  db.exec = (sql: string) => {
    exec(sql);
    if (/^\s*COMMIT\b/i.test(sql)) counted.commits++;
  };
  const other = new DatabaseSync(path, { timeout: 0 });
  const onDisk = () => (other.prepare('SELECT v FROM t ORDER BY rowid').all() as Array<{ v: string }>).map((r) => r.v);
  const insert = (v: string) => transaction(db, () => void db.prepare('INSERT INTO t (v) VALUES (?)').run(v), { group: 'paced' });
  const close = () => {
    other.close();
    if (db.isOpen) db.close();
  };
  return { db, counted, onDisk, insert, other, close };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a lone transaction commits at once; a burst after it shares one commit, on disk only once committed() settles', async () => {
  const g = open();
  try {
    g.insert('lone');
    assert.is(g.counted.commits, 1);
    assert.not.ok(pendingCommit(g.db));
    assert.equal(g.onDisk(), ['lone'], 'a lone write is committed when transaction() returns');
    for (let i = 0; i < 10; i++) g.insert(`burst ${i}`);
    assert.is(g.counted.commits, 1, 'the burst waits for one shared commit');
    assert.ok(pendingCommit(g.db));
    assert.equal(g.onDisk(), ['lone'], 'nothing of the burst is committed yet');
    assert.is((g.db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n, 11, 'the connection itself reads the open group');
    const started = performance.now();
    await committed(g.db);
    assert.ok(performance.now() - started < WINDOW_MS + 50, 'committed within the window');
    assert.is(g.counted.commits, 2, '11 transactions, 2 commits');
    assert.is(g.onDisk().length, 11, 'every acknowledged write is on disk');
    await sleep(WINDOW_MS + 20);
    g.insert('later');
    assert.is(g.counted.commits, 3, 'a write more than the window after the last commit commits at once');
    assert.not.ok(pendingCommit(g.db));
  } finally {
    g.close();
  }
});

test(`${MAX_WAITING} acknowledgements waiting make the group commit at once, even with a writer still on its way`, async () => {
  const g = open(10_000);
  try {
    g.insert('first');
    // A request whose body is still arriving: without it, the first acknowledgement would commit.
    const slow = expectWrite(g.db);
    const waiting: Array<Promise<void>> = [];
    for (let i = 0; i < MAX_WAITING - 1; i++) {
      g.insert(`w${i}`);
      waiting.push(committed(g.db));
    }
    await sleep(20);
    assert.ok(pendingCommit(g.db), `${MAX_WAITING - 1} waiting: the group waits for its window`);
    g.insert('last');
    const started = performance.now();
    waiting.push(committed(g.db));
    await Promise.all(waiting);
    assert.ok(performance.now() - started < 100, 'committed at the next turn, not after 10 s');
    assert.is(g.onDisk().length, MAX_WAITING + 1);
    assert.is(g.counted.commits, 2);
    slow.done();
  } finally {
    g.close();
  }
});

test('a unit that fails rolls back alone; the group commits the others', async () => {
  const g = open();
  try {
    g.insert('first');
    g.insert('a');
    assert.throws(() => g.insert('bad'), /CHECK constraint failed/);
    assert.throws(() => transaction(g.db, () => {
      g.db.prepare('INSERT INTO t (v) VALUES (?)').run('thrown');
      throw new Error('the unit changed its mind');
    }, { group: 'paced' }), /changed its mind/);
    g.insert('b');
    await committed(g.db);
    assert.equal(g.onDisk(), ['first', 'a', 'b']);
  } finally {
    g.close();
  }
});

test('a failed group COMMIT rejects every waiter, tells the listeners, runs no afterCommit and leaves nothing in the file', async () => {
  const g = open();
  try {
    // A deferred foreign key is checked at COMMIT: a real COMMIT that fails, as a full disk's would.
    g.db.exec('CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (p INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)');
    const failures: unknown[] = [];
    onGroupFailed(g.db, (error) => failures.push(error));
    let counted = 0;
    const rider = { rides: 0, committed: 0, failed: 0 };
    g.insert('before');
    g.insert('in the group');
    const first = committed(g.db);
    transaction(g.db, () => {
      g.db.exec('INSERT INTO child (p) VALUES (42)');
      afterCommit(g.db, () => counted++);
    }, { group: 'paced' });
    rideNextCommit(g.db, { ride: () => void rider.rides++, committed: () => void rider.committed++, failed: () => void rider.failed++ });
    const second = committed(g.db);
    const outcomes = await Promise.allSettled([first, second]);
    assert.equal(outcomes.map((o) => o.status), ['rejected', 'rejected']);
    assert.match(String((outcomes[0] as PromiseRejectedResult).reason), /FOREIGN KEY/);
    assert.is(failures.length, 1);
    assert.is(counted, 0, 'afterCommit work of a rolled-back group never runs');
    assert.equal(rider, { rides: 1, committed: 0, failed: 1 });
    assert.not.ok(g.db.isTransaction, 'the lock is given back');
    assert.equal(g.onDisk(), ['before']);
    assert.equal((g.db.prepare('SELECT v FROM t').all() as Array<{ v: string }>).map((r) => r.v), ['before'], 'the connection no longer sees the group either');
    // The next write is stored as usual.
    g.insert('after');
    await committed(g.db);
    assert.equal(g.onDisk(), ['before', 'after']);
  } finally {
    g.close();
  }
});

test('a rider carried by several units of a group is told of each ride: committed in order, failed newest first', async () => {
  const g = open();
  try {
    g.db.exec('CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (p INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)');
    const told: string[] = [];
    let n = 0;
    const rider = {
      ride: () => void g.db.prepare('INSERT INTO t (v) VALUES (?)').run(`ride ${++n}`),
      committed: () => void told.push('committed'),
      failed: () => void told.push(`failed ride ${n--}`),
    };
    g.insert('first');
    for (const v of ['a', 'b']) {
      rideNextCommit(g.db, rider);
      g.insert(v);
    }
    await committed(g.db);
    assert.equal(told, ['committed', 'committed']);
    assert.equal(g.onDisk(), ['first', 'a', 'ride 1', 'b', 'ride 2']);
    told.length = 0;
    n = 0;
    for (const v of ['c', 'd']) {
      rideNextCommit(g.db, rider);
      g.insert(v);
    }
    transaction(g.db, () => g.db.exec('INSERT INTO child (p) VALUES (42)'), { group: 'paced' });
    assert.is((await Promise.allSettled([committed(g.db)]))[0].status, 'rejected');
    assert.equal(told, ['failed ride 2', 'failed ride 1']);
  } finally {
    g.close();
  }
});

test('SQLITE_FULL in a unit takes the whole group with it (SQLite rolls the transaction back): every waiter is told', async () => {
  const g = open();
  try {
    g.db.exec('CREATE TABLE big (v BLOB)');
    g.insert('before');
    g.insert('in the group');
    const waiting = committed(g.db);
    g.db.exec(`PRAGMA max_page_count = ${(g.db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count + 2}`);
    assert.throws(() => transaction(g.db, () => void g.db.prepare('INSERT INTO big VALUES (zeroblob(100000))').run(), { group: 'paced' }), (e: unknown) => isStorageFullError(e));
    const outcome = (await Promise.allSettled([waiting]))[0];
    assert.is(outcome.status, 'rejected');
    assert.not.ok(pendingCommit(g.db));
    assert.equal(g.onDisk(), ['before']);
  } finally {
    g.close();
  }
});

test('afterCommit work and riders wait for the group\'s COMMIT; a transaction that does not group joins it and commits it at once', async () => {
  const g = open();
  try {
    g.insert('first');
    let counted = 0;
    const rider = { rides: 0, committed: 0 };
    transaction(g.db, () => {
      g.db.prepare('INSERT INTO t (v) VALUES (?)').run('grouped');
      afterCommit(g.db, () => counted++);
    }, { group: 'paced' });
    rideNextCommit(g.db, { ride: () => void rider.rides++, committed: () => void rider.committed++, failed: () => {} });
    g.insert('grouped too');
    assert.is(counted, 0, 'not after the savepoint: after the COMMIT');
    assert.equal(rider, { rides: 1, committed: 0 }, 'the next unit carries the rider; the COMMIT tells it');
    rideNextCommit(g.db, { ride: () => void rider.rides++, committed: () => void rider.committed++, failed: () => {} });
    assert.not.ok(inTransaction(g.db), 'between units nothing runs inside the group');
    // An API change: joins the group (the lock is ours: no wait, no SQLITE_BUSY) and commits it.
    assert.ok(writeLockFree(g.db));
    const waiting = committed(g.db);
    withoutBusyWait(g.db, () => transaction(g.db, () => void g.db.prepare('INSERT INTO t (v) VALUES (?)').run('api change')));
    assert.not.ok(pendingCommit(g.db));
    assert.is(counted, 1);
    assert.equal(rider, { rides: 2, committed: 2 }, 'told once per ride');
    assert.equal(g.onDisk(), ['first', 'grouped', 'grouped too', 'api change']);
    await waiting;
    // withoutBusyWait commits the open group first (its background writes must never ride one),
    // then the change commits alone.
    assert.is(g.counted.commits, 3);
  } finally {
    g.close();
  }
});

test('another connection that wants to write waits for the group and then writes; commitGroup commits at once', async () => {
  const g = open(10_000);
  try {
    g.insert('first');
    g.insert('grouped');
    assert.throws(() => g.other.exec("INSERT INTO t (v) VALUES ('other')"), /locked|busy/i, 'the open group holds the write lock');
    commitGroup(g.db);
    assert.not.ok(pendingCommit(g.db));
    g.other.exec("INSERT INTO t (v) VALUES ('other')");
    assert.equal(g.onDisk(), ['first', 'grouped', 'other']);
  } finally {
    g.close();
  }
});

test('a group left open when the connection closes rejects its waiters instead of hanging', async () => {
  const g = open();
  g.insert('first');
  g.insert('grouped');
  const waiting = committed(g.db);
  g.db.close();
  const outcome = (await Promise.allSettled([waiting]))[0];
  assert.is(outcome.status, 'rejected');
  g.other.close();
});

test('while another process wants the write lock, no group opens: each ingest commits alone and the lock is free between them', async () => {
  let wanted = false;
  const { db, counted, onDisk, insert, other, close } = open(WINDOW_MS, () => wanted);
  try {
    insert('lone');
    insert('a');
    assert.ok(pendingCommit(db), 'a group is open');
    wanted = true;
    await committed(db);
    const before = counted.commits;
    for (const v of ['b', 'c', 'd']) {
      insert(v);
      assert.not.ok(pendingCommit(db), `${v}: committed alone`);
      // The other connection (busy timeout 0) writes between them without waiting.
      other.exec('BEGIN IMMEDIATE');
      other.exec('ROLLBACK');
    }
    assert.is(counted.commits - before, 3);
    assert.equal(onDisk(), ['lone', 'a', 'b', 'c', 'd']);
    wanted = false;
    insert('e');
    assert.ok(pendingCommit(db), 'groups form again once nobody asks');
    await committed(db);
  } finally {
    close();
  }
});

test('a commit that carries no ingest (a background flush) does not make the next lone ingest wait for a group', async () => {
  const { db, insert, onDisk, close } = open();
  try {
    await sleep(WINDOW_MS + 10);
    transaction(db, () => void db.prepare('INSERT INTO t (v) VALUES (?)').run('background'));
    insert('lone');
    assert.not.ok(pendingCommit(db), 'committed at once');
    assert.equal(onDisk(), ['background', 'lone']);
    insert('next');
    assert.ok(pendingCommit(db), 'an ingest right after an ingest\'s commit groups');
    await committed(db);
  } finally {
    close();
  }
});

test(`waits that acknowledge nothing (hurry: false) do not count toward the ${MAX_WAITING} that commit a group at once`, async () => {
  const { db, insert, close } = open(10_000);
  try {
    insert('lone');
    insert('a');
    const slow = expectWrite(db);
    const watching = Array.from({ length: MAX_WAITING * 2 }, () => committed(db, undefined, { hurry: false }));
    await sleep(20);
    assert.ok(pendingCommit(db), 'still open: nobody waits for an acknowledgement');
    const acks = Array.from({ length: MAX_WAITING }, () => committed(db));
    await sleep(20);
    assert.not.ok(pendingCommit(db), 'committed once the acknowledgements were enough (the window is 10 s)');
    await Promise.all([...acks, ...watching]);
    slow.done();
  } finally {
    close();
  }
});

// Issue 30: a write waits for a group only while other writes are known to be coming.

const turn = () => new Promise((r) => setImmediate(r));

test('an API ingest with nothing else coming commits at the next turn, even right after a commit; what the same turn brings shares it', async () => {
  const { db, counted, onDisk, close } = open(10_000);
  try {
    const ingest = (v: string) => transaction(db, () => void db.prepare('INSERT INTO t (v) VALUES (?)').run(v), { group: true });
    for (const v of ['one', 'after', 'another']) {
      const before = counted.commits;
      ingest(v);
      await committed(db);
      assert.is(counted.commits - before, 1, `${v}: one commit, not a 10 s window`);
      assert.ok(onDisk().includes(v));
    }
    const before = counted.commits;
    ingest('x');
    ingest('y');
    assert.ok(pendingCommit(db), 'the group is open until the turn ends');
    await turn();
    assert.not.ok(pendingCommit(db));
    assert.is(counted.commits - before, 1, 'two ingests of one turn, one commit');
  } finally {
    close();
  }
});

test('announced writers on their way hold the group until each is done; one that writes nothing lets it go', async () => {
  const { db, counted, onDisk, close } = open(10_000);
  try {
    const a = expectWrite(db);
    const b = expectWrite(db);
    const c = expectWrite(db);
    const ingest = (w: ReturnType<typeof expectWrite>, v: string) => w.run(() => transaction(db, () => void db.prepare('INSERT INTO t (v) VALUES (?)').run(v), { group: true }));
    ingest(a, 'a');
    a.done();
    const acked = committed(db);
    await sleep(30);
    assert.ok(pendingCommit(db), 'b and c are still coming');
    ingest(b, 'b');
    b.done();
    await sleep(30);
    assert.ok(pendingCommit(db), 'c is still coming');
    assert.equal(onDisk(), []);
    c.done();
    await acked;
    assert.equal(onDisk(), ['a', 'b']);
    assert.is(counted.commits, 1);
  } finally {
    close();
  }
});

test('the clients a commit answered are expected back within the window: the next group waits for as many, a lone client for none', async () => {
  const { db, counted, close } = open(10_000);
  try {
    const round = async (n: number) => {
      const writers = Array.from({ length: n }, () => expectWrite(db));
      const acks = writers.map((w, i) => {
        w.run(() => transaction(db, () => void db.prepare('INSERT INTO t (v) VALUES (?)').run(`w${i}`), { group: true }));
        w.done();
        return committed(db);
      });
      await Promise.all(acks);
    };
    await round(3);
    const before = counted.commits;
    // One of the three comes back: the other two are expected.
    const w = expectWrite(db);
    w.run(() => transaction(db, () => void db.prepare('INSERT INTO t (v) VALUES (?)').run('back'), { group: true }));
    w.done();
    const acked = committed(db);
    await sleep(30);
    assert.ok(pendingCommit(db), 'two more answered clients are expected');
    await round(2);
    await acked;
    assert.is(counted.commits - before, 1, 'the three came back into one commit');
    // From now on one client alone: each commit answered one writer, so nothing more is expected.
    await round(1);
    await round(1);
    const lone = counted.commits;
    const started = performance.now();
    await round(1);
    assert.is(counted.commits - lone, 1);
    assert.ok(performance.now() - started < 1000, 'a lone client does not wait for the 10 s cap');
  } finally {
    close();
  }
});

test('a paced group commits at the next turn once an acknowledgement waits and no writer is coming (a driver that awaits each answer)', async () => {
  const { db, insert, onDisk, close } = open(10_000);
  try {
    insert('first');
    insert('awaited');
    assert.ok(pendingCommit(db), 'within the window a paced frame groups');
    const watched = committed(db, undefined, { hurry: false });
    await sleep(30);
    assert.ok(pendingCommit(db), 'a watcher alone does not hurry it: the window (10 s) decides');
    const started = performance.now();
    await committed(db);
    assert.ok(performance.now() - started < 1000, 'committed at the next turn, not after the window');
    await watched;
    assert.equal(onDisk(), ['first', 'awaited']);
  } finally {
    close();
  }
});

test('without group commit (the default) every transaction commits at once', () => {
  const g = open(0);
  try {
    for (let i = 0; i < 5; i++) g.insert(`x${i}`);
    assert.is(g.counted.commits, 5);
    assert.not.ok(pendingCommit(g.db));
  } finally {
    g.close();
  }
});

test.run();
