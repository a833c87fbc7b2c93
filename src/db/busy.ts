import type { DatabaseSync } from 'node:sqlite';
import type { Logger } from '../lib/log.ts';
import { BUSY_TIMEOUT_MS, commitCount, isLockHeldError, transaction, withoutBusyWait } from './sqlite.ts';

// Waiting for another process's write lock without stopping the bridge
// (docs/decisions.md "Issue 14: waiting for a lock off the event loop"). node:sqlite is
// synchronous: SQLite's own busy wait spins inside the call and nothing else runs meanwhile, not
// the HTTP server, not a radio's keep-alive. The running bridge therefore waits at most
// BUSY_SLICE_MS inside SQLite; whoever met the lock then waits on a timer, checking the lock
// every LOCK_POLL_MS, up to BUSY_TIMEOUT_MS in all, and runs its writes again once it is free.

/** The longest the running bridge's connection waits inside SQLite for a lock (PRAGMA busy_timeout). */
export const BUSY_SLICE_MS = 100;
/** How often a waiter looks whether the lock is free again. */
export const LOCK_POLL_MS = 50;

/** A lock still held after BUSY_TIMEOUT_MS of waiting: isBusyError() knows it (SQLITE_BUSY),
 *  so the API answers it like SQLite's own, 503 db-busy. */
export class DatabaseBusyError extends Error {
  readonly errcode = 5;
  constructor(waitedMs: number) {
    super(`database is locked: another process held the write lock for ${Math.round(waitedMs)} ms`);
  }
}

/** Whether the write lock is free now: taken and given back at once, without waiting and without
 *  writing anything. Inside a transaction of our own the lock is ours. */
export function writeLockFree(db: DatabaseSync): boolean {
  if (!db.isOpen || db.isTransaction) return true;
  try {
    withoutBusyWait(db, () => {
      db.exec('BEGIN IMMEDIATE');
      db.exec('ROLLBACK');
    });
    return true;
  } catch (error) {
    if (isLockHeldError(error)) return false;
    throw error;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves once the write lock is free; throws DatabaseBusyError when `deadline`
 *  (performance.now() milliseconds) passes first. */
export async function untilWriteLockFree(db: DatabaseSync, deadline: number, startedAt = performance.now()): Promise<void> {
  while (!writeLockFree(db)) {
    if (performance.now() >= deadline) throw new DatabaseBusyError(performance.now() - startedAt);
    await sleep(LOCK_POLL_MS);
  }
}

// total_changes(): rows changed on this connection since it opened, rolled back or not.
const changeCounter = new WeakMap<DatabaseSync, ReturnType<DatabaseSync['prepare']>>();

/** A mark that moves whenever the connection changed a row or committed: work that failed
 *  without moving it has left nothing behind and may simply be run again, and work that did
 *  not move it has nothing to wait a commit for. */
export function writeMark(db: DatabaseSync): string {
  if (!db.isOpen) return 'closed';
  let read = changeCounter.get(db);
  if (!read) changeCounter.set(db, (read = db.prepare('SELECT total_changes() AS n')));
  return `${commitCount(db)}/${(read.get() as { n: number }).n}`;
}

/**
 * Runs `work` and, when it fails on another process's lock before it changed anything, runs it
 * again once the lock is free, from a timer, up to BUSY_TIMEOUT_MS after the first try. With
 * `gate`, the lock is first waited for the same way, so work that is sure to write does not
 * meet it at all. Work that met the lock after writing something (a second transaction of a
 * request, say) is not repeated: its error goes to the caller (503 db-busy), as it would after
 * SQLite's own wait. Other work may run on the connection while this one waits; a change it
 * makes in that time also stops the repetition, which errs on the side of not repeating.
 */
export interface RetryOptions {
  /** Wait for the lock before the first try too. */
  gate?: boolean;
  /** Default BUSY_TIMEOUT_MS. */
  totalMs?: number;
  /** Asked before a repetition: false when the work has done something outside the database
   *  (an HTTP answer begun). */
  repeatable?: () => boolean;
}

export async function retryWhileBusy<T>(db: DatabaseSync, work: () => T | Promise<T>, options: RetryOptions = {}): Promise<T> {
  const startedAt = performance.now();
  const deadline = startedAt + (options.totalMs ?? BUSY_TIMEOUT_MS);
  for (let first = true; ; first = false) {
    // A repeat waits a poll first: the lock may be free again already, or never have been the
    // trouble, and a repeat at once would spin without letting anything else run.
    if (!first) await sleep(LOCK_POLL_MS);
    if (options.gate || !first) await untilWriteLockFree(db, deadline, startedAt);
    const mark = writeMark(db);
    try {
      return await work();
    } catch (error) {
      if (!isLockHeldError(error) || performance.now() >= deadline || writeMark(db) !== mark || options.repeatable?.() === false) throw error;
    }
  }
}

/**
 * Writes that must happen, in order, but need not happen now: node reports, what drivers keep
 * across restarts. Each runs at once without waiting for another process's lock; one that meets
 * the lock waits here, with every later one behind it, and they run once the lock is free (in
 * one transaction per batch, each write in a savepoint of its own). At most `max` wait; later
 * ones are dropped, counted and logged once per episode (the bridge keeps running; a node
 * report is refreshed by the next one). `lost` is told of every write that will never be made.
 */
export class DeferredWrites {
  readonly #db: DatabaseSync;
  readonly #log: Logger;
  readonly #name: string;
  readonly #max: number;
  readonly #waiting: Array<{ write: () => void; lost?: () => void }> = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Dropped in this episode of the lock (logged when it starts and when it ends). */
  #dropped = 0;
  /** Dropped since start (metrics). */
  droppedTotal = 0;

  constructor(db: DatabaseSync, log: Logger, name: string, max = 10_000) {
    this.#db = db;
    this.#log = log;
    this.#name = name;
    this.#max = max;
  }

  /** Writes waiting for the lock. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `write` now, or after the writes already waiting once the lock is free. Errors other
   *  than a held lock are thrown to the caller, as before. */
  run(write: () => void, lost?: () => void): void {
    if (this.#waiting.length === 0) {
      try {
        withoutBusyWait(this.#db, write);
        return;
      } catch (error) {
        if (!isLockHeldError(error)) throw error;
      }
    }
    if (this.#waiting.length >= this.#max) {
      this.droppedTotal++;
      if (this.#dropped++ === 0) this.#log.error(`${this.#name}_dropped`, { reason: 'the database stayed locked by another process', waiting: this.#waiting.length });
      lost?.();
      return;
    }
    this.#waiting.push({ write, lost });
    this.#schedule();
  }

  /** Tries the waiting writes now; `wait`: with SQLite's full busy wait (at shutdown, when
   *  nothing else runs). */
  flush(options: { wait?: boolean } = {}): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#waiting.length === 0 || !this.#db.isOpen) return;
    const batch = this.#waiting.splice(0);
    const commit = () =>
      transaction(this.#db, () => {
        // Each in a savepoint: one that fails now is lost alone, not with the batch.
        for (const entry of batch) {
          this.#db.exec('SAVEPOINT deferred');
          try {
            entry.write();
          } catch (error) {
            this.#db.exec('ROLLBACK TO deferred');
            this.#log.error(`${this.#name}_failed`, { error: (error as Error).message, lost: 1 });
            entry.lost?.();
          }
          this.#db.exec('RELEASE deferred');
        }
      });
    try {
      if (options.wait) withBusyWait(this.#db, commit);
      else withoutBusyWait(this.#db, commit);
    } catch (error) {
      if (isLockHeldError(error)) {
        this.#waiting.unshift(...batch);
        this.#schedule();
        return;
      }
      this.#log.error(`${this.#name}_failed`, { error: (error as Error).message, lost: batch.length });
      for (const entry of batch) entry.lost?.();
      return;
    }
    if (this.#dropped > 0) this.#log.warn(`${this.#name}_recovered`, { dropped: this.#dropped });
    this.#dropped = 0;
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.flush();
    }, LOCK_POLL_MS);
    this.#timer.unref?.();
  }

  /** Stops retrying (the bridge is closing): what is waiting is written, waiting up to
   *  BUSY_TIMEOUT_MS for the lock as SQLite does (nothing else needs the event loop now). */
  close(): void {
    this.flush({ wait: true });
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#waiting.length > 0) this.#log.error(`${this.#name}_lost`, { count: this.#waiting.length, reason: 'the database was still locked at shutdown' });
    for (const entry of this.#waiting.splice(0)) entry.lost?.();
  }
}

/** Runs fn with SQLite's own busy wait at BUSY_TIMEOUT_MS (shutdown: nothing else to serve). */
export function withBusyWait<T>(db: DatabaseSync, fn: () => T): T {
  const before = (db.prepare('PRAGMA busy_timeout').get() as { timeout: number }).timeout;
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  try {
    return fn();
  } finally {
    db.exec(`PRAGMA busy_timeout = ${Number(before)}`);
  }
}
