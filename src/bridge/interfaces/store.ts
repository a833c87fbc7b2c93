import type { DatabaseSync } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';
import { fromJson, toJson } from '../json.ts';

export interface InterfaceRow {
  id: string;
  name: string;
  kind: string;
  enabled: boolean;
  device: string | null;
  settings: Record<string, unknown>;
  transforms: { inbound: unknown[]; outbound: unknown[] };
  retry: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

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
  constructor(db: DatabaseSync) {
    // find() runs for every message and every send attempt: statements are compiled once.
    this.#db = new StatementCache(db);
  }
  list(): InterfaceRow[] {
    return (this.#db.prepare('SELECT * FROM interfaces ORDER BY id').all() as unknown as Raw[]).map(decode);
  }
  /** By id or by unique name (curl users type names). */
  find(ref: string): InterfaceRow | undefined {
    const r = this.#db.prepare('SELECT * FROM interfaces WHERE id = ? OR name = ?').get(ref, ref) as unknown as Raw | undefined;
    return r && decode(r);
  }
  nameTaken(name: string, exceptId = ''): boolean {
    return !!this.#db.prepare('SELECT 1 FROM interfaces WHERE name = ? AND id != ?').get(name, exceptId);
  }
  insert(row: InterfaceRow): void {
    this.#db
      .prepare('INSERT INTO interfaces (id, name, kind, enabled, device, settings, transforms, retry, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(row.id, row.name, row.kind, row.enabled ? 1 : 0, row.device, toJson(row.settings), toJson(row.transforms), toJson(row.retry), row.created_at, row.updated_at);
  }
  update(row: InterfaceRow): void {
    this.#db
      .prepare('UPDATE interfaces SET name = ?, enabled = ?, device = ?, settings = ?, transforms = ?, retry = ?, updated_at = ? WHERE id = ?')
      .run(row.name, row.enabled ? 1 : 0, row.device, toJson(row.settings), toJson(row.transforms), toJson(row.retry), row.updated_at, row.id);
  }
  delete(id: string): void {
    this.#db.prepare('DELETE FROM interfaces WHERE id = ?').run(id);
  }
}
