import { type AckMessage, MAX_RANGES, type Range, toRanges } from '../../hubwire/topics.ts';
import { groupBetweenUnits, groupCommitted } from './commits.ts';
import type { OutboxDrain } from './drain.ts';
import type { UplinkParts } from './parts.ts';
import { clampTo, storedLocal, subtract } from './sequence.ts';

// The hub's acknowledgements (docs/hub.md, "Acknowledgements"): a row is deleted only when the
// HUB has acknowledged it, never on the broker's PUBACK, so a broker that drops queued messages
// (max_queued_messages) or loses them in a restart without persistence costs nothing but a
// resend. The first ack of a boot settles its numbering (boot.ts).
//
// An ack is applied only up to the highest row published this boot: an ack of another bridge
// with our bridge_id (a cloned card) or a forged one cannot delete rows never sent. Gaps the
// hub asks for are sent again, or reported gone when the outbox no longer holds them.
// Acks wait while someone's transaction is open on the connection (they read the outbox).

/** Outbox rows looked at per gap request at most (a wide `missing` range is answered in parts:
 *  the hub asks again for what is left). */
const GAP_ROWS_MAX = 1000;

export interface AcknowledgementsOptions extends UplinkParts {
  drain: OutboxDrain;
}

export class Acknowledgements {
  readonly #o: AcknowledgementsOptions;
  #waiting: AckMessage[] = [];
  /** Acks wait for the open group of ingests to commit (#take). */
  #afterCommit = false;
  #warnedBeyond = false;
  #lastGone = -Infinity;

  constructor(options: AcknowledgementsOptions) {
    this.#o = options;
  }

  /** An ack from the hub, signature and shape checked (session.ts). */
  receive(ack: AckMessage): void {
    this.#waiting.push(ack);
    this.#take();
  }

  /** Takes acks still waiting (the publisher's tick). */
  tick(): void {
    if (this.#waiting.length > 0) this.#take();
  }

  #take(): void {
    const { db } = this.#o;
    // Reading the outbox inside someone's open transaction could act on rows it rolls back.
    if (!db.isOpen) return;
    if (db.isTransaction) {
      // An open group of ingests (db/transaction.ts) stays open most of the time under a steady
      // flow: the acks are taken as soon as it commits, not at a tick that may find it open too.
      if (!this.#afterCommit && groupBetweenUnits(db)) {
        this.#afterCommit = true;
        void groupCommitted(db).then(() => {
          this.#afterCommit = false;
          if (this.#waiting.length > 0) this.#take();
        });
      }
      return;
    }
    const acks = this.#waiting;
    this.#waiting = [];
    for (const ack of acks) {
      try {
        this.#apply(ack);
      } catch (error) {
        this.#o.log.warn('uplink_ack_failed', { error: (error as Error).message });
      }
    }
    this.#o.drain.run();
  }

  #apply(ack: AckMessage): void {
    const { boot, inFlight, acked, log } = this.#o;
    log.debug('uplink_ack', { upto: ack.upto, high: ack.high, missing: ack.missing.length, conn: ack.conn, sent: inFlight.count, resend: inFlight.resends, cursor: inFlight.cursor });
    if (!boot.numbered) {
      inFlight.resetTimeout();
      if (!boot.settle(ack)) return;
    }
    const claimed = storedLocal(ack, boot.offset);
    // Only what this boot published can be stored at the hub (a row of an earlier boot is
    // published again at connect, then acknowledged): an ack past that is of another bridge
    // with our bridge_id, or forged, and would delete rows the hub never had.
    const stored = clampTo(claimed, inFlight.highestPublished);
    const claimedHigh = claimed.length > 0 ? claimed[claimed.length - 1][1] : 0;
    // Rows of an earlier boot (below this boot's first number) may be stored: not suspicious.
    if (claimedHigh > Math.max(inFlight.highestPublished, boot.firstLocal - 1) && !this.#warnedBeyond) {
      this.#warnedBeyond = true;
      log.warn('uplink_ack_beyond_sent', {
        ack_upto: ack.upto, ack_high: ack.high, highest_published: inFlight.highestPublished + boot.offset,
        note: 'the hub acknowledged sequence numbers this bridge has not published: another bridge with the same bridge_id (a cloned SD card?) or a forged ack; applied only up to what was published (logged once per start)',
      });
    }
    const before = acked.upto;
    const sentBefore = inFlight.count;
    acked.add(stored);
    inFlight.acknowledged(acked);
    if (acked.upto > before || inFlight.count < sentBefore) inFlight.progressed(this.#o.clock.now());
    if (ack.missing.length > 0) this.#answerGaps(ack.missing);
  }

  /** Gaps the hub asks for: rows still held are sent again; numbers no longer held are gone. */
  #answerGaps(missing: Range[]): void {
    const { outbox, acked, inFlight } = this.#o;
    const now = this.#o.clock.now();
    const off = this.#o.boot.offset;
    const maxWire = outbox.lastAssigned() + off;
    let budget = GAP_ROWS_MAX;
    let gone: Range[] = [];
    for (const [wlo, whi] of missing) {
      const hi = Math.min(whi, maxWire);
      if (hi < wlo) continue;
      if (budget <= 0) break;
      const present = outbox.present(Math.max(wlo - off, 1), hi - off, budget);
      budget -= present.length;
      // A range wider than the budget is answered up to the last row read; the hub asks again.
      const upper = budget <= 0 && present.length > 0 ? present[present.length - 1] + off : hi;
      // Held: rows present only. The rest of the range is gone: dropped by the cap, numbers of
      // an older copy of the database (at or below the offset), or acknowledged and deleted
      // already (a stale request: reporting those gone changes nothing at the hub).
      gone.push(...subtract([wlo, upper], toRanges(present.map((l) => l + off))));
      for (const local of present) {
        if (!acked.has(local)) inFlight.gapAsked(local, now);
      }
    }
    gone = gone.filter(([lo, hi]) => hi >= lo && hi >= 1).map(([lo, hi]): Range => [Math.max(lo, 1), hi]);
    const client = this.#o.connection.up;
    if (gone.length > 0 && now - this.#lastGone >= 1000 && client) {
      this.#lastGone = now;
      const ranges = gone.slice(0, MAX_RANGES);
      const { identity } = this.#o;
      const topic = identity.topic('gone');
      client.publishAsync(topic, identity.seal(topic, JSON.stringify({ ranges, ts: new Date(now).toISOString() })), { qos: 1 }).catch(() => {});
      this.#o.log.info('uplink_gone', { ranges: JSON.stringify(ranges), note: 'the hub asked for events this bridge no longer holds (dropped by the outbox cap, or numbers of an older copy of this database)' });
    }
  }
}
