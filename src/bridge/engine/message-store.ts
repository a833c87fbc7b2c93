import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';
import { fromJson, toJson } from '../../lib/json.ts';
import type { MessageRow } from './rows.ts';
import { containing, Where } from '../../db/where.ts';


export interface MessageFilter {
  direction?: string;
  interface_id?: string;
  kind?: string;
  since?: string;
  until?: string;
  q?: string;
  before_id?: string;
}

interface Raw extends Omit<MessageRow, 'from' | 'to' | 'decision' | 'meta'> {
  from_addr: string;
  to_addr: string;
  decision: string | null;
  meta: string;
}

const decode = (r: Raw): MessageRow => {
  const { from_addr, to_addr, ...rest } = r;
  return { ...rest, from: from_addr, to: to_addr, decision: fromJson(r.decision, null), meta: fromJson(r.meta, {}) };
};

/** The WHERE clause of a filter (empty when nothing is filtered), with its arguments. */
function whereOf(f: MessageFilter): { where: string; args: SQLInputValue[] } {
  const where = new Where();
  where.add('direction = ?', f.direction);
  where.add('interface_id = ?', f.interface_id);
  where.add('kind = ?', f.kind);
  where.add('created_at >= ?', f.since);
  where.add('created_at < ?', f.until);
  where.add("text LIKE ? ESCAPE '\\'", f.q === undefined ? undefined : containing(f.q));
  where.add('id < ?', f.before_id);
  return { where: where.clause, args: where.args };
}

/** SQL for the messages table (local history). */
export class MessageStore {
  // Statements are compiled once (insert runs for every message; list has a few shapes).
  readonly #db: StatementCache;
  constructor(db: DatabaseSync) {
    this.#db = new StatementCache(db);
  }
  insert(m: MessageRow): void {
    this.#db
      .prepare(
        'INSERT INTO messages (id, direction, interface_id, from_addr, to_addr, channel, kind, text, payload, size, rule_id, action, decision, meta, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(m.id, m.direction, m.interface_id, m.from, m.to, m.channel, m.kind, m.text, m.payload, m.size, m.rule_id, m.action, m.decision ? toJson(m.decision) : null, toJson(m.meta), m.created_at);
  }
  get(id: string): MessageRow | undefined {
    const r = this.#db.prepare('SELECT * FROM messages WHERE id = ?').get(id) as unknown as Raw | undefined;
    return r && decode(r);
  }
  /** Newest first; `limit` rows at most. */
  list(f: MessageFilter, limit: number): MessageRow[] {
    const { where, args } = whereOf(f);
    return (this.#db.prepare(`SELECT * FROM messages ${where} ORDER BY id DESC LIMIT ?`).all(...args, limit) as unknown as Raw[]).map(decode);
  }
  deleteAll(): number {
    return Number(this.#db.prepare('DELETE FROM messages').run().changes);
  }
  /** DELETE /api/messages with filters (the list's; an empty filter deletes every message). */
  deleteWhere(f: Omit<MessageFilter, 'before_id'>): number {
    const { where, args } = whereOf(f);
    return Number(this.#db.prepare(`DELETE FROM messages ${where}`).run(...args).changes);
  }
  deleteOlderThan(iso: string): number {
    return Number(this.#db.prepare('DELETE FROM messages WHERE created_at < ?').run(iso).changes);
  }
  /** Counts for GET /api/messages/stats. by_interface is keyed by the interface's name (what
   *  the operator wrote; the id for an interface deleted since), by_interface_id by its id;
   *  '(none)' counts messages sent through the API, which arrived on no interface. */
  stats(): { total: number; by_direction: Record<string, number>; by_kind: Record<string, number>; by_interface: Record<string, number>; by_interface_id: Record<string, number> } {
    const rows = (sql: string) => Object.fromEntries((this.#db.prepare(sql).all() as Array<{ k: string; n: number }>).map((r) => [r.k, r.n]));
    const group = (col: string) => rows(`SELECT coalesce(${col}, '(none)') AS k, count(*) AS n FROM messages GROUP BY ${col}`);
    const { n } = this.#db.prepare('SELECT count(*) AS n FROM messages').get() as { n: number };
    const byName = rows("SELECT coalesce(i.name, m.interface_id, '(none)') AS k, count(*) AS n FROM messages m LEFT JOIN interfaces i ON i.id = m.interface_id GROUP BY k");
    return { total: n, by_direction: group('direction'), by_kind: group('kind'), by_interface: byName, by_interface_id: group('interface_id') };
  }
}
