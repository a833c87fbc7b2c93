import type { DatabaseSync } from 'node:sqlite';
import { inTransaction } from '../../db/sqlite.ts';
import { StatementCache } from '../../db/statement-cache.ts';
import { fromJson, toJson } from '../../lib/json.ts';
import type { InterfaceRow } from './rows.ts';


interface Raw {
  id: string;
  name: string;
  kind: string;
  enabled: number;
  device: string | null;
  settings: string;
  transforms: string;
  retry: string;
  created_at: string;
  updated_at: string;
}

const decode = (r: Raw): InterfaceRow => ({
  ...r,
  enabled: r.enabled === 1,
  settings: fromJson(r.settings, {}),
  transforms: fromJson(r.transforms, { inbound: [], outbound: [] }),
  retry: fromJson(r.retry, {}),
});

/** SQL for the interfaces table. */
export class InterfaceStore {
  readonly #db: StatementCache;
  readonly #raw: DatabaseSync;
  /** Rows by id and by name. find() runs for every message and every send attempt, and
   *  interfaces change rarely; every write clears the cache, and nothing is cached inside an
   *  open transaction (it might roll back). Rows are never mutated by callers. */
  readonly #rows = new Map<string, InterfaceRow>();
  constructor(db: DatabaseSync) {
    this.#raw = db;
    this.#db = new StatementCache(db);
  }
  list(): InterfaceRow[] {
    return (this.#db.prepare('SELECT * FROM interfaces ORDER BY id').all() as unknown as Raw[]).map(decode);
  }
  /** By id or by unique name (curl users type names). */
  find(ref: string): InterfaceRow | undefined {
    const cached = this.#rows.get(ref);
    if (cached) return cached;
    const r = this.#db.prepare('SELECT * FROM interfaces WHERE id = ? OR name = ?').get(ref, ref) as unknown as Raw | undefined;
    if (!r) return undefined;
    const row = decode(r);
    // Not inside a transaction that may roll back; between the units of an open group of ingests
    // it may (ingests do not write interfaces).
    if (!inTransaction(this.#raw)) this.#rows.set(row.id, row).set(row.name, row);
    return row;
  }
  nameTaken(name: string, exceptId = ''): boolean {
    return !!this.#db.prepare('SELECT 1 FROM interfaces WHERE name = ? AND id != ?').get(name, exceptId);
  }
  insert(row: InterfaceRow): void {
    this.#rows.clear();
    this.#db
      .prepare('INSERT INTO interfaces (id, name, kind, enabled, device, settings, transforms, retry, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(row.id, row.name, row.kind, row.enabled ? 1 : 0, row.device, toJson(row.settings), toJson(row.transforms), toJson(row.retry), row.created_at, row.updated_at);
  }
  update(row: InterfaceRow): void {
    this.#rows.clear();
    this.#db
      .prepare('UPDATE interfaces SET name = ?, enabled = ?, device = ?, settings = ?, transforms = ?, retry = ?, updated_at = ? WHERE id = ?')
      .run(row.name, row.enabled ? 1 : 0, row.device, toJson(row.settings), toJson(row.transforms), toJson(row.retry), row.updated_at, row.id);
  }
  delete(id: string): void {
    this.#rows.clear();
    this.#db.prepare('DELETE FROM interfaces WHERE id = ?').run(id);
  }
}
