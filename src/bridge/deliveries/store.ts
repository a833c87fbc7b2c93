import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';
import { fromJson } from '../../lib/json.ts';
import type { EventStream } from '../../lib/events.ts';
import type { RouterEvent } from '../router/events.ts';
import type { WriteBehind } from './write-behind.ts';

export const DELIVERY_STATES = ['pending', 'sending', 'retrying', 'delivered', 'dead', 'cancelled', 'expired'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface DeliveryRow {
  id: string;
  message_id: string;
  interface_id: string;
  to: string;
  channel: number | null;
  kind: 'text' | 'position' | 'telemetry' | 'data';
  text: string | null;
  payload: Uint8Array | null;
  from: string;
  state: DeliveryState;
  attempts: number;
  max_attempts: number;
  next_attempt_ms: number;
  front_ms: number | null;
  expires_ms: number;
  last_error: string | null;
  /** What the bearer said of a delivered send (SendResult.meta), else null. */
  result?: Record<string, unknown> | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface DeliveryFilter {
  state?: string;
  interface_id?: string;
  message_id?: string;
  before_id?: string;
}

interface Raw extends Omit<DeliveryRow, 'to' | 'from' | 'result'> {
  to_addr: string;
  from_addr: string;
  result?: string | null;
}

const decode = (r: Raw): DeliveryRow => {
  const { to_addr, from_addr, result, ...rest } = r;
  return { ...rest, to: to_addr, from: from_addr, result: fromJson(result, null) };
};

const iso = (ms: number) => new Date(ms).toISOString();
/**
 * SQL for the deliveries table: the queue, the dead letters and the history of attempts.
 * The dispatcher's own writes go through the write-behind queue (write-behind.ts); every
 * read and every other write here flushes it first, so nobody sees a state older than the
 * dispatcher's. State changes made here (API, expiry, interface removal, recovery) are told
 * on the router's event stream.
 */
export class DeliveryStore {
  readonly #statements: StatementCache;
  readonly #writeBehind: WriteBehind;
  readonly #events: EventStream<RouterEvent>;
  /** Bumped by every write that does not come from the dispatcher (API, expiry, interface
   *  removal, recovery): rows the dispatcher read earlier may be stale once it moved. */
  generation = 0;

  constructor(db: DatabaseSync, writeBehind: WriteBehind, events: EventStream<RouterEvent>) {
    this.#statements = new StatementCache(db);
    this.#writeBehind = writeBehind;
    this.#events = events;
  }

  /** Commits the dispatcher's deferred writes now. */
  flush(): void {
    this.#writeBehind.flush();
  }

  /** Ids with deferred changes (on one interface, or all), as JSON for json_each: the queue skips them. */
  #dirtyJson(interfaceId?: string): string {
    return JSON.stringify(this.#writeBehind.dirtyIds(interfaceId));
  }
  #prepare(sql: string): StatementSync {
    return this.#statements.prepare(sql);
  }
  insert(d: DeliveryRow): void {
    this
      .#prepare(
        `INSERT INTO deliveries (id, message_id, interface_id, to_addr, channel, kind, text, payload, from_addr, state, attempts, max_attempts,
           next_attempt_ms, front_ms, expires_ms, last_error, created_at, updated_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(d.id, d.message_id, d.interface_id, d.to, d.channel, d.kind, d.text, d.payload, d.from, d.state, d.attempts, d.max_attempts, d.next_attempt_ms, d.front_ms, d.expires_ms, d.last_error, d.created_at, d.updated_at, d.finished_at);
  }
  get(id: string): DeliveryRow | undefined {
    this.flush();
    const r = this.#prepare('SELECT * FROM deliveries WHERE id = ?').get(id) as unknown as Raw | undefined;
    return r && decode(r);
  }
  list(f: DeliveryFilter, limit: number): DeliveryRow[] {
    this.flush();
    const where: string[] = [];
    const args: SQLInputValue[] = [];
    for (const [col, v] of [['state', f.state], ['interface_id', f.interface_id], ['message_id', f.message_id]] as const) {
      if (v !== undefined) {
        where.push(`${col} = ?`);
        args.push(v);
      }
    }
    if (f.before_id) {
      where.push('id < ?');
      args.push(f.before_id);
    }
    const sql = `SELECT * FROM deliveries ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY id DESC LIMIT ?`;
    return (this.#prepare(sql).all(...args, limit) as unknown as Raw[]).map(decode);
  }
  byMessage(messageId: string): DeliveryRow[] {
    this.flush();
    return (this.#prepare('SELECT * FROM deliveries WHERE message_id = ? ORDER BY id').all(messageId) as unknown as Raw[]).map(decode);
  }
  /**
   * Up to `limit` due deliveries on an interface, in queue order: retry-now first, then the
   * longest due. Deliveries with deferred changes (the dispatcher's own, just sent and not
   * yet committed) are skipped. Read through the partial indexes (deliveries_front,
   * deliveries_waiting). The rows stay valid while `generation` is unchanged.
   */
  dueRows(interfaceId: string, nowMs: number, limit: number): DeliveryRow[] {
    const skip = new Set(this.#writeBehind.dirtyIds(interfaceId));
    // Ids first, from the covering indexes (the skipped ones are the first in order and are
    // not worth reading whole), then the chosen rows.
    const ids = (sql: string, ...args: Array<string | number>) => (this.#prepare(sql).all(...args) as Array<{ id: string }>).map((r) => r.id);
    const order = [
      ...ids("SELECT id FROM deliveries WHERE interface_id = ? AND front_ms IS NOT NULL AND state IN ('pending', 'retrying') ORDER BY front_ms LIMIT ?", interfaceId, skip.size + limit),
      ...ids("SELECT id FROM deliveries WHERE interface_id = ? AND state IN ('pending', 'retrying') AND next_attempt_ms <= ? ORDER BY next_attempt_ms, id LIMIT ?", interfaceId, nowMs, skip.size + limit),
    ];
    const chosen = [...new Set(order.filter((id) => !skip.has(id)))].slice(0, limit);
    if (chosen.length === 0) return [];
    const rows = new Map(
      (this.#prepare('SELECT * FROM deliveries WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(chosen)) as unknown as Raw[]).map((r) => [r.id, decode(r)]),
    );
    return chosen.map((id) => rows.get(id)).filter((r): r is DeliveryRow => r !== undefined);
  }

  earliestWaiting(interfaceId: string): number | undefined {
    const r = this.#prepare(
      "SELECT min(next_attempt_ms) AS t FROM deliveries WHERE interface_id = ? AND state IN ('pending', 'retrying') AND id NOT IN (SELECT value FROM json_each(?))",
    ).get(interfaceId, this.#dirtyJson(interfaceId)) as { t: number | null };
    return r.t ?? undefined;
  }
  earliestExpiry(nowMs: number): number | undefined {
    // The partial index walks waiting deliveries in expiry order: the first one answers.
    // Deliveries on the air count too while their TTL is still ahead (if the send fails they
    // must still expire on time); one past it is expired when it comes back (the dispatcher
    // schedules expiry after every flush that leaves a delivery waiting again).
    const r = this.#prepare("SELECT expires_ms AS t FROM deliveries INDEXED BY deliveries_expiry WHERE state IN ('pending', 'retrying') ORDER BY expires_ms LIMIT 1").get() as { t: number } | undefined;
    const sending = this.#prepare("SELECT min(expires_ms) AS t FROM deliveries WHERE state = 'sending' AND expires_ms > ?").get(nowMs) as { t: number | null };
    const times = [r?.t, sending.t ?? undefined].filter((t): t is number => t !== undefined);
    return times.length ? Math.min(...times) : undefined;
  }

  // The dispatcher's writes: each applies only from the state the dispatcher left the delivery
  // in, so a cancellation that landed meanwhile (API, interface deleted) is never overwritten.
  // They answer whether they changed the row.
  markSending(id: string, nowMs: number): boolean {
    return this.#changed(this.#prepare("UPDATE deliveries SET state = 'sending', attempts = attempts + 1, front_ms = NULL, updated_at = ? WHERE id = ? AND state IN ('pending', 'retrying')").run(iso(nowMs), id));
  }
  // `fromWaiting`: the 'sending' mark was never written (see defer): the outcome is written
  // straight from pending or retrying, counting the attempt.
  settle(id: string, state: 'delivered' | 'dead' | 'cancelled', error: string | null, nowMs: number, fromWaiting = false, result: Record<string, unknown> | null = null): boolean {
    const sql = fromWaiting
      ? "UPDATE deliveries SET state = ?, attempts = attempts + 1, front_ms = NULL, last_error = coalesce(?, last_error), result = ?, updated_at = ?, finished_at = ? WHERE id = ? AND state IN ('pending', 'retrying')"
      : "UPDATE deliveries SET state = ?, last_error = coalesce(?, last_error), result = ?, updated_at = ?, finished_at = ? WHERE id = ? AND state = 'sending'";
    return this.#changed(this.#prepare(sql).run(state, error, result === null ? null : JSON.stringify(result), iso(nowMs), iso(nowMs), id));
  }
  scheduleRetry(id: string, nextMs: number, error: string, nowMs: number, fromWaiting = false): boolean {
    const sql = fromWaiting
      ? "UPDATE deliveries SET state = 'retrying', attempts = attempts + 1, front_ms = NULL, next_attempt_ms = ?, last_error = ?, updated_at = ? WHERE id = ? AND state IN ('pending', 'retrying')"
      : "UPDATE deliveries SET state = 'retrying', next_attempt_ms = ?, last_error = ?, updated_at = ? WHERE id = ? AND state = 'sending'";
    return this.#changed(this.#prepare(sql).run(nextMs, error, iso(nowMs), id));
  }
  /**
   * The send was cut short by the interface (disabled, unbound, reconfigured): back to its
   * place in the queue (its due time and retry-now mark as they were), attempt not counted.
   */
  requeue(id: string, reason: string, nowMs: number, place: { next_attempt_ms: number; front_ms: number | null }, fromWaiting = false): boolean {
    const sql = fromWaiting
      ? "UPDATE deliveries SET state = 'retrying', front_ms = ?, next_attempt_ms = ?, last_error = ?, updated_at = ? WHERE id = ? AND state IN ('pending', 'retrying')"
      : "UPDATE deliveries SET state = 'retrying', attempts = max(attempts - 1, 0), front_ms = ?, next_attempt_ms = ?, last_error = ?, updated_at = ? WHERE id = ? AND state = 'sending'";
    return this.#changed(this.#prepare(sql).run(place.front_ms, place.next_attempt_ms, reason, iso(nowMs), id));
  }
  /** A waiting delivery whose TTL passed (found by the dispatcher). */
  expire(id: string, nowMs: number): boolean {
    return this.#changed(
      this.#prepare("UPDATE deliveries SET state = 'expired', last_error = coalesce(last_error, 'message TTL passed before delivery'), updated_at = ?, finished_at = ? WHERE id = ? AND state IN ('pending', 'retrying')").run(iso(nowMs), iso(nowMs), id),
    );
  }
  /** Cancel through the API: only a waiting delivery. */
  cancel(id: string, reason: string, nowMs: number): DeliveryRow | undefined {
    this.flush();
    const rows = this.#returning(this.#prepare("UPDATE deliveries SET state = 'cancelled', last_error = ?, updated_at = ?, finished_at = ? WHERE id = ? AND state IN ('pending', 'retrying') RETURNING *").all(reason, iso(nowMs), iso(nowMs), id));
    return rows[0];
  }
  #changed(result: { changes: number | bigint }): boolean {
    return Number(result.changes) > 0;
  }
  /** Decodes RETURNING rows and tells the event stream. */
  #returning(raw: unknown[]): DeliveryRow[] {
    this.generation++;
    const rows = (raw as Raw[]).map(decode);
    for (const delivery of rows) this.#events.emit({ type: 'delivery', delivery, failedAttempt: false });
    return rows;
  }
  /**
   * Retry now: to the front of its interface's queue, skipping backoff. A dead delivery gets
   * one more attempt, and one already past its TTL gets `ttlMs` more, so an old dead letter
   * can still be retried.
   */
  retryNow(id: string, nowMs: number, ttlMs: number): DeliveryRow | undefined {
    this.flush();
    return this.#returning(
      this.#prepare(
        `UPDATE deliveries SET state = CASE state WHEN 'dead' THEN 'retrying' ELSE state END,
           max_attempts = CASE WHEN attempts >= max_attempts THEN attempts + 1 ELSE max_attempts END,
           expires_ms = CASE WHEN expires_ms <= ? THEN ? ELSE expires_ms END, front_ms = ?, next_attempt_ms = ?, finished_at = NULL, updated_at = ?
         WHERE id = ? AND state IN ('pending', 'retrying', 'dead') RETURNING *`,
      ).all(nowMs, nowMs + ttlMs, nowMs, nowMs, iso(nowMs), id),
    )[0];
  }
  expireDue(nowMs: number): number {
    this.flush();
    return this.#returning(
      this.#prepare("UPDATE deliveries SET state = 'expired', last_error = coalesce(last_error, 'message TTL passed before delivery'), updated_at = ?, finished_at = ? WHERE state IN ('pending', 'retrying') AND expires_ms <= ? RETURNING *")
        .all(iso(nowMs), iso(nowMs), nowMs),
    ).length;
  }
  /** After a crash: deliveries caught mid-send are tried again (at least once, never lost). */
  recoverSending(nowMs: number): number {
    this.flush();
    return this.#returning(
      this.#prepare("UPDATE deliveries SET state = 'retrying', next_attempt_ms = ?, last_error = 'interrupted by a restart while sending; sent again (at least once)', updated_at = ? WHERE state = 'sending' RETURNING *")
        .all(nowMs, iso(nowMs)),
    ).length;
  }
  cancelWaitingFor(interfaceId: string, reason: string, nowMs: number): number {
    this.flush();
    return this.#returning(
      this.#prepare("UPDATE deliveries SET state = 'cancelled', last_error = ?, updated_at = ?, finished_at = ? WHERE interface_id = ? AND state IN ('pending', 'retrying', 'sending') RETURNING *")
        .all(reason, iso(nowMs), iso(nowMs), interfaceId),
    ).length;
  }
  queueDepth(interfaceId: string): number {
    this.flush();
    return (this.#prepare("SELECT count(*) AS n FROM deliveries WHERE interface_id = ? AND state IN ('pending', 'retrying', 'sending')").get(interfaceId) as { n: number }).n;
  }
  interfacesWithWork(): string[] {
    this.flush();
    return (this.#prepare("SELECT DISTINCT interface_id AS id FROM deliveries WHERE state IN ('pending', 'retrying')").all() as Array<{ id: string }>).map((r) => r.id);
  }
  countByState(): Record<string, number> {
    this.flush();
    const rows = this.#prepare('SELECT state, count(*) AS n FROM deliveries GROUP BY state').all() as Array<{ state: string; n: number }>;
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }
  countByInterfaceWaiting(): Array<{ interface_id: string; n: number }> {
    this.flush();
    return this.#prepare("SELECT interface_id, count(*) AS n FROM deliveries WHERE state IN ('pending', 'retrying', 'sending') GROUP BY interface_id").all() as Array<{ interface_id: string; n: number }>;
  }
  /** Retention: resolved deliveries (delivered, expired, cancelled) older than the cut-off. Dead letters stay. */
  deleteResolvedOlderThan(isoCutoff: string): number {
    this.flush();
    return Number(this.#prepare("DELETE FROM deliveries WHERE state IN ('delivered', 'expired', 'cancelled') AND updated_at < ?").run(isoCutoff).changes);
  }
}
