import type { DatabaseSync } from 'node:sqlite';
import type { Role } from '../../auth/roles.ts';

export interface KeyRow {
  id: string;
  label: string;
  role: Role;
  lookup: string;
  hash: string;
  created_at: string;
  last_used_at: string | null;
}

/** SQL for the api_keys table, nothing else. */
export class KeyStore {
  readonly #db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.#db = db;
  }
  insert(row: KeyRow): void {
    this.#db
      .prepare('INSERT INTO api_keys (id, label, role, lookup, hash, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(row.id, row.label, row.role, row.lookup, row.hash, row.created_at, row.last_used_at);
  }
  list(): KeyRow[] {
    return this.#db.prepare('SELECT * FROM api_keys ORDER BY id').all() as unknown as KeyRow[];
  }
  get(id: string): KeyRow | undefined {
    return this.#db.prepare('SELECT * FROM api_keys WHERE id = ?').get(id) as unknown as KeyRow | undefined;
  }
  byLookup(lookup: string): KeyRow | undefined {
    return this.#db.prepare('SELECT * FROM api_keys WHERE lookup = ?').get(lookup) as unknown as KeyRow | undefined;
  }
  delete(id: string): boolean {
    return Number(this.#db.prepare('DELETE FROM api_keys WHERE id = ?').run(id).changes) > 0;
  }
  count(role?: Role): number {
    const row = (role
      ? this.#db.prepare('SELECT count(*) AS n FROM api_keys WHERE role = ?').get(role)
      : this.#db.prepare('SELECT count(*) AS n FROM api_keys').get()) as { n: number };
    return row.n;
  }
  touch(id: string, at: string): void {
    this.#db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(at, id);
  }
}
