import type { Counter } from '../../lib/metrics.ts';
import type { Logger } from '../../lib/log.ts';
import type { UplinkEventKind } from '../../hubwire/topics.ts';
import { ROW_OVERHEAD_BYTES, type UplinkOutbox } from './outbox.ts';

// The outbox's size cap (docs/hub.md, "Outbox"). The outbox keeps what the hub
// has not acknowledged, so a hub away for days would otherwise fill the bridge's card. It keeps
// counting what it holds (rows, bytes: counted once at start, then followed as rows come and
// go, and counted again now and then); an event that does not fit first makes room by
// dropping the oldest telemetry and position events, and is refused when only messages and
// deliveries are left. Refusing only skips the outbox row: the caller's transaction (the
// router's) goes on, so routing is never touched. Drops and refusals are counted, and logged
// at most once a minute.

const WARN_EVERY_MS = 60_000;
/** Rows looked at per query while making room. */
const DROP_BATCH = 200;

export interface CapCounters {
  dropped: Counter;
  refused: Counter;
}

/** Who is told of each row the cap drops (the rows in flight forget it: in-flight.ts). */
export interface DropListener {
  dropped(seq: number): void;
}

export class OutboxCap {
  readonly #outbox: UplinkOutbox;
  readonly #maxBytes: number;
  readonly #log: Logger;
  readonly #counters: CapCounters;
  readonly #now: () => number;
  rows = 0;
  bytes = 0;
  /** Every telemetry or position row at or below this seq was dropped already. */
  #dropScan = 0;
  #lastWarn = -Infinity;
  #lastTooLarge = -Infinity;
  #quiet = { dropped: 0, refused: 0 };
  readonly #drops: DropListener;

  constructor(outbox: UplinkOutbox, maxBytes: number, log: Logger, counters: CapCounters, now: () => number, drops: DropListener) {
    this.#outbox = outbox;
    this.#drops = drops;
    this.#maxBytes = maxBytes;
    this.#log = log;
    this.#counters = counters;
    this.#now = now;
    this.recount();
  }

  get maxBytes(): number {
    return this.#maxBytes;
  }

  recount(): void {
    const s = this.#outbox.size();
    this.rows = s.rows;
    this.bytes = s.bytes;
  }

  /**
   * Makes room for a row of this payload, inside the caller's transaction; false: refused (the
   * caller writes nothing). A transaction that rolls back afterwards leaves the counts off
   * until the next recount, which errs by a row.
   */
  admit(kind: UplinkEventKind, payloadBytes: number): boolean {
    const size = payloadBytes + ROW_OVERHEAD_BYTES;
    if (this.bytes + size <= this.#maxBytes) {
      this.rows++;
      this.bytes += size;
      return true;
    }
    // Room for this row and a little more, so a full outbox does not drop on every event.
    const target = this.#maxBytes - size - Math.floor(this.#maxBytes / 100);
    while (this.bytes > target) {
      const last = this.#outbox.lastAssigned();
      const rows = this.#outbox.droppable(this.#dropScan, DROP_BATCH);
      // Everything up to `last` has been looked at: a full outbox of messages is not scanned
      // again for each new event, only the rows written since.
      if (rows.length === 0) {
        this.#dropScan = Math.max(this.#dropScan, last);
        break;
      }
      for (const r of rows) {
        if (r.seq > this.#dropScan) this.#dropScan = r.seq;
        this.#outbox.deleteOne(r.seq);
        this.rows--;
        this.bytes -= r.n + ROW_OVERHEAD_BYTES;
        this.#counters.dropped.inc({ kind: 'telemetry_or_position' });
        this.#quiet.dropped++;
        this.#drops.dropped(r.seq);
        if (this.bytes <= target) break;
      }
    }
    if (this.bytes + size <= this.#maxBytes) {
      this.rows++;
      this.bytes += size;
      this.#warn();
      return true;
    }
    this.#counters.refused.inc({ kind });
    this.#quiet.refused++;
    this.#warn();
    return false;
  }

  /**
   * An event larger than the hub takes (MAX_PAYLOAD_BYTES with its seq): refused at enqueue,
   * counted as the cap's refusals are (the hub would refuse it, and resending it would only
   * come back as a gap). Logged at most once a minute.
   */
  refuseTooLarge(kind: UplinkEventKind, bytes: number, maxBytes: number): void {
    this.#counters.refused.inc({ kind });
    const now = this.#now();
    if (now - this.#lastTooLarge < WARN_EVERY_MS) return;
    this.#lastTooLarge = now;
    this.#log.warn('uplink_event_too_large', {
      kind, bytes, max_bytes: maxBytes,
      note: 'larger than the hub takes: not written to the outbox (routing goes on); counted in fieldbridge_uplink_outbox_refused_total, logged at most once a minute',
    });
  }

  /** Rows left the outbox (acknowledged). */
  removed(rows: number, bytes: number): void {
    this.rows = Math.max(0, this.rows - rows);
    this.bytes = Math.max(0, this.bytes - bytes);
  }

  #warn(): void {
    const now = this.#now();
    if (now - this.#lastWarn < WARN_EVERY_MS) return;
    this.#lastWarn = now;
    const { dropped, refused } = this.#quiet;
    this.#quiet = { dropped: 0, refused: 0 };
    this.#log.warn('uplink_outbox_full', {
      max_bytes: this.#maxBytes, rows: this.rows, bytes: this.bytes, dropped, refused,
      note: 'the hub has not acknowledged this much: oldest telemetry and position events are dropped first, then new events refused (routing goes on); counted in fieldbridge_uplink_outbox_dropped_total and _refused_total, logged at most once a minute',
    });
  }
}
