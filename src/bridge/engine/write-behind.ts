import type { DatabaseSync } from 'node:sqlite';
import { writeLockFree } from '../../db/busy.ts';
import { type CommitRider, commitGroup, inTransaction, leaveRide, noticeLostGroup, pendingCommit, rideNextCommit, transaction, withoutBusyWait } from '../../db/sqlite.ts';
import { EventStream } from '../../lib/events.ts';
import type { Logger } from '../../lib/log.ts';

const FLUSH_RETRY_MS = 1000;
/** Most writes kept waiting before the dispatcher stops starting sends. */
export const MAX_DEFERRED_WRITES = 10_000;
/**
 * Longest a delivery's new state (and an audit entry) waits for a commit that happens anyway
 * before it is committed on its own (group commit; docs/decisions.md). A crash loses
 * at most this much: deliveries sent in it are sent again after the restart (at least once).
 */
export const GROUP_COMMIT_MS = 1000;

interface Batch {
  writes: Array<() => void>;
  /** The 'sending' marks the writes consume: restored if the transaction rolls back. */
  marks: Map<string, number>;
  /** The deliveries the writes change (see WriteBehind.#pending). */
  pending: Map<string, Pending>;
  /** Interfaces to wake once the batch is committed (its retries). */
  wake: Set<string>;
}

/** A delivery with writes waiting in memory: its interface, and whether the last of them leaves
 *  it waiting again (a retry). */
interface Pending {
  interfaceId: string;
  retry: boolean;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * The dispatcher's delivery writes (sending, delivered, retrying, dead), written behind and
 * committed in groups: they go with the next transaction on the connection (the
 * next message stored, an API write), or on their own GROUP_COMMIT_MS after the first of them,
 * whichever comes first; a write that puts a delivery back in its queue (a retry) is committed
 * at the next turn of the event loop, so its queue looks again at once. At a steady flow of
 * messages a routed message costs one commit, its ingest, which also carries the previous
 * deliveries' outcomes. A crash can lose the changes not yet committed, which leaves those
 * deliveries pending or sending: they are sent again after the restart (at least once, never
 * lost). DeliveryStore flushes before every other read or write, so the API never sees a state
 * older than the dispatcher's.
 */
export class WriteBehind {
  readonly #db: DatabaseSync;
  readonly #log: Logger;
  readonly #groupCommitMs: number;
  readonly #deferred: Array<() => void> = [];
  /**
   * Deliveries the queue skips, by interface (it reads one interface at a time): those with
   * writes waiting in memory, and those whose retry is written but not committed. A write
   * applied inside an open group of ingests is read back by this connection, so a delivery
   * marked 'sending' or settled there needs no skipping (at hundreds of messages a second the
   * list grew to thousands of ids, compared at every read); a failed group gives the ids back
   * with its writes. A retry stays skipped until its COMMIT: due within the group's window it
   * would be sent a second time in the same group, and a failed group would then replay two
   * 'sending' marks against the one kept per delivery and lose the second outcome.
   */
  #dirty = new Map<string, Set<string>>();
  /** Deliveries with writes in #deferred, with what the last of them does. */
  #pending = new Map<string, Pending>();
  /** Deliveries whose retry is written (in an open group) and not yet committed. */
  readonly #retriesUncommitted = new Set<string>();
  /** 'sending' marks still queued, by delivery id. */
  readonly #sendingAt = new Map<string, number>();
  /** Interfaces to wake once the retries waiting in memory are committed (moved into their
   *  batch when it is taken). */
  #wake = new Set<string>();
  /** The flush scheduled on its own (setImmediate for 0 ms, else a timer), and when it fires. */
  #scheduled: { cancel(): void; atMs: number } | undefined;
  /** After a flush: the interfaces that have a delivery waiting again (the dispatcher listens). */
  readonly flushed = new EventStream<string[]>();
  /** A flush that failed (its writes are kept and retried in a second). */
  readonly failures = new EventStream<Error>();
  #failing = false;
  /** What the last failed flush was refused with (logged once while it stays the same). */
  #failure: string | undefined;
  /** What a transaction carries for us (transaction() in db/sqlite.ts). */
  readonly #rider: CommitRider;

  constructor(db: DatabaseSync, log: Logger, options: { groupCommitMs?: number } = {}) {
    this.#db = db;
    this.#log = log;
    this.#groupCommitMs = options.groupCommitMs ?? GROUP_COMMIT_MS;
    // One batch per ride: a group of ingests carries the writes at each of its units and
    // commits (or loses) them all at once (db/transaction.ts, CommitRider).
    const aboard: Batch[] = [];
    this.#rider = {
      ride: () => {
        this.#cancelSchedule();
        const batch = this.#take();
        aboard.push(batch);
        this.#apply(batch);
      },
      committed: () => {
        const batch = aboard.shift();
        if (batch) this.#done(batch);
      },
      failed: (error) => {
        const batch = aboard.pop();
        if (batch) this.#restore(batch, error);
      },
    };
  }

  /**
   * Queues a write for one delivery; it is committed with the next group. `wakes`: the write
   * leaves the delivery waiting again (a retry), so it is committed at the next turn of the
   * event loop and its queue looks again once it is.
   */
  defer(deliveryId: string, interfaceId: string, write: (fromWaiting: boolean) => void, wakes = false): void {
    // When the delivery's 'sending' mark is still queued, this write replaces it: one UPDATE
    // from waiting straight to the outcome instead of two (fromWaiting tells the write).
    const fromWaiting = this.#sendingAt.delete(deliveryId);
    this.#deferred.push(() => write(fromWaiting));
    this.#pending.set(deliveryId, { interfaceId, retry: wakes });
    this.#markDirty(deliveryId, interfaceId);
    if (wakes) this.#wake.add(interfaceId);
    this.#queued(wakes ? 0 : this.#groupCommitMs);
  }

  /** Queues the 'sending' mark of a delivery the dispatcher is about to send. A send that
   *  ends before the group commits never writes it. */
  deferSending(deliveryId: string, interfaceId: string, nowMs: number, markSending: () => void): void {
    this.#sendingAt.set(deliveryId, nowMs);
    this.#deferred.push(() => {
      if (this.#sendingAt.delete(deliveryId)) markSending();
    });
    this.#pending.set(deliveryId, { interfaceId, retry: false });
    this.#markDirty(deliveryId, interfaceId);
    this.#queued(this.#groupCommitMs);
  }

  /**
   * True while the last flush failed (a full disk, a lock held past 5 s) or MAX_DEFERRED_WRITES
   * wait: the dispatcher starts no send then. A send whose outcome cannot be
   * written would go out again after a restart, and every send adds writes to keep in
   * memory; holding sends bounds them by what is on the air. Clears with the next commit.
   */
  get backlogged(): boolean {
    return this.#failing || this.#deferred.length >= MAX_DEFERRED_WRITES;
  }

  #markDirty(deliveryId: string, interfaceId: string): void {
    let ids = this.#dirty.get(interfaceId);
    if (!ids) this.#dirty.set(interfaceId, (ids = new Set()));
    ids.add(deliveryId);
  }

  #unmarkDirty(deliveryId: string, interfaceId: string): void {
    const ids = this.#dirty.get(interfaceId);
    if (!ids) return;
    ids.delete(deliveryId);
    if (ids.size === 0) this.#dirty.delete(interfaceId);
  }

  /** The ids the queue skips, on every interface. */
  dirtyIds(): string[] {
    return [...this.#dirty.values()].flatMap((ids) => [...ids]);
  }

  /** The ids the queue skips on one interface (see #dirty). */
  dirtyOn(interfaceId: string): ReadonlySet<string> {
    return this.#dirty.get(interfaceId) ?? NONE;
  }

  /**
   * Commits every deferred write now, in one transaction. Inside a transaction someone else
   * opened it only asks to ride that one: their rollback must not take the dispatcher's writes
   * with it (the rider's savepoint keeps them apart), and the scheduled flush commits them
   * otherwise. The flushes this class schedules itself pass wait: false: a lock another
   * process holds fails them at once, to be retried in a second, instead of freezing the
   * event loop up to 5 s. A caller that needs the writes committed before
   * it goes on (DeliveryStore, before its reads and writes) waits.
   */
  flush(options: { wait?: boolean } = {}): void {
    if (this.#deferred.length === 0) return;
    // A send that outlived the shutdown grace settles after the database closed: its state
    // is lost and the delivery is sent again after the restart (at least once).
    if (!this.#db.isOpen) {
      this.#deferred.length = 0;
      this.#dirty = new Map();
      this.#pending = new Map();
      this.#retriesUncommitted.clear();
      this.#wake = new Set();
      this.#sendingAt.clear();
      this.#cancelSchedule();
      leaveRide(this.#db, this.#rider);
      return;
    }
    // A group SQLite rolled back unannounced gives its batches back now, ahead of what waits:
    // taken first, the newer writes would commit before the older ones they follow (a retry
    // written against a 'sending' mark not yet replayed changes nothing, and the mark replayed
    // after it leaves the delivery 'sending' with nothing on the air; review).
    noticeLostGroup(this.#db);
    if (options.wait !== false && pendingCommit(this.#db) && !inTransaction(this.#db)) {
      // Between the units of an open group of ingests (db/transaction.ts): a caller that needs
      // the writes committed (DeliveryStore, before its reads and writes) commits the group
      // now, and they ride it. The write-behind's own timer (wait: false) lets them ride the
      // group's COMMIT when it comes, below.
      if (!this.#failing) rideNextCommit(this.#db, this.#rider);
      try {
        commitGroup(this.#db);
      } catch {
        return; // the rider was told (#restore), and the group's failure its listeners
      }
      if (this.#deferred.length === 0) return;
    }
    if (this.#db.isTransaction) {
      // Inside transaction() the rider goes with its commit (which cancels this timer); a
      // transaction opened some other way is waited out, not polled.
      if (!this.#failing) rideNextCommit(this.#db, this.#rider);
      this.#schedule(FLUSH_RETRY_MS);
      return;
    }
    leaveRide(this.#db, this.#rider);
    this.#cancelSchedule();
    // Another process holds the lock: nothing waits for it inside SQLite (a read of the
    // delivery store would stall the event loop a slice each time); reads go on from what is
    // committed, and the writes wait for the lock on this timer.
    // The same wait for any other refusal of the lock (a file system remounted read-only, an
    // I/O error): thrown from the timer it would end the process with the writes in memory.
    const refused = writeLockRefusal(this.#db);
    if (refused) {
      this.#failed(refused);
      this.#schedule(FLUSH_RETRY_MS);
      return;
    }
    const batch = this.#take();
    try {
      // Riders of other stores (the audit log) go with this commit too.
      const commit = () => transaction(this.#db, () => this.#apply(batch));
      if (options.wait === false) withoutBusyWait(this.#db, commit);
      else commit();
    } catch (error) {
      this.#restore(batch, error);
      return;
    }
    this.#done(batch);
  }

  /** A write was queued: ride the next commit, and commit alone after `delayMs` at the latest. */
  #queued(delayMs: number): void {
    if (!this.#failing) rideNextCommit(this.#db, this.#rider);
    this.#schedule(this.#failing ? FLUSH_RETRY_MS : delayMs);
  }

  #schedule(delayMs: number): void {
    const atMs = performance.now() + delayMs;
    if (this.#scheduled && this.#scheduled.atMs <= atMs) return;
    this.#cancelSchedule();
    if (delayMs === 0) {
      const h = setImmediate(() => this.#fire());
      this.#scheduled = { atMs, cancel: () => clearImmediate(h) };
    } else {
      const h = setTimeout(() => this.#fire(), delayMs);
      this.#scheduled = { atMs, cancel: () => clearTimeout(h) };
    }
  }

  #fire(): void {
    this.#scheduled = undefined;
    this.flush({ wait: false });
  }

  #cancelSchedule(): void {
    this.#scheduled?.cancel();
    this.#scheduled = undefined;
  }

  #take(): Batch {
    const pending = this.#pending;
    this.#pending = new Map();
    // Applied next: the connection then reads these deliveries' new states (see #dirty).
    for (const [id, p] of pending) {
      if (p.retry) this.#retriesUncommitted.add(id);
      else if (!this.#retriesUncommitted.has(id)) this.#unmarkDirty(id, p.interfaceId);
    }
    const wake = this.#wake;
    this.#wake = new Set();
    return { writes: this.#deferred.splice(0), marks: new Map(this.#sendingAt), pending, wake };
  }

  #apply(batch: Batch): void {
    for (const w of batch.writes) w();
  }

  /** Rolled back: keep every write and mark, in order, and try again shortly. Never throws: a
   *  flush usually runs from a timer. */
  #restore(batch: Batch, error: unknown): void {
    this.#deferred.unshift(...batch.writes);
    for (const [id, at] of batch.marks) this.#sendingAt.set(id, at);
    // Rolled back: the queue skips them again, as writes waiting in memory (a newer write of the
    // same delivery, queued since, says what the last one does).
    for (const [id, p] of batch.pending) {
      this.#retriesUncommitted.delete(id);
      if (!this.#pending.has(id)) this.#pending.set(id, p);
      this.#markDirty(id, p.interfaceId);
    }
    for (const interfaceId of batch.wake) this.#wake.add(interfaceId);
    this.#failed((error as Error).message);
    leaveRide(this.#db, this.#rider);
    this.failures.emit(error as Error);
    this.#schedule(FLUSH_RETRY_MS);
  }

  /** A flush failed: logged when the failing starts or its cause changes, not at every retry (a
   *  full disk would write a line a second). The recovery is logged once too (#done). */
  #failed(cause: string): void {
    if (!this.#failing || cause !== this.#failure) this.#log.error('delivery_state_write_failed', { error: cause, action: 'kept in memory; retrying in 1 s' });
    this.#failing = true;
    this.#failure = cause;
  }

  #done(batch: Batch): void {
    if (this.#failing) this.#log.info('delivery_state_write_recovered', { writes: batch.writes.length });
    this.#failing = false;
    this.#failure = undefined;
    // Its retries are committed: their deliveries are the queue's again, but for any with a
    // newer write waiting in memory; then their queues look again. Per batch: a group carrying
    // several batches commits them at once, and a queue woken by an earlier batch's turn would
    // still skip a later batch's retry, and sleep without a timer for it.
    for (const [id, p] of batch.pending) {
      if (!p.retry || !this.#retriesUncommitted.delete(id)) continue;
      if (!this.#pending.has(id)) this.#unmarkDirty(id, p.interfaceId);
    }
    if (batch.wake.size > 0) this.flushed.emit([...batch.wake]);
  }
}

/** Why the write lock cannot be taken now (another process holds it, or SQLite refused it:
 *  a read-only file system, an I/O error), or undefined when it can. */
function writeLockRefusal(db: DatabaseSync): string | undefined {
  try {
    return writeLockFree(db) ? undefined : 'database is locked by another process';
  } catch (error) {
    return (error as Error).message;
  }
}
