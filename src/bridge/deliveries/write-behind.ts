import type { DatabaseSync } from 'node:sqlite';
import { transaction, withoutBusyWait } from '../../db/sqlite.ts';
import { EventStream } from '../../lib/events.ts';
import type { Logger } from '../../lib/log.ts';

const FLUSH_RETRY_MS = 1000;
/** Most writes kept waiting before the dispatcher stops starting sends (issue 14). */
export const MAX_DEFERRED_WRITES = 10_000;

/**
 * The dispatcher's delivery writes (sending, delivered, retrying, dead), written behind:
 * queued and committed together once per turn of the event loop, so three interfaces
 * finishing a send each cost one commit, not six. A crash can lose at most the last turn's
 * changes, which leaves those deliveries pending or sending: they are sent again after the
 * restart (at least once, never lost). DeliveryStore flushes before every other read or
 * write, so the API never sees a state older than the dispatcher's.
 */
export class WriteBehind {
  readonly #db: DatabaseSync;
  readonly #log: Logger;
  readonly #deferred: Array<() => void> = [];
  /** Deliveries with deferred changes, by id, with their interface. */
  readonly #dirty = new Map<string, string>();
  /** 'sending' marks still queued, by delivery id. */
  readonly #sendingAt = new Map<string, number>();
  /** Interfaces to wake after the next flush. */
  readonly #wake = new Set<string>();
  #flushScheduled: ReturnType<typeof setImmediate> | undefined;
  /** After a flush: the interfaces that have a delivery waiting again (the dispatcher listens). */
  readonly flushed = new EventStream<string[]>();
  /** A flush that failed (its writes are kept and retried in a second). */
  readonly failures = new EventStream<Error>();
  #failing = false;

  constructor(db: DatabaseSync, log: Logger) {
    this.#db = db;
    this.#log = log;
  }

  /**
   * Queues a write for one delivery; it is committed with the others of this turn. `wakes`:
   * the write leaves the delivery waiting again (a retry), so its queue must look again once
   * it is committed.
   */
  defer(deliveryId: string, interfaceId: string, write: (fromWaiting: boolean) => void, wakes = false): void {
    // When the delivery's 'sending' mark is still queued, this write replaces it: one UPDATE
    // from waiting straight to the outcome instead of two (fromWaiting tells the write).
    const fromWaiting = this.#sendingAt.delete(deliveryId);
    this.#deferred.push(() => write(fromWaiting));
    this.#dirty.set(deliveryId, interfaceId);
    if (wakes) this.#wake.add(interfaceId);
    this.#flushScheduled ??= setImmediate(() => this.flush({ wait: false }));
  }

  /** Queues the 'sending' mark of a delivery the dispatcher is about to send. */
  deferSending(deliveryId: string, interfaceId: string, nowMs: number, markSending: () => void): void {
    this.#sendingAt.set(deliveryId, nowMs);
    this.#deferred.push(() => {
      if (this.#sendingAt.delete(deliveryId)) markSending();
    });
    this.#dirty.set(deliveryId, interfaceId);
    this.#flushScheduled ??= setImmediate(() => this.flush({ wait: false }));
  }

  /**
   * True while the last flush failed (a full disk, a lock held past 5 s) or MAX_DEFERRED_WRITES
   * wait: the dispatcher starts no send then (issue 14). A send whose outcome cannot be
   * written would go out again after a restart, and every send adds writes to keep in
   * memory; holding sends bounds them by what is on the air. Clears with the next commit.
   */
  get backlogged(): boolean {
    return this.#failing || this.#deferred.length >= MAX_DEFERRED_WRITES;
  }

  /** Ids with deferred changes, on one interface or on all: the queue skips them. */
  dirtyIds(interfaceId?: string): string[] {
    const ids: string[] = [];
    for (const [id, iface] of this.#dirty) if (interfaceId === undefined || iface === interfaceId) ids.push(id);
    return ids;
  }

  /**
   * Commits every deferred write in one transaction. Inside a transaction someone else
   * opened it does nothing: their rollback must not take the dispatcher's writes with it
   * (the scheduled flush commits them after). The flushes this class schedules itself pass
   * wait: false: a lock another process holds fails them at once, to be retried in a second,
   * instead of freezing the event loop up to 5 s (issue 14, item 7). A caller that needs the
   * writes committed before it goes on (DeliveryStore, before its reads and writes) waits.
   */
  flush(options: { wait?: boolean } = {}): void {
    if (this.#deferred.length === 0) return;
    // A send that outlived the shutdown grace settles after the database closed: its state
    // is lost and the delivery is sent again after the restart (at least once).
    if (!this.#db.isOpen) {
      this.#deferred.length = 0;
      this.#dirty.clear();
      this.#wake.clear();
      this.#sendingAt.clear();
      return;
    }
    if (this.#db.isTransaction) return;
    if (this.#flushScheduled) {
      clearImmediate(this.#flushScheduled);
      clearTimeout(this.#flushScheduled as unknown as ReturnType<typeof setTimeout>);
    }
    this.#flushScheduled = undefined;
    const writes = this.#deferred.splice(0);
    // The 'sending' marks the writes consume: restored if the transaction rolls back.
    const marks = new Map(this.#sendingAt);
    try {
      const commit = () => transaction(this.#db, () => writes.forEach((w) => w()));
      if (options.wait === false) withoutBusyWait(this.#db, commit);
      else commit();
    } catch (error) {
      // Locked by another process (past 5 s, or at once for a flush scheduled here) or a full
      // disk: keep every write and mark, in order, and try again shortly. Never throw from
      // here: a flush usually runs from setImmediate.
      this.#deferred.unshift(...writes);
      for (const [id, at] of marks) this.#sendingAt.set(id, at);
      this.#log.error('delivery_state_write_failed', { error: (error as Error).message, action: 'kept in memory; retrying in 1 s' });
      this.#failing = true;
      this.failures.emit(error as Error);
      this.#flushScheduled ??= setTimeout(() => this.flush({ wait: false }), FLUSH_RETRY_MS) as unknown as ReturnType<typeof setImmediate>;
      return;
    }
    if (this.#failing) this.#log.info('delivery_state_write_recovered', { writes: writes.length });
    this.#failing = false;
    const interfaces = [...this.#wake];
    this.#wake.clear();
    this.#dirty.clear();
    if (interfaces.length > 0) this.flushed.emit(interfaces);
  }
}
