import { AsyncLocalStorage } from 'node:async_hooks';
import type { DatabaseSync } from 'node:sqlite';
import { isIoError, isReadOnlyError, isStorageFullError } from './errors.ts';

// Transactions on one connection: what rides a commit (riders, afterCommit), and group commit of
// ingests (docs/decisions.md "Issue 22: a write path made for flash"). Re-exported by
// sqlite.ts. node:sqlite is synchronous: transaction(fn) returns fn's value at once, whether its
// work is committed at once or joins a group that commits a few tens of milliseconds later.
//
// One file of more than 500 lines on purpose: riders, afterCommit work, group commit and the
// announced writers are one state machine per connection (the Connection and Group records
// below); each part reads and changes the others' state inside the same COMMIT, and split over
// files its invariants could no longer be read in one place.

/** The last transaction() on a connection that failed for want of room or of write access, or
 *  for a failing file system (SQLITE_FULL, SQLITE_READONLY, SQLITE_IOERR), and when; forgotten
 *  at the next commit. DbHealth reads it. */
export interface WriteTrouble {
  error: unknown;
  /** performance.now() when it failed: an age, not a time. */
  atMs: number;
}
const troubles = new WeakMap<DatabaseSync, WriteTrouble>();

export function lastWriteTrouble(db: DatabaseSync): WriteTrouble | undefined {
  return troubles.get(db);
}

function noteOutcome(db: DatabaseSync, error: unknown): void {
  if (error === null) troubles.delete(db);
  else if (isStorageFullError(error) || isReadOnlyError(error) || isIoError(error)) troubles.set(db, { error, atMs: performance.now() });
}

/**
 * Writes that wait for a commit that happens anyway: the delivery write-behind, the
 * audit log and the uplink's acknowledged rows register here, and the next transaction on the
 * connection carries their writes, after its own work. Each rider runs inside a savepoint, so a
 * rider that fails is rolled back alone and never costs the host its commit. Inside a group
 * (below) every unit carries them, so the connection reads them at once (the queue caps count
 * what the dispatcher delivered), and one rider may ride several times before the COMMIT:
 * committed() and failed() then come once per ride, committed() in the order of the rides,
 * failed() in the reverse order (the last ride first). A rider keeps what each ride wrote.
 */
export interface CommitRider {
  /** Runs the rider's writes inside the host transaction. */
  ride(): void;
  /** The COMMIT made the oldest ride not yet told durable. */
  committed(): void;
  /** The newest ride not yet told was rolled back (the rider threw, or the host failed): keep
   *  its writes for later. */
  failed(error: unknown): void;
}

const riders = new WeakMap<DatabaseSync, Set<CommitRider>>();

/** The rider's writes go with the next commit on this connection (once). */
export function rideNextCommit(db: DatabaseSync, rider: CommitRider): void {
  let set = riders.get(db);
  if (!set) riders.set(db, (set = new Set()));
  set.add(rider);
}

/** The rider commits on its own after all (or has nothing left to write). */
export function leaveRide(db: DatabaseSync, rider: CommitRider): void {
  riders.get(db)?.delete(rider);
}

/** Work for after the current transaction commits (in-memory counters): a
 *  /metrics counter bumped inside a transaction that then rolls back, and is replayed, would
 *  count twice. Outside a transaction it runs at once; while a group is open, after the group's
 *  COMMIT. Dropped when the transaction, or the savepoint it was queued in (a rider, a nested
 *  transaction(), a unit of a group), rolls back. */
const afterCommits = new WeakMap<DatabaseSync, Array<() => void>>();
export function afterCommit(db: DatabaseSync, fn: () => void): void {
  const list = db.isTransaction ? afterCommits.get(db) : undefined;
  if (list) list.push(fn);
  else fn();
}
function dropAfterCommits(db: DatabaseSync, mark: number): void {
  const list = afterCommits.get(db);
  if (list) list.length = Math.min(list.length, mark);
}
function runAfterCommits(list: Array<() => void>): void {
  for (const fn of list) {
    try {
      fn();
    } catch {
      // A counter that throws must not undo a commit that happened.
    }
  }
}

/** Commits made by transaction() (a group counts once) on each connection. */
const commits = new WeakMap<DatabaseSync, number>();
export function commitCount(db: DatabaseSync): number {
  return commits.get(db) ?? 0;
}

// ---- group commit ----------------------------------------------------------------------------
//
// A commit costs the card far more than the rows it carries: every b-tree it touches writes at
// least one whole page to the WAL. At 50 msg/s each message committing on its own wrote about
// 18 times its rows' bytes. A connection with group commit on (enableGroupCommit, the bridge's)
// therefore lets the transactions that ask for it (ingests: { group }) share a commit, but a
// write waits for one only while more writes are known to be coming:
//
// - an API ingest (group: true) opens a group, or joins the open one: BEGIN IMMEDIATE stays open,
//   it and every transaction after it runs as a SAVEPOINT ("unit") inside it (one that fails
//   rolls back alone). The group COMMITs at the next turn of the event loop (setImmediate) once
//   no announced writer is still on its way: whatever the loop read in the same turn (requests
//   that arrived together) joins it, and a client that sends one request after another waits a
//   turn, not a window. Writers are announced by expectWrite: the HTTP layer counts every call
//   that may change something from its arrival until its handler is done, so a request whose
//   body is still arriving holds the commit for the ones already in, at most `windowMs`.
// - a frame whose sender repeats it (group: 'paced') relies on the window's evidence: one that
//   comes within `windowMs` of the last ingest COMMIT opens a group committed at last COMMIT +
//   windowMs (at most one commit per window: a Meshtastic-like flow at 50 msg/s groups with
//   nobody announcing anything), or at the next turn once an acknowledgement waits for it
//   (committed(), hurrying) and no announced writer is coming: a driver that awaits each
//   answer (the SMS driver deleting from the SIM) waits a turn. Outside the window it commits
//   at once (or groups with announced writers). A frame whose sender will not repeat it is not
//   grouped at all (router/held-frames.ts).
// - MAX_WAITING acknowledgements waiting commit a group at the next turn whatever is still
//   coming: 8 messages already share the commit's fixed pages (about 30 of 1 KiB).
// - what acknowledges a write (an HTTP 2xx, a bearer's receive() answer) first awaits
//   committed(db): nothing acknowledged can be lost by a crash, as before.
// - the rest of the bridge works on from the open group: it reads the same connection, so the
//   dispatcher sends a message before its group commits (receive-to-delivered stays short).
//   A crash before the COMMIT loses only what nobody was told is stored; a frame sent from the
//   lost group goes out again when its sender repeats it (at least once).
// - a transaction that does not ask to group (an API change, a write-behind's own flush, such a
//   frame) joins an open group as a unit and commits the group at once: it is committed when it
//   returns, as before, and a lock we hold is never waited for.
// - a failed group COMMIT (SQLITE_FULL, an I/O error) rejects every committed() waiting and is
//   told to onGroupFailed listeners, which drop what they read from the group.
// - while another process wants to write (`yieldTo`: db/write-wanted.ts), no group opens: each
//   ingest commits alone and the lock is free between commits. Under a steady flow groups
//   follow each other with the lock free for a millisecond between them, and SQLite's busy wait
//   in the other process (it looks every 100 ms) failed 9 times in 15.
// - only commits that carry an ingest start a window: a background commit (the write-behind's
//   or the audit's own flush) does not make the next frame wait for a group.
// - the 'window' policy is the older rule (docs/decisions.md), for the benchmark to measure beside: every
//   ingest within the window of the last ingest COMMIT opens a group that waits for its timer
//   or MAX_WAITING acknowledgements; outside it, it commits at once.

/** Acknowledgements waiting (committed()) that make a group commit at once. */
export const MAX_WAITING = 8;

/** Waits that are not acknowledgements (committed(db, since, { hurry: false })) do not count. */
export interface CommittedOptions {
  /** False: someone only watches for the commit (a log line, a read after it); the group is
   *  not committed sooner for them. Default true: an acknowledgement waits. */
  hurry?: boolean;
}

/** How a connection groups: 'writers' waits only while writes are known to be coming (the
 *  bridge's); 'window', the older rule (above), for the benchmark. */
export type GroupPolicy = 'writers' | 'window';

interface Group {
  /** Cancels the scheduled COMMIT. */
  timer: (() => void) | undefined;
  /** Opened on the window's evidence alone (frames whose senders repeat, or the 'window'
   *  policy): it waits for its timer unless an acknowledgement waits. */
  onWindow: boolean;
  /** The COMMIT at the next turn is scheduled. */
  soon: boolean;
  /** Announced writers done while it was open. */
  writers: number;
  /** Everyone waiting for this group's COMMIT (committed()). */
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
  /** How many of them are acknowledgements (MAX_WAITING). */
  hurrying: number;
  /** The units' afterCommit work, run after the COMMIT. */
  after: Array<() => void>;
  /** The riders' rides in this group, in order (one entry per ride). */
  aboard: CommitRider[];
}

interface Connection {
  /** 0: every transaction commits at once. */
  windowMs: number;
  /** performance.now() of the last COMMIT that carried an ingest (a group, or a transaction
   *  that asked to group and committed alone). */
  lastCommitAt: number;
  /** True while another process wants the write lock: no group opens. */
  yieldTo: () => boolean;
  policy: GroupPolicy;
  /** Announced writers (expectWrite) still on their way to their commit. */
  coming: number;
  /** Announced writers done while the last committed group was open: their clients were
   *  answered by its COMMIT, and one that keeps requests in flight sends the next at once. */
  answered: number;
  /** Announced writers arrived since that COMMIT (taken to be those clients coming back). */
  arrived: number;
  /** transaction() bodies running now (a unit, a nested savepoint, riders). */
  depth: number;
  group: Group | undefined;
  failed: Set<(error: unknown) => void>;
  /** Groups lost so far (commitMark), and the last one's error. */
  failures: number;
  lastFailure: unknown;
}

const connections = new WeakMap<DatabaseSync, Connection>();
function connection(db: DatabaseSync): Connection {
  let c = connections.get(db);
  if (!c) connections.set(db, (c = { windowMs: 0, lastCommitAt: -Infinity, yieldTo: () => false, policy: 'writers', coming: 0, answered: 0, arrived: 0, depth: 0, group: undefined, failed: new Set(), failures: 0, lastFailure: undefined }));
  return c;
}

/** Turns group commit on for a connection (0: off, the default): transactions that ask to group
 *  share a COMMIT while more writes are known to be coming (above), a group waiting at most
 *  `windowMs`; none opens while `yieldTo()` says another process wants the write lock. */
export function enableGroupCommit(db: DatabaseSync, windowMs: number, yieldTo: () => boolean = () => false, policy: GroupPolicy = 'writers'): void {
  const c = connection(db);
  c.windowMs = windowMs;
  c.yieldTo = yieldTo;
  c.policy = policy;
}

/** A write known to be coming on a connection (an HTTP call that may change something, from its
 *  arrival): while it is on its way, ingests share a group rather than commit one by one. */
export interface ExpectedWrite {
  /** Runs the writer's work: a transaction inside it knows the writer coming is itself. */
  run<T>(fn: () => T): T;
  /** The writer is done (it waits for its commit, or wrote nothing): no longer coming. Once. */
  done(): void;
}

const runningWriter = new AsyncLocalStorage<{ db: DatabaseSync; isDone: () => boolean }>();

/** Announces a write coming on the connection (an HTTP call that may change something). */
export function expectWrite(db: DatabaseSync): ExpectedWrite {
  const c = connection(db);
  c.coming++;
  c.arrived++;
  let finished = false;
  const self = { db, isDone: () => finished };
  return {
    run: (fn) => runningWriter.run(self, fn),
    done: () => {
      if (finished) return;
      finished = true;
      c.coming--;
      if (c.group) {
        c.group.writers++;
        commitWhenAllWait(db, c, c.group);
      }
    },
  };
}

/** Writers expected back: the clients the last COMMIT answered that have not sent their next
 *  write yet, within the window of that COMMIT. A client that sends one request after another
 *  is the one that comes back: nothing more is expected, and it waits a turn, not a window. */
function expectedBack(c: Connection): number {
  return performance.now() - c.lastCommitAt < c.windowMs ? Math.max(0, c.answered - c.arrived) : 0;
}

/** Announced writers on their way besides the one running now. */
function othersComing(db: DatabaseSync, c: Connection): number {
  const me = runningWriter.getStore();
  return c.coming - (me && me.db === db && !me.isDone() ? 1 : 0);
}

/** No announced writer is on its way and none is expected back: nothing known could still share
 *  the commit, so it is made at the next turn (what the event loop has read meanwhile joins it).
 *  A group opened on the window's evidence alone waits for that, or for an acknowledgement. */
function commitWhenAllWait(db: DatabaseSync, c: Connection, group: Group): void {
  if (c.policy !== 'writers' || group.soon || c.coming > 0 || (group.onWindow && group.hurrying === 0) || expectedBack(c) > 0) return;
  group.soon = true;
  scheduleCommit(db, group, 0);
}

/** Groups lost on the connection so far: taken before work whose acknowledgement does not
 *  follow it in the same turn (an HTTP handler: committed(db, mark) after it). */
export function commitMark(db: DatabaseSync): number {
  return connections.get(db)?.failures ?? 0;
}

/** Resolves once everything written on the connection so far is committed (at once when no
 *  group is open); rejects with the COMMIT's error when the group holding it failed. `since`
 *  (commitMark taken before the work): rejects too if any group was lost since, which may
 *  have held the work (a non-grouping transaction can commit the group, and fail, between the
 *  work and this call): an acknowledgement must never be given for what is gone, and a change
 *  answered "not saved" that was saved is the safe mistake (the sender repeats it). */
export function committed(db: DatabaseSync, since?: number, options: CommittedOptions = {}): Promise<void> {
  const c = connections.get(db);
  const group = c?.group;
  const lostSince = () => c !== undefined && since !== undefined && c.failures > since;
  if (!group) return lostSince() ? Promise.reject(c!.lastFailure) : Promise.resolve();
  const waiting = new Promise<void>((resolve, reject) => group.waiters.push({ resolve, reject }));
  if (options.hurry !== false) {
    if (++group.hurrying === MAX_WAITING) scheduleCommit(db, group, 0);
    else commitWhenAllWait(db, c!, group);
  }
  return waiting.then(() => {
    if (lostSince()) throw c!.lastFailure;
  });
}

/** True while a group is open: what was written since the last COMMIT is not durable yet. */
export function pendingCommit(db: DatabaseSync): boolean {
  return connections.get(db)?.group !== undefined;
}

/** True inside a transaction() body, or a transaction opened some other way; false between the
 *  units of an open group, where everything read was written by finished units (and is as good
 *  as committed unless the group's COMMIT fails). */
export function inTransaction(db: DatabaseSync): boolean {
  const c = connections.get(db);
  return db.isTransaction && !(c?.group && c.depth === 0);
}

/** Listens for groups whose COMMIT failed (rows read from them are gone); returns the unsubscribe. */
export function onGroupFailed(db: DatabaseSync, listener: (error: unknown) => void): () => void {
  const c = connection(db);
  c.failed.add(listener);
  return () => c.failed.delete(listener);
}

/** Commits the open group now (for what needs a real commit: a read that must see a committed
 *  state, shutdown). No-op without a group, or from inside a transaction() body. Throws the
 *  COMMIT's error after telling the group's waiters. */
export function commitGroup(db: DatabaseSync): void {
  const c = connections.get(db);
  const group = c?.group;
  if (!c || !group || c.depth > 0) return;
  if (!db.isOpen || !db.isTransaction) {
    const error = new Error('the open group of writes was lost before its commit (the database closed, or SQLite rolled it back)');
    abandonGroup(db, c, error);
    throw error;
  }
  try {
    c.depth++;
    try {
      boardRiders(db, group.aboard);
    } finally {
      c.depth--;
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.isOpen && db.isTransaction) db.exec('ROLLBACK');
    abandonGroup(db, c, error);
    throw error;
  }
  c.group = undefined;
  group.timer?.();
  c.answered = group.writers;
  c.arrived = c.coming;
  finishCommit(db, c, group.aboard, group.after, true);
  for (const w of group.waiters) w.resolve();
}

/**
 * A statement run outside transaction() that failed with SQLITE_FULL or an I/O error may have
 * rolled the whole open group back, which SQLite does without telling. Noticed here, the group
 * is abandoned as a failed COMMIT would be (its waiters and riders are told, and the riders keep
 * their writes): before a transaction, and before a read that trusts what the group wrote.
 */
export function noticeLostGroup(db: DatabaseSync): void {
  const c = connections.get(db);
  if (c?.group && c.depth === 0 && !db.isTransaction) abandonGroup(db, c, new Error('SQLite rolled the open group of writes back'));
}

/** The group is gone (its COMMIT failed, or SQLite rolled it back): nothing of it is stored. */
function abandonGroup(db: DatabaseSync, c: Connection, error: unknown): void {
  const group = c.group!;
  c.group = undefined;
  c.failures++;
  c.lastFailure = error;
  group.timer?.();
  afterCommits.delete(db);
  noteOutcome(db, error);
  for (const rider of group.aboard.reverse()) tellFailed(rider, error);
  for (const w of group.waiters) w.reject(error);
  for (const listener of c.failed) {
    try {
      listener(error);
    } catch {
      // A listener's own trouble must not hide the group's.
    }
  }
}

/** How a transaction may share its COMMIT (group commit, above): `true`, an API ingest, with
 *  what the same turn and the announced writers bring; 'paced', a frame whose sender repeats it,
 *  on the window's evidence or with announced writers. */
export type Grouping = boolean | 'paced';

/** Runs fn inside BEGIN IMMEDIATE ... COMMIT, rolling back on any throw. The writes of the
 *  riders waiting for a commit (rideNextCommit) go with it. Inside another transaction it is
 *  a savepoint of that one: its work commits with the outer transaction, or not at all (a
 *  frame split into parts is stored whole or not at all, router/held-frames.ts). `group`: on a
 *  connection with group commit on, it may share its COMMIT with the transactions around it
 *  (see above); the caller awaits committed(db) before it tells anyone the work is stored. */
export function transaction<T>(db: DatabaseSync, fn: () => T, options: { group?: Grouping } = {}): T {
  const c = connection(db);
  noticeLostGroup(db);
  if (c.depth > 0 || (db.isTransaction && !c.group)) return savepoint(db, c, fn);
  if (c.group) {
    const result = unit(db, c, c.group, fn);
    if (!options.group) commitGroup(db);
    return result;
  }
  const grouping = options.group ?? false;
  if (grouping && c.windowMs > 0 && !c.yieldTo()) {
    const inWindow = performance.now() - c.lastCommitAt < c.windowMs;
    if (c.policy === 'window' || grouping === 'paced') {
      if (inWindow) return openGroup(db, c, fn, true);
      if (c.policy === 'writers' && othersComing(db, c) > 0) return openGroup(db, c, fn, false);
    } else return openGroup(db, c, fn, false);
  }
  return commitAlone(db, c, fn, grouping !== false);
}

/** BEGIN IMMEDIATE; the failure is remembered for the health check. */
function begin(db: DatabaseSync): void {
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    noteOutcome(db, error);
    throw error;
  }
}

/** One transaction, one COMMIT: the way every transaction went before group commit. `ingest`:
 *  it asked to group (its COMMIT starts a window). */
function commitAlone<T>(db: DatabaseSync, c: Connection, fn: () => T, ingest: boolean): T {
  begin(db);
  const aboard: CommitRider[] = [];
  const after: Array<() => void> = [];
  afterCommits.set(db, after);
  let result: T;
  c.depth++;
  try {
    result = fn();
    boardRiders(db, aboard);
    db.exec('COMMIT');
  } catch (error) {
    // SQLITE_FULL (and a few other errors) may have rolled the transaction back already.
    if (db.isTransaction) db.exec('ROLLBACK');
    afterCommits.delete(db);
    noteOutcome(db, error);
    for (const rider of aboard) tellFailed(rider, error);
    throw error;
  } finally {
    c.depth--;
  }
  finishCommit(db, c, aboard, after, ingest);
  return result;
}

/** Opens a group with fn as its first unit. Unless it commits sooner (commitWhenAllWait,
 *  MAX_WAITING), it commits at last COMMIT + windowMs when opened on the window's evidence,
 *  windowMs from now otherwise (an announced writer that stalls holds the others that long). */
function openGroup<T>(db: DatabaseSync, c: Connection, fn: () => T, onWindow: boolean): T {
  begin(db);
  const group: Group = { timer: undefined, onWindow, soon: false, writers: 0, waiters: [], hurrying: 0, after: [], aboard: [] };
  c.group = group;
  afterCommits.set(db, group.after);
  let result: T;
  try {
    result = unit(db, c, group, fn);
  } catch (error) {
    // Nothing else is in the group yet: give the lock back now rather than at the timer.
    if (c.group === group) {
      c.group = undefined;
      afterCommits.delete(db);
      if (db.isTransaction) db.exec('ROLLBACK');
    }
    throw error;
  }
  scheduleCommit(db, group, onWindow ? c.lastCommitAt + c.windowMs - performance.now() : c.windowMs);
  commitWhenAllWait(db, c, group);
  return result;
}

/** The group's COMMIT in `delayMs` (replacing the one scheduled before); 0: at the next turn,
 *  after the I/O the event loop has read now (setImmediate). */
function scheduleCommit(db: DatabaseSync, group: Group, delayMs: number): void {
  group.timer?.();
  const commit = () => {
    group.timer = undefined;
    if (connections.get(db)?.group !== group) return;
    try {
      commitGroup(db);
    } catch {
      // Told to the waiters and the onGroupFailed listeners.
    }
  };
  if (delayMs <= 0) {
    const immediate = setImmediate(commit);
    group.timer = () => clearImmediate(immediate);
  } else {
    const timeout = setTimeout(commit, delayMs);
    group.timer = () => clearTimeout(timeout);
  }
}

/** One transaction's work inside an open group: a savepoint, rolled back alone if it fails.
 *  The riders waiting ride after it, outside its savepoint, as they would a transaction's. */
function unit<T>(db: DatabaseSync, c: Connection, group: Group, fn: () => T): T {
  c.depth++;
  try {
    const result = inSavepoint(db, 'unit', fn);
    boardRiders(db, group.aboard);
    return result;
  } catch (error) {
    // The error took the whole group with it (SQLITE_FULL and I/O errors can, in the unit or
    // in a rider): this unit's work is gone with the others.
    if (!db.isTransaction && c.group === group) abandonGroup(db, c, error);
    noteOutcome(db, error);
    throw error;
  } finally {
    c.depth--;
  }
}

/** The riders' writes, each in a savepoint of its own, before the COMMIT that carries them. */
function boardRiders(db: DatabaseSync, aboard: CommitRider[]): void {
  const waiting = riders.get(db);
  if (!waiting || waiting.size === 0) return;
  const list = [...waiting];
  waiting.clear();
  const after = afterCommits.get(db);
  for (const rider of list) {
    db.exec('SAVEPOINT rider');
    const mark = after?.length ?? 0;
    try {
      rider.ride();
      db.exec('RELEASE rider');
      aboard.push(rider);
    } catch (error) {
      dropAfterCommits(db, mark);
      if (db.isTransaction) {
        db.exec('ROLLBACK TO rider');
        db.exec('RELEASE rider');
      }
      tellFailed(rider, error);
      // The error took the whole transaction with it (SQLITE_FULL can): the host fails too.
      if (!db.isTransaction) throw error;
    }
  }
}

function tellFailed(rider: CommitRider, error: unknown): void {
  try {
    rider.failed(error);
  } catch {
    // A rider's own trouble in keeping its writes must not cost the host its commit.
  }
}

/** After a COMMIT: counted, remembered as the last if it carried an ingest, and what waited for
 *  it runs. */
function finishCommit(db: DatabaseSync, c: Connection, aboard: CommitRider[], after: Array<() => void>, ingest: boolean): void {
  commits.set(db, commitCount(db) + 1);
  if (ingest) c.lastCommitAt = performance.now();
  noteOutcome(db, null);
  afterCommits.delete(db);
  for (const rider of aboard) rider.committed();
  runAfterCommits(after);
}

function savepoint<T>(db: DatabaseSync, c: Connection, fn: () => T): T {
  c.depth++;
  try {
    return inSavepoint(db, 'nested', fn);
  } finally {
    c.depth--;
  }
}

/** fn inside SAVEPOINT `name`; if it throws, its work and the afterCommit work it queued are
 *  rolled back alone (a unit of a group, a nested transaction()). */
function inSavepoint<T>(db: DatabaseSync, name: 'unit' | 'nested', fn: () => T): T {
  db.exec(`SAVEPOINT ${name}`);
  const mark = afterCommits.get(db)?.length ?? 0;
  try {
    const result = fn();
    db.exec(`RELEASE ${name}`);
    return result;
  } catch (error) {
    dropAfterCommits(db, mark);
    if (db.isTransaction) {
      db.exec(`ROLLBACK TO ${name}`);
      db.exec(`RELEASE ${name}`);
    }
    throw error;
  }
}
