import type { DatabaseSync } from 'node:sqlite';
import type { InterfaceKind } from '../../bearers/drivers.ts';
import { idFloor, idTime } from '../../lib/ids.ts';

// The SQL of the bridge's clock (docs/decisions.md, "Issue 30: a clock a Raspberry Pi
// cannot trust"): the last time the bridge knew to be good, and the re-basing of what was
// written under a clock that later proved wrong.

/** What set the bridge's time: the system clock, the last good time, or the kind of the
 *  interface whose device told it (bridge.clock.radio_time). */
export type TimeSource = 'system' | 'last_good' | InterfaceKind;

export interface ClockStateRow {
  last_good_ms: number;
  source: TimeSource;
}

/** What a re-base moved, table by table. */
export interface Rebased {
  deliveries: number;
  fallbacks: number;
  messages: number;
}

export class ClockStore {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    // Exact ISO arithmetic for the TEXT times (created_at, updated_at): SQLite's strftime
    // would do, but keeping one formatter (toISOString) keeps every stored time alike.
    db.function('fb_shift_iso', { deterministic: true }, (iso, ms) =>
      typeof iso === 'string' ? new Date(Date.parse(iso) + Number(ms)).toISOString() : iso,
    );
  }

  read(): ClockStateRow | undefined {
    return this.#db.prepare('SELECT last_good_ms, source FROM clock_state WHERE id = 1').get() as ClockStateRow | undefined;
  }

  write(lastGoodMs: number, source: TimeSource): void {
    this.#db
      .prepare('INSERT INTO clock_state (id, last_good_ms, source) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET last_good_ms = max(last_good_ms, excluded.last_good_ms), source = excluded.source')
      .run(Math.floor(lastGoodMs), source);
  }

  /** The time of the newest message: a floor under the last good time that costs no write
   *  (a power cut may come before the last good time is written). */
  newestMessageMs(): number | undefined {
    const row = this.#db.prepare('SELECT id FROM messages ORDER BY id DESC LIMIT 1').get() as { id: string } | undefined;
    return row ? idTime(row.id) : undefined;
  }

  /**
   * Moves by `deltaMs` every time written since `sinceMs` (under the clock that just proved
   * wrong), so each keeps its distance to now: a delivery's retry and expiry, a fallback
   * member's deadline, the dedupe window and sender buckets, and the created/updated times
   * retention reads. Times written before `sinceMs` were written under a clock that was
   * right then and stay. Runs inside the caller's transaction.
   */
  rebase(sinceMs: number, deltaMs: number): Rebased {
    const sinceIso = new Date(sinceMs).toISOString();
    const run = (sql: string, ...args: Array<string | number>) => Number(this.#db.prepare(sql).run(...args).changes);
    // Retry times and queue fronts are written at each attempt, so updated_at says which clock
    // wrote them; an expiry is written once, when the delivery is made (its id's time).
    const deliveries = run(
      `UPDATE deliveries SET
         next_attempt_ms = CASE WHEN updated_at >= ?1 THEN next_attempt_ms + ?2 ELSE next_attempt_ms END,
         front_ms = CASE WHEN updated_at >= ?1 AND front_ms IS NOT NULL THEN front_ms + ?2 ELSE front_ms END,
         expires_ms = CASE WHEN id >= ?3 THEN expires_ms + ?2 ELSE expires_ms END,
         created_at = CASE WHEN created_at >= ?1 THEN fb_shift_iso(created_at, ?2) ELSE created_at END,
         updated_at = CASE WHEN updated_at >= ?1 THEN fb_shift_iso(updated_at, ?2) ELSE updated_at END,
         finished_at = CASE WHEN finished_at >= ?1 THEN fb_shift_iso(finished_at, ?2) ELSE finished_at END
       WHERE updated_at >= ?1 OR id >= ?3`,
      sinceIso, deltaMs, idFloor('dlv', sinceMs),
    );
    const fallbacks = run(
      `UPDATE fallbacks SET deadline_ms = CASE WHEN deadline_ms IS NOT NULL THEN deadline_ms + ?2 END,
         created_at = CASE WHEN created_at >= ?1 THEN fb_shift_iso(created_at, ?2) ELSE created_at END,
         updated_at = fb_shift_iso(updated_at, ?2)
       WHERE updated_at >= ?1`,
      sinceIso, deltaMs,
    );
    const messages = run('UPDATE messages SET created_at = fb_shift_iso(created_at, ?2) WHERE created_at >= ?1', sinceIso, deltaMs);
    run('UPDATE seen_frames SET seen_ms = seen_ms + ?2 WHERE seen_ms >= ?1', sinceMs, deltaMs);
    run('UPDATE sender_buckets SET at_ms = at_ms + ?2 WHERE at_ms >= ?1', sinceMs, deltaMs);
    run('UPDATE senders SET last_seen_at = fb_shift_iso(last_seen_at, ?2) WHERE last_seen_at >= ?1', sinceIso, deltaMs);
    run('UPDATE audit_log SET at = fb_shift_iso(at, ?2) WHERE at >= ?1', sinceIso, deltaMs);
    return { deliveries, fallbacks, messages };
  }
}
