import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { fromJson } from '../../lib/json.ts';
import type { DeliveryRow } from './rows.ts';
import { containing, Where } from '../../db/where.ts';

// The SQL pieces and row decoding DeliveryStore (delivery-store.ts) is written with: filters,
// the queue index's condition, the dead letters' WHERE, sizes and limits.

/** Which dead letters a bulk action takes (POST /api/deliveries/dead/cancel and /retry). */
export interface DeadLetterFilter {
  interface_id?: string;
  /** Dead since this time or earlier (finished_at, ISO). */
  died_before?: string;
  /** A substring of last_error, ignoring ASCII case. */
  error_contains?: string;
}

export interface DeliveryFilter {
  state?: string;
  interface_id?: string;
  message_id?: string;
  before_id?: string;
}

export interface Raw extends Omit<DeliveryRow, 'to' | 'from' | 'result'> {
  to_addr: string;
  from_addr: string;
  result?: string | null;
}

export const decode = (r: Raw): DeliveryRow => {
  const { to_addr, from_addr, result, ...rest } = r;
  return { ...rest, to: to_addr, from: from_addr, result: fromJson(result, null) };
};

export const iso = (ms: number) => new Date(ms).toISOString();
/** The partial index deliveries_queued's condition, written in every query that reads it (SQLite
 *  uses a partial index only when the query's WHERE repeats its condition). A query for one
 *  state puts `state = ?` before it: the planner then seeks that state's range of the index
 *  (interface_id, state, precedence, id, ...) and never walks the other states' entries. */
export const QUEUED = "state IN ('pending', 'held', 'retrying')";
/** The waiting states the dispatcher takes from (held ones wait for their interface or node). */
export const READY_STATES = ['pending', 'retrying'] as const;
/** Precedence ranks a full queue may give up, lowest first: deferred (5) to priority (2). */
export const EVICTABLE_RANKS = [5, 4, 3, 2] as const;
/** A row limit as SQL text: the next power of two from 64, so a handful of statement texts
 *  serve every limit (a bound LIMIT recompiles the statement at every run). */
export function limitLiteral(n: number): number {
  let cap = 64;
  while (cap < n) cap *= 2;
  return cap;
}
/** SQL for a cancel's last_error (parameters: reason, reason): a dead letter's own error is kept after the reason. */
export const KEEP_DEAD_ERROR = "CASE WHEN state = 'dead' AND last_error IS NOT NULL THEN ? || '; it was a dead letter: ' || last_error ELSE ? END";

export function deadWhere(f: DeadLetterFilter): { where: string; args: SQLInputValue[] } {
  const where = new Where("state = 'dead'");
  where.add('interface_id = ?', f.interface_id);
  where.add('finished_at <= ?', f.died_before);
  where.add("last_error LIKE ? ESCAPE '\\'", f.error_contains === undefined ? undefined : containing(f.error_contains));
  return { where: where.conditions, args: where.args };
}
const utf8 = new TextEncoder();
/** Bytes a delivery holds in the queue (text and payload), for the byte cap. */
export const sizeOf = (d: Pick<DeliveryRow, 'text' | 'payload'>) => (d.text !== null ? utf8.encode(d.text).length : 0) + (d.payload?.length ?? 0);

/**
 * What waits for each interface (pending, held, retrying), as running totals, so admission checks
 * the caps without counting the queue at every delivery (docs/performance.md, "Deep queues").
 * A TEMP table kept by TEMP triggers on the deliveries: they change in the transaction that
 * changes a delivery (a rollback undoes them with it), they cost the card nothing (temp_store
 * is memory), and they are counted afresh from the deliveries when the connection opens, so a
 * crash cannot leave them apart from the truth. Writes by another connection to the deliveries
 * (none of ours makes any) are not counted until the bridge restarts.
 */
const attached = new WeakSet<DatabaseSync>();
export function attachQueueTotals(db: DatabaseSync): void {
  if (attached.has(db)) return;
  attached.add(db);
  db.exec(`
    CREATE TEMP TABLE IF NOT EXISTS queue_totals (
      interface_id  TEXT PRIMARY KEY,
      count         INTEGER NOT NULL,
      bytes         INTEGER NOT NULL
    ) WITHOUT ROWID;
    DELETE FROM temp.queue_totals;
    INSERT INTO temp.queue_totals (interface_id, count, bytes)
      SELECT interface_id, count(*), sum(size) FROM main.deliveries INDEXED BY deliveries_queued WHERE ${QUEUED} GROUP BY interface_id;
    CREATE TEMP TRIGGER IF NOT EXISTS queue_totals_insert AFTER INSERT ON main.deliveries WHEN new.state IN ('pending', 'held', 'retrying')
    BEGIN
      INSERT INTO queue_totals (interface_id, count, bytes) VALUES (new.interface_id, 1, new.size)
        ON CONFLICT (interface_id) DO UPDATE SET count = count + 1, bytes = bytes + excluded.bytes;
    END;
    CREATE TEMP TRIGGER IF NOT EXISTS queue_totals_delete AFTER DELETE ON main.deliveries WHEN old.state IN ('pending', 'held', 'retrying')
    BEGIN
      UPDATE queue_totals SET count = count - 1, bytes = bytes - old.size WHERE interface_id = old.interface_id;
    END;
    -- An update counts only when the delivery leaves or joins a queue (pending to held moves
    -- nothing); interface_id and size are never changed today, and are counted if they are.
    CREATE TEMP TRIGGER IF NOT EXISTS queue_totals_leave AFTER UPDATE OF state, interface_id, size ON main.deliveries
      WHEN old.state IN ('pending', 'held', 'retrying')
        AND NOT (new.state IN ('pending', 'held', 'retrying') AND new.interface_id = old.interface_id AND new.size = old.size)
    BEGIN
      UPDATE queue_totals SET count = count - 1, bytes = bytes - old.size WHERE interface_id = old.interface_id;
    END;
    CREATE TEMP TRIGGER IF NOT EXISTS queue_totals_join AFTER UPDATE OF state, interface_id, size ON main.deliveries
      WHEN new.state IN ('pending', 'held', 'retrying')
        AND NOT (old.state IN ('pending', 'held', 'retrying') AND new.interface_id = old.interface_id AND new.size = old.size)
    BEGIN
      INSERT INTO queue_totals (interface_id, count, bytes) VALUES (new.interface_id, 1, new.size)
        ON CONFLICT (interface_id) DO UPDATE SET count = count + 1, bytes = bytes + excluded.bytes;
    END;
  `);
}
