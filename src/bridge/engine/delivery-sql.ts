import type { SQLInputValue } from 'node:sqlite';
import { fromJson } from '../../lib/json.ts';
import type { DeliveryRow } from './rows.ts';

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
  const where = ["state = 'dead'"];
  const args: SQLInputValue[] = [];
  if (f.interface_id !== undefined) {
    where.push('interface_id = ?');
    args.push(f.interface_id);
  }
  if (f.died_before !== undefined) {
    where.push('finished_at <= ?');
    args.push(f.died_before);
  }
  if (f.error_contains !== undefined) {
    where.push("last_error LIKE ? ESCAPE '\\'");
    args.push(`%${f.error_contains.replace(/[\\%_]/g, (c) => '\\' + c)}%`);
  }
  return { where: where.join(' AND '), args };
}
const utf8 = new TextEncoder();
/** Bytes a delivery holds in the queue (text and payload), for the byte cap. */
export const sizeOf = (d: Pick<DeliveryRow, 'text' | 'payload'>) => (d.text !== null ? utf8.encode(d.text).length : 0) + (d.payload?.length ?? 0);
