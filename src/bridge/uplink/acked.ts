import type { DatabaseSync } from 'node:sqlite';
import { type CommitRider, isBusyError, leaveRide, rideNextCommit, transaction, withoutBusyWait } from '../../db/sqlite.ts';
import type { Logger } from '../../lib/log.ts';
import { addRanges, type Range, type SeqState } from '../../hubwire/topics.ts';
import type { UplinkOutbox } from './outbox.ts';

// Outbox rows the hub has acknowledged, deleted in batches: they ride the next
// transaction on the connection (usually the router's next message, which commits anyway;
// db/sqlite.ts rideNextCommit), or commit on their own FLUSH_MS after the first of them. The
// own commit never waits for another process's lock on the event loop (withoutBusyWait): it is
// tried again from a timer. Until deleted, an acknowledged row is known here and not sent
// again; a crash before the delete sends it once more after the restart (stored once by
// event_id at the hub).

const FLUSH_MS = 500;
const RETRY_MS = 1000;

/** Who is told how much each commit removed from the outbox (the cap's counts: cap.ts). */
export interface RemovalListener {
  removed(rows: number, bytes: number): void;
}

export class AckedRows {
  readonly #db: DatabaseSync;
  readonly #outbox: UplinkOutbox;
  readonly #log: Logger;
  /** Local seqs acknowledged: those at or below deletedUpto are gone from the table. */
  #acked: SeqState = { upto: 0, ranges: [] };
  #deletedUpto = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #taken: SeqState | undefined;
  readonly #rider: CommitRider;
  readonly #removals: RemovalListener;
  /** Rows and bytes the rides since the last commit removed. */
  #removed = { rows: 0, bytes: 0 };

  constructor(db: DatabaseSync, outbox: UplinkOutbox, log: Logger, removals: RemovalListener) {
    this.#db = db;
    this.#removals = removals;
    this.#outbox = outbox;
    this.#log = log;
    this.#rider = {
      ride: () => this.#apply(),
      committed: () => this.#committed(),
      failed: () => {
        this.#taken = undefined;
        this.#removed = { rows: 0, bytes: 0 };
        this.#schedule(RETRY_MS);
      },
    };
  }

  /** True when the row is acknowledged (deleted or about to be). */
  has(seq: number): boolean {
    if (seq <= this.#acked.upto) return true;
    for (const [lo, hi] of this.#acked.ranges) if (seq >= lo && seq <= hi) return true;
    return false;
  }

  /** Highest local seq below which every row is acknowledged. */
  get upto(): number {
    return this.#acked.upto;
  }

  /** Acknowledged ranges above upto (not yet deleted). */
  ranges(): Range[] {
    return this.#acked.ranges;
  }

  get waiting(): boolean {
    return this.#acked.upto > this.#deletedUpto || this.#acked.ranges.length > 0;
  }

  add(ranges: Range[]): void {
    const useful = ranges.filter(([, hi]) => hi > this.#acked.upto && hi >= 1).map(([lo, hi]): Range => [Math.max(lo, 1), hi]);
    if (useful.length === 0) return;
    this.#acked = addRanges(this.#acked, useful);
    if (!this.waiting) return;
    rideNextCommit(this.#db, this.#rider);
    this.#schedule(FLUSH_MS);
  }

  /** Deletes what waits now (shutdown); a lock or an error leaves it for the next start. */
  flushNow(): void {
    if (!this.waiting || !this.#db.isOpen) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#ownCommit();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#db.isOpen) leaveRide(this.#db, this.#rider);
  }

  #schedule(ms: number): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#ownCommit();
    }, ms);
    this.#timer.unref?.();
  }

  #ownCommit(): void {
    if (!this.waiting || !this.#db.isOpen) return;
    if (this.#db.isTransaction) {
      // Someone's transaction is open on our connection (after an await): it carries us.
      this.#schedule(50);
      return;
    }
    leaveRide(this.#db, this.#rider);
    try {
      withoutBusyWait(this.#db, () =>
        transaction(this.#db, () => {
          this.#apply();
        }),
      );
      this.#committed();
    } catch (error) {
      this.#taken = undefined;
      this.#removed = { rows: 0, bytes: 0 };
      if (!isBusyError(error)) this.#log.warn('uplink_ack_delete_failed', { error: (error as Error).message, next: `tried again in ${RETRY_MS} ms` });
      this.#schedule(RETRY_MS);
    }
  }

  // A group of ingests may carry this several times before its COMMIT (db/transaction.ts,
  // CommitRider): each ride deletes what is acknowledged by then (deleting a row twice deletes
  // nothing), the removed rows add up until the commit, which is told once for them all.
  #apply(): void {
    const taken: SeqState = { upto: this.#acked.upto, ranges: this.#acked.ranges.map((r): Range => [r[0], r[1]]) };
    const del = (lo: number, hi: number) => {
      const r = this.#outbox.deleteRange(lo, hi);
      this.#removed.rows += r.rows;
      this.#removed.bytes += r.bytes;
    };
    if (taken.upto > this.#deletedUpto) del(this.#deletedUpto + 1, taken.upto);
    for (const [lo, hi] of taken.ranges) del(lo, hi);
    this.#taken = taken;
  }

  #committed(): void {
    const taken = this.#taken;
    this.#taken = undefined;
    if (!taken) return;
    this.#deletedUpto = Math.max(this.#deletedUpto, taken.upto);
    // Ranges deleted are forgotten: their rows are no longer read from the table.
    this.#acked = { upto: this.#acked.upto, ranges: this.#acked.ranges.filter(([lo, hi]) => !taken.ranges.some(([a, b]) => lo >= a && hi <= b)) };
    this.#removals.removed(this.#removed.rows, this.#removed.bytes);
    this.#removed = { rows: 0, bytes: 0 };
  }
}
