import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';
import { noticeLostGroup } from '../../db/sqlite.ts';
import type { EventStream } from '../../lib/events.ts';
import { idFloor } from '../../lib/ids.ts';
import type { RouterEvent } from './events.ts';
import { PRECEDENCES, precedenceName } from './precedence.ts';
import type { WriteBehind } from './write-behind.ts';
import { DELIVERY_STATES, WAITING_STATES, NEVER_MS, type DeliveryState, type DeliveryRow } from './rows.ts';
import { attachQueueTotals, type DeadLetterFilter, type DeliveryFilter, type Raw, decode, deadWhere, EVICTABLE_RANKS, iso, KEEP_DEAD_ERROR, limitLiteral, QUEUED, READY_STATES, sizeOf } from './delivery-sql.ts';

/**
 * SQL for the deliveries table: the queue, the dead letters and the history of attempts.
 * The dispatcher's own writes go through the write-behind queue (write-behind.ts); every
 * read and every other write here flushes it first, so nobody sees a state older than the
 * dispatcher's. State changes made here (API, expiry, interface removal, recovery) are told
 * on the router's event stream.
 */
export class DeliveryStore {
  readonly #db: DatabaseSync;
  readonly #statements: StatementCache;
  readonly #writeBehind: WriteBehind;
  readonly #events: EventStream<RouterEvent>;
  /** Bumped by every write that does not come from the dispatcher (API, expiry, interface
   *  removal, recovery): rows the dispatcher read earlier may be stale once it moved. */
  generation = 0;

  constructor(db: DatabaseSync, writeBehind: WriteBehind, events: EventStream<RouterEvent>) {
    this.#db = db;
    attachQueueTotals(db);
    this.#statements = new StatementCache(db);
    this.#writeBehind = writeBehind;
    this.#events = events;
  }

  /** Commits the dispatcher's deferred writes now. */
  flush(): void {
    this.#writeBehind.flush();
  }

  /** The queue's reads trust that what the dispatcher wrote into the open group is there: the
   *  deliveries it marked or settled there are no longer skipped (write-behind.ts, #dirty). A
   *  group SQLite rolled back unannounced is abandoned first, which gives them back. */
  #trustGroup(): void {
    noticeLostGroup(this.#db);
  }

  /** The ids the queue skips on one interface (write-behind.ts, #dirty), as JSON for json_each. */
  #dirtyJson(interfaceId: string): string {
    const ids = this.#writeBehind.dirtyOn(interfaceId);
    return ids.size === 0 ? '[]' : JSON.stringify([...ids]);
  }
  #prepare(sql: string): StatementSync {
    return this.#statements.prepare(sql);
  }
  insert(d: DeliveryRow): void {
    this
      .#prepare(
        `INSERT INTO deliveries (id, message_id, interface_id, to_addr, channel, kind, text, payload, from_addr, state, precedence, size, attempts, max_attempts,
           next_attempt_ms, front_ms, expires_ms, held_ttl_ms, until_heard, fallback_id, fallback_pos, last_error, created_at, updated_at, finished_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        d.id, d.message_id, d.interface_id, d.to, d.channel, d.kind, d.text, d.payload, d.from, d.state, d.precedence, sizeOf(d), d.attempts, d.max_attempts, d.next_attempt_ms,
        d.front_ms, d.expires_ms, d.held_ttl_ms ?? null, d.until_heard ?? null, d.fallback_id ?? null, d.fallback_pos ?? null, d.last_error, d.created_at, d.updated_at, d.finished_at,
      );
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
    // A known state is written into the SQL, so the partial indexes on it (dead, sending) serve.
    if (f.state !== undefined && (DELIVERY_STATES as readonly string[]).includes(f.state)) where.push(`state = '${f.state}'`);
    for (const [col, v] of [['state', (DELIVERY_STATES as readonly string[]).includes(f.state ?? '') ? undefined : f.state], ['interface_id', f.interface_id], ['message_id', f.message_id]] as const) {
      if (v !== undefined) {
        where.push(`${col} = ?`);
        args.push(v);
      }
    }
    if (f.before_id) {
      where.push('id < ?');
      args.push(f.before_id);
    }
    // The dead letter queue is read through its own index (the planner, without statistics,
    // would walk every delivery in id order to find the few dead ones).
    const indexed = f.state === 'dead' ? 'INDEXED BY deliveries_dead' : '';
    const sql = `SELECT * FROM deliveries ${indexed} ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY id DESC LIMIT ?`;
    return (this.#prepare(sql).all(...args, limit) as unknown as Raw[]).map(decode);
  }
  byMessage(messageId: string): DeliveryRow[] {
    this.flush();
    return (this.#prepare('SELECT * FROM deliveries WHERE message_id = ? ORDER BY id').all(messageId) as unknown as Raw[]).map(decode);
  }
  /**
   * Up to `limit` due deliveries on an interface, in queue order: highest precedence first;
   * within one precedence retry-now first, then the oldest (ids grow with time). Deliveries
   * the write-behind holds back (the dispatcher's own writes not yet readable here, retries
   * not yet committed; write-behind.ts, #dirty) are skipped. Read through the partial indexes (deliveries_front, deliveries_waiting). The rows
   * stay valid while `generation` is unchanged.
   */
  dueRows(interfaceId: string, nowMs: number, limit: number): DeliveryRow[] {
    this.#trustGroup();
    const skip = this.#writeBehind.dirtyOn(interfaceId);
    // Ids first, from the covering indexes (the skipped ones are the first in order and are
    // not worth reading whole), then the chosen rows.
    type Key = { id: string; precedence: number; front_ms: number | null };
    // The limit is written into the SQL, rounded up to a power of two so a few texts serve: a
    // bound LIMIT made the SQLite in Node 24 (3.53) compile the statement again at every run
    // (sqlite3Reprepare under perf; docs/performance.md, "Statements compiled once").
    const cap = limitLiteral(skip.size + limit);
    const keys = (sql: string, ...args: Array<string | number>) => this.#prepare(sql).all(...args) as Key[];
    const order = [
      ...keys(`SELECT id, precedence, front_ms FROM deliveries WHERE interface_id = ? AND front_ms IS NOT NULL AND state IN ('pending', 'retrying') ORDER BY precedence, front_ms LIMIT ${cap}`, interfaceId),
      // One read per state, each in queue order within that state's part of the index.
      ...READY_STATES.flatMap((state) =>
        keys(`SELECT id, precedence, NULL AS front_ms FROM deliveries INDEXED BY deliveries_queued WHERE interface_id = ? AND state = ? AND ${QUEUED} AND next_attempt_ms <= ? ORDER BY precedence, id LIMIT ${cap}`, interfaceId, state, nowMs),
      ),
    ].sort((a, b) => a.precedence - b.precedence || (a.front_ms === null ? 1 : 0) - (b.front_ms === null ? 1 : 0) || (a.front_ms ?? 0) - (b.front_ms ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const chosen = [...new Set(order.map((k) => k.id).filter((id) => !skip.has(id)))].slice(0, limit);
    if (chosen.length === 0) return [];
    const rows = new Map(
      (this.#prepare('SELECT * FROM deliveries WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(chosen)) as unknown as Raw[]).map((r) => [r.id, decode(r)]),
    );
    return chosen.map((id) => rows.get(id)).filter((r): r is DeliveryRow => r !== undefined);
  }

  earliestWaiting(interfaceId: string): number | undefined {
    this.#trustGroup();
    const dirty = this.#dirtyJson(interfaceId);
    const times = READY_STATES.map((state) =>
      (this.#prepare(`SELECT min(next_attempt_ms) AS t FROM deliveries INDEXED BY deliveries_queued WHERE interface_id = ? AND state = ? AND ${QUEUED} AND id NOT IN (SELECT value FROM json_each(?))`)
        .get(interfaceId, state, dirty) as { t: number | null }).t,
    ).filter((t): t is number => t !== null);
    return times.length ? Math.min(...times) : undefined;
  }
  earliestExpiry(nowMs: number): number | undefined {
    // The partial index walks waiting deliveries in expiry order: the first one answers.
    // Deliveries on the air count too while their TTL is still ahead (if the send fails they
    // must still expire on time); one past it is expired when it comes back (the dispatcher
    // schedules expiry after every flush that leaves a delivery waiting again).
    const r = this.#prepare("SELECT expires_ms AS t FROM deliveries INDEXED BY deliveries_expiry WHERE state IN ('pending', 'retrying', 'held') ORDER BY expires_ms LIMIT 1").get() as { t: number } | undefined;
    const sending = this.#prepare("SELECT min(expires_ms) AS t FROM deliveries INDEXED BY deliveries_sending WHERE state = 'sending' AND expires_ms > ?").get(nowMs) as { t: number | null };
    const times = [r?.t, sending.t ?? undefined].filter((t): t is number => t !== undefined && t < NEVER_MS);
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
  // A delivery a fallback list escalated away from while it was on the air may still be
  // acknowledged: that late 'delivered' is written over the cancellation, never lost.
  // A delivered delivery keeps no error: what failed before it went out (a retry, a pacing
  // wait) would read as a failure of a success; `attempts` still counts the tries.
  settle(id: string, state: 'delivered' | 'dead' | 'cancelled', error: string | null, nowMs: number, fromWaiting = false, result: Record<string, unknown> | null = null): boolean {
    const late = state === 'delivered' ? " OR (state = 'cancelled' AND last_error LIKE 'escalated:%')" : '';
    const lastError = state === 'delivered' ? 'NULL' : 'coalesce(?, last_error)';
    const sql = fromWaiting
      ? `UPDATE deliveries SET state = ?, attempts = attempts + 1, front_ms = NULL, last_error = ${lastError}, result = ?, updated_at = ?, finished_at = ? WHERE id = ? AND (state IN ('pending', 'retrying')${late})`
      : `UPDATE deliveries SET state = ?, last_error = ${lastError}, result = ?, updated_at = ?, finished_at = ? WHERE id = ? AND (state = 'sending'${late})`;
    const params = state === 'delivered' ? [] : [error];
    return this.#changed(this.#prepare(sql).run(state, ...params, result === null ? null : JSON.stringify(result), iso(nowMs), iso(nowMs), id));
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
  /** Cancel through the API: a waiting delivery or a dead letter (whose last error is kept in
   *  the reason). Never one on the air. */
  cancel(id: string, reason: string, nowMs: number): DeliveryRow | undefined {
    this.flush();
    const rows = this.#returning(
      this.#prepare(`UPDATE deliveries SET state = 'cancelled', last_error = ${KEEP_DEAD_ERROR}, updated_at = ?, finished_at = ? WHERE id = ? AND state IN ('pending', 'held', 'retrying', 'dead') RETURNING *`)
        .all(reason, reason, iso(nowMs), iso(nowMs), id),
    );
    return rows[0];
  }
  /** The dead letters a filter takes: id and interface, oldest first. */
  deadLetters(f: DeadLetterFilter): Array<{ id: string; interface_id: string }> {
    this.flush();
    const { where, args } = deadWhere(f);
    return this.#prepare(`SELECT id, interface_id FROM deliveries INDEXED BY deliveries_dead WHERE ${where} ORDER BY id`).all(...args) as Array<{ id: string; interface_id: string }>;
  }
  /** Bulk cancel of dead letters by filter, in one statement; answers how many. */
  cancelDead(f: DeadLetterFilter, reason: string, nowMs: number): number {
    this.flush();
    const { where, args } = deadWhere(f);
    return this.#returning(
      this.#prepare(`UPDATE deliveries INDEXED BY deliveries_dead SET state = 'cancelled', last_error = ${KEEP_DEAD_ERROR}, updated_at = ?, finished_at = ? WHERE ${where} RETURNING *`)
        .all(reason, reason, iso(nowMs), iso(nowMs), ...args),
    ).length;
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
    return this.retryMany([id], nowMs, ttlMs)[0];
  }
  /** retryNow for several deliveries of one interface at once (a bulk retry of dead letters). */
  retryMany(ids: readonly string[], nowMs: number, ttlMs: number): DeliveryRow[] {
    this.flush();
    return this.#returning(
      this.#prepare(
        `UPDATE deliveries SET state = CASE state WHEN 'dead' THEN 'retrying' ELSE state END,
           max_attempts = CASE WHEN attempts >= max_attempts THEN attempts + 1 ELSE max_attempts END,
           expires_ms = CASE WHEN expires_ms <= ? THEN ? ELSE expires_ms END, front_ms = ?, next_attempt_ms = ?, finished_at = NULL, updated_at = ?
         WHERE id IN (SELECT value FROM json_each(?)) AND state IN ('pending', 'held', 'retrying', 'dead') RETURNING *`,
      ).all(nowMs, nowMs + ttlMs, nowMs, nowMs, iso(nowMs), JSON.stringify(ids)),
    );
  }
  expireDue(nowMs: number): number {
    this.flush();
    return this.#returning(
      this.#prepare("UPDATE deliveries SET state = 'expired', last_error = coalesce(last_error, 'message TTL passed before delivery'), updated_at = ?, finished_at = ? WHERE state IN ('pending', 'retrying', 'held') AND expires_ms <= ? RETURNING *")
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
    // Two statements, each read through its partial index (the queue's, and the one of sends on the air).
    let n = 0;
    for (const where of ["state IN ('pending', 'held', 'retrying')", "state = 'sending'"]) {
      n += this.#returning(
        this.#prepare(`UPDATE deliveries SET state = 'cancelled', last_error = ?, updated_at = ?, finished_at = ? WHERE interface_id = ? AND ${where} RETURNING *`)
          .all(reason, iso(nowMs), iso(nowMs), interfaceId),
      ).length;
    }
    return n;
  }
  /**
   * The interface went down (disabled, unbound, offline): its waiting deliveries are `held`.
   * With `pauseTtl` their TTL stops: what is left is kept and the expiry moves out of reach
   * until release. Answers how many were held.
   */
  holdWaiting(interfaceId: string, nowMs: number, pauseTtl: boolean): number {
    this.flush();
    // A delivery whose writes could not be committed (the flush failed) may be on the air: it
    // reads as waiting, but held now its outcome would find 'held' and change nothing, and its
    // release would send it again. It is held, if it must be, once its outcome is written.
    // One statement per state: each seeks its own part of the queue's index, so the deliveries
    // already held (all of them, on an interface down for a day) are not walked again.
    const dirty = this.#dirtyJson(interfaceId);
    return READY_STATES.reduce(
      (n, state) =>
        n +
        this.#returning(
          this.#prepare(
            `UPDATE deliveries SET state = 'held', front_ms = NULL,
               held_ttl_ms = CASE WHEN ? THEN max(expires_ms - ?, 0) ELSE NULL END,
               expires_ms = CASE WHEN ? THEN ? ELSE expires_ms END, updated_at = ?
             WHERE interface_id = ? AND state = ? AND ${QUEUED} AND id NOT IN (SELECT value FROM json_each(?)) RETURNING *`,
          ).all(pauseTtl ? 1 : 0, nowMs, pauseTtl ? 1 : 0, NEVER_MS, iso(nowMs), interfaceId, state, dirty),
        ).length,
      0,
    );
  }
  /** The interface is back: what it held (and is not waiting for a node) is due now, its TTL
   *  running again from what was left. */
  releaseHeld(interfaceId: string, nowMs: number): number {
    this.flush();
    return this.#returning(
      this.#prepare(
        `UPDATE deliveries SET state = CASE WHEN attempts > 0 THEN 'retrying' ELSE 'pending' END, next_attempt_ms = max(next_attempt_ms, ?),
           expires_ms = CASE WHEN held_ttl_ms IS NOT NULL THEN ? + held_ttl_ms ELSE expires_ms END, held_ttl_ms = NULL, updated_at = ?
         WHERE interface_id = ? AND state = 'held' AND until_heard IS NULL RETURNING *`,
      ).all(nowMs, nowMs, iso(nowMs), interfaceId),
    ).length;
  }
  /** A mesh node was heard: deliveries held for it are due now, their TTL counted from now. */
  releaseHeard(nodeId: string, nowMs: number): DeliveryRow[] {
    this.flush();
    return this.#returning(
      this.#prepare(
        `UPDATE deliveries SET state = 'pending', until_heard = NULL, next_attempt_ms = ?,
           expires_ms = CASE WHEN held_ttl_ms IS NOT NULL THEN ? + held_ttl_ms ELSE expires_ms END, held_ttl_ms = NULL, updated_at = ?
         WHERE state = 'held' AND until_heard = ? COLLATE NOCASE RETURNING *`,
      ).all(nowMs, nowMs, iso(nowMs), nodeId),
    );
  }
  /** A node's id changed (node-identity.ts): what waits for it under its former id, to send or
   *  held until it is heard, goes to its new id. A send on the air went to the former id; if it
   *  fails, its retries go to the new one. */
  readdress(formerId: string, nodeId: string, nowMs: number): DeliveryRow[] {
    this.flush();
    return this.#returning(
      this.#prepare(
        `UPDATE deliveries SET to_addr = CASE WHEN lower(to_addr) = ? THEN ? ELSE to_addr END,
           until_heard = CASE WHEN until_heard = ? COLLATE NOCASE THEN ? ELSE until_heard END, updated_at = ?
         WHERE state IN ('pending', 'held', 'retrying', 'sending') AND (lower(to_addr) = ? OR until_heard = ? COLLATE NOCASE) RETURNING *`,
      ).all(formerId, nodeId, formerId, nodeId, iso(nowMs), formerId, formerId),
    );
  }
  /** Whether any delivery is held for a node (the pipeline asks before releasing). */
  anyHeldFor(nodeId: string): boolean {
    return this.#prepare("SELECT 1 FROM deliveries WHERE state = 'held' AND until_heard = ? COLLATE NOCASE LIMIT 1").get(nodeId) !== undefined;
  }

  // ---- fallback lists (fallback.ts) ----

  byFallback(listId: string): DeliveryRow[] {
    this.flush();
    return (this.#prepare('SELECT * FROM deliveries WHERE fallback_id = ? ORDER BY fallback_pos, id').all(listId) as unknown as Raw[]).map(decode);
  }
  /** A member was delivered: the others still waiting are cancelled (on the air ones finish). */
  supersede(listId: string, deliveredId: string, reason: string, nowMs: number): DeliveryRow[] {
    this.flush();
    return this.#returning(
      this.#prepare(`UPDATE deliveries SET state = 'cancelled', last_error = ?, updated_at = ?, finished_at = ? WHERE fallback_id = ? AND id != ? AND state IN ('pending', 'held', 'retrying') RETURNING *`)
        .all(reason, iso(nowMs), iso(nowMs), listId, deliveredId),
    );
  }
  /** The list moved past a member: it stops, also on the air (a late acknowledgement is still written: settle). */
  escalateAway(listId: string, position: number, reason: string, nowMs: number): DeliveryRow[] {
    this.flush();
    return this.#returning(
      this.#prepare(`UPDATE deliveries SET state = 'cancelled', last_error = ?, updated_at = ?, finished_at = ? WHERE fallback_id = ? AND fallback_pos = ? AND state IN ('pending', 'held', 'retrying', 'sending') RETURNING *`)
        .all(reason, iso(nowMs), iso(nowMs), listId, position),
    );
  }
  /** Every leg of a message stops: waiting or on the air (POST /api/messages/{id}/cancel). */
  cancelMessage(messageId: string, reason: string, nowMs: number): DeliveryRow[] {
    this.flush();
    return this.#returning(
      this.#prepare(`UPDATE deliveries SET state = 'cancelled', last_error = ?, updated_at = ?, finished_at = ? WHERE message_id = ? AND state IN ('pending', 'held', 'retrying', 'sending') RETURNING *`)
        .all(reason, iso(nowMs), iso(nowMs), messageId),
    );
  }

  queueDepth(interfaceId: string): number {
    this.flush();
    return this.queued(interfaceId).count + (this.#prepare("SELECT count(*) AS n FROM deliveries INDEXED BY deliveries_sending WHERE interface_id = ? AND state = 'sending'").get(interfaceId) as { n: number }).n;
  }
  /** Interfaces with deliveries waiting: from the running totals, one row per interface. */
  interfacesWithWork(): string[] {
    this.flush();
    return (this.#prepare('SELECT interface_id AS id FROM queue_totals WHERE count > 0').all() as Array<{ id: string }>).map((r) => r.id);
  }
  /** What waits for an interface (pending, held, retrying), for its caps: count and bytes, the
   *  running totals (attachQueueTotals, delivery-sql.ts), so the cost does not grow with the queue. */
  queued(interfaceId: string): { count: number; bytes: number } {
    const r = this.#prepare('SELECT count, bytes FROM queue_totals WHERE interface_id = ?').get(interfaceId) as { count: number; bytes: number } | undefined;
    return r ?? { count: 0, bytes: 0 };
  }
  /** The same, counted from the deliveries themselves: what the running totals must equal. */
  countQueued(interfaceId: string): { count: number; bytes: number } {
    this.flush();
    return this.#prepare(`SELECT count(*) AS count, coalesce(sum(size), 0) AS bytes FROM deliveries INDEXED BY deliveries_queued WHERE interface_id = ? AND ${QUEUED}`).get(interfaceId) as { count: number; bytes: number };
  }
  /** The delivery a full queue gives up first: the lowest precedence, then the oldest; never
   *  override or flash (docs/routing.md, "Bounded queues"). Each (state, precedence) is a range
   *  of the queue's index in id order, so the candidate is the first entry of at most twelve
   *  ranges: a few seeks, whatever the queue holds. */
  evictionCandidate(interfaceId: string): { id: string; precedence: number } | undefined {
    this.#trustGroup();
    // A delivery the dispatcher has just taken (its 'sending' mark not written yet) still reads
    // as waiting: it is on the air and not the queue's to give up. Those are stepped over one
    // seek at a time, so the cost grows with the sends in flight, not with the queue.
    const skip = this.#writeBehind.dirtyOn(interfaceId);
    const first = this.#prepare(`SELECT id FROM deliveries INDEXED BY deliveries_queued WHERE interface_id = ? AND state = ? AND ${QUEUED} AND precedence = ? AND id > ? ORDER BY id LIMIT 1`);
    for (const precedence of EVICTABLE_RANKS) {
      let oldest: string | undefined;
      for (const state of WAITING_STATES) {
        let r: { id: string } | undefined;
        let after = '';
        while ((r = first.get(interfaceId, state, precedence, after) as { id: string } | undefined) && skip.has(r.id)) after = r.id;
        if (r && (oldest === undefined || r.id < oldest)) oldest = r.id;
      }
      if (oldest !== undefined) return { id: oldest, precedence };
    }
    return undefined;
  }
  /** Evicts a waiting delivery to the dead letters with the reason (inside the caller's transaction). */
  evict(id: string, reason: string, nowMs: number): DeliveryRow | undefined {
    return this.#returning(
      this.#prepare("UPDATE deliveries SET state = 'dead', last_error = ?, updated_at = ?, finished_at = ? WHERE id = ? AND state IN ('pending', 'held', 'retrying') RETURNING *").all(reason, iso(nowMs), iso(nowMs), id),
    )[0];
  }
  /** An interface's queue for health: waiting by precedence, how many are held, how many
   *  were evicted (dead letters still kept). */
  queueStats(interfaceId: string): { by_precedence: Record<string, number>; held: number; evicted: number } {
    const by_precedence: Record<string, number> = Object.fromEntries(PRECEDENCES.map((p) => [p, 0]));
    let held = 0;
    for (const r of this.queueByPrecedence(interfaceId)) {
      by_precedence[precedenceName(r.precedence)] += r.n;
      if (r.state === 'held') held += r.n;
    }
    const evicted = (this.#prepare("SELECT count(*) AS n FROM deliveries INDEXED BY deliveries_dead WHERE interface_id = ? AND state = 'dead' AND last_error LIKE 'evicted:%'").get(interfaceId) as { n: number }).n;
    return { by_precedence, held, evicted };
  }
  /** Waiting and sending deliveries by interface, precedence and state (of one interface, or of
   *  all), for health and /metrics: read from the queue's partial index and the one of sends on
   *  the air, never the whole table. */
  queueByPrecedence(interfaceId?: string): Array<{ interface_id: string; precedence: number; state: string; n: number }> {
    this.flush();
    const one = interfaceId === undefined ? '' : 'AND interface_id = ?';
    const args = interfaceId === undefined ? [] : [interfaceId];
    return [
      ...this.#prepare(`SELECT interface_id, precedence, state, count(*) AS n FROM deliveries INDEXED BY deliveries_queued WHERE ${QUEUED} ${one} GROUP BY interface_id, state, precedence`).all(...args),
      ...this.#prepare(`SELECT interface_id, precedence, state, count(*) AS n FROM deliveries INDEXED BY deliveries_sending WHERE state = 'sending' ${one} GROUP BY interface_id, precedence, state`).all(...args),
    ] as Array<{ interface_id: string; precedence: number; state: string; n: number }>;
  }
  /**
   * Deliveries by state. Every state but delivered is counted through its partial index; the
   * delivered ones are the total less those (count(*) reads the narrowest index, not the rows),
   * so no index has to move with every delivery.
   */
  countByState(): Record<string, number> {
    this.flush();
    const counts: Record<string, number> = {};
    const add = (rows: unknown[]) => {
      for (const r of rows as Array<{ state: string; n: number }>) counts[r.state] = (counts[r.state] ?? 0) + r.n;
    };
    // One pass over the queue's index, no sort (a GROUP BY state would sort every waiting row).
    const waiting = this.#prepare("SELECT coalesce(sum(state = 'pending'), 0) AS pending, coalesce(sum(state = 'held'), 0) AS held, coalesce(sum(state = 'retrying'), 0) AS retrying FROM deliveries INDEXED BY deliveries_queued WHERE state IN ('pending', 'held', 'retrying')").get() as Record<string, number>;
    add(Object.entries(waiting).map(([state, n]) => ({ state, n })));
    add(this.#prepare("SELECT 'sending' AS state, count(*) AS n FROM deliveries INDEXED BY deliveries_sending WHERE state = 'sending'").all());
    add(this.#prepare("SELECT 'dead' AS state, count(*) AS n FROM deliveries INDEXED BY deliveries_dead WHERE state = 'dead'").all());
    add(this.#prepare("SELECT state, count(*) AS n FROM deliveries INDEXED BY deliveries_unsent WHERE state IN ('cancelled', 'expired') GROUP BY state").all());
    const { n: total } = this.#prepare('SELECT count(*) AS n FROM deliveries').get() as { n: number };
    const delivered = total - Object.values(counts).reduce((a, b) => a + b, 0);
    if (delivered > 0) counts.delivered = delivered;
    for (const [state, n] of Object.entries(counts)) if (n === 0) delete counts[state];
    return counts;
  }
  countByInterfaceWaiting(): Array<{ interface_id: string; n: number }> {
    const byInterface = new Map<string, number>();
    for (const r of this.queueByPrecedence()) byInterface.set(r.interface_id, (byInterface.get(r.interface_id) ?? 0) + r.n);
    return [...byInterface].map(([interface_id, n]) => ({ interface_id, n }));
  }
  /** Retention: resolved deliveries (delivered, expired, cancelled) older than the cut-off. Dead letters stay.
   *  No index on state moves with every delivery (docs/data-model.md); instead only deliveries
   *  made before the cut-off are read, a range of the primary key (an id carries its creation
   *  time, and a delivery is resolved after it is made). It runs at every start: the whole
   *  table read then made a start on a deep queue slower by the queue's size. */
  deleteResolvedOlderThan(isoCutoff: string): number {
    this.flush();
    return Number(
      this.#prepare("DELETE FROM deliveries WHERE id < ? AND state IN ('delivered', 'expired', 'cancelled') AND updated_at < ?").run(idFloor('dlv', Date.parse(isoCutoff)), isoCutoff).changes,
    );
  }
}
