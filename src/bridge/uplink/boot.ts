import type { DatabaseSync } from 'node:sqlite';
import { isBusyError, withoutBusyWait } from '../../db/sqlite.ts';
import type { AckMessage } from '../../hubwire/topics.ts';
import type { Logger } from '../../lib/log.ts';
import type { UplinkOutbox } from './outbox.ts';

// What one start of the publisher settles with the hub: its session (the boot counter every
// status message carries, so the hub can tell a late last will of an earlier boot from news)
// and the numbering of its events.
//
// Sequence numbers: wire seq = the row's local seq (AUTOINCREMENT, contiguous: a rolled-back
// insert gives its number back) + an offset kept in uplink_state. A restored or recreated
// database would give out numbers the hub has seen again, so nothing of a boot is published
// before the hub has answered once (its ack to our online, or any ack): when the hub has seen
// a number at or past the first one this boot would give out, the offset moves every row still
// held past the hub's highest (docs/hub.md, "A restored database").

export class Boot {
  readonly #db: DatabaseSync;
  readonly #outbox: UplinkOutbox;
  readonly #log: Logger;
  #session = 0;
  #offset = 0;
  #firstLocal = 1;
  #numbered = false;

  constructor(db: DatabaseSync, outbox: UplinkOutbox, log: Logger) {
    this.#db = db;
    this.#outbox = outbox;
    this.#log = log;
  }

  /** This boot's number, counted in uplink_state (0 until counted). */
  get session(): number {
    return this.#session;
  }

  /** Added to a local seq on the wire. */
  get offset(): number {
    return this.#offset;
  }

  /** The first local seq this boot gives out. */
  get firstLocal(): number {
    return this.#firstLocal;
  }

  /** True once the numbering is settled with the hub (and rows may be published). */
  get numbered(): boolean {
    return this.#numbered;
  }

  /** Counts this boot; runs on the caller's database write (which may meet a lock). */
  count(): void {
    this.#session = this.#outbox.nextSession();
  }

  /** Reads where this boot's numbering starts. */
  begin(): void {
    this.#firstLocal = this.#outbox.lastAssigned() + 1;
    this.#offset = this.#outbox.seqOffset();
  }

  /** The hub's first answer this boot settles the numbering: false when it moved it (the ack
   *  speaks of numbers this database did not give out, so it is not applied) or when the move
   *  met another process's lock (the next ack settles it). */
  settle(ack: AckMessage): boolean {
    const firstWire = this.#firstLocal + this.#offset;
    // seen: the highest number the hub ever heard (high may stop below it at a gap).
    const hubHigh = Math.max(ack.high, ack.seen ?? 0);
    if (hubHigh < firstWire) {
      this.#numbered = true;
      return true;
    }
    // The hub has seen numbers this boot would give out: the database was restored from a
    // backup or made anew. Every row still held moves past the hub's highest.
    const oldest = this.#outbox.oldest(1)[0]?.seq ?? this.#outbox.lastAssigned() + 1;
    const offset = hubHigh + 1 - oldest;
    try {
      withoutBusyWait(this.#db, () => this.#outbox.setSeqOffset(offset));
    } catch (error) {
      if (!isBusyError(error)) throw error;
      return false;
    }
    this.#log.warn('uplink_sequence_moved', {
      hub_high: hubHigh, would_have_started_at: firstWire, offset, first_seq: oldest + offset,
      note: 'the hub has seen sequence numbers this database had not given out (restored from a backup, or new): events still held are numbered after them',
    });
    this.#offset = offset;
    this.#numbered = true;
    return false;
  }
}
