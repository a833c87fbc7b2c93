import type { DatabaseSync } from 'node:sqlite';
import type { Role } from '../../auth/roles.ts';
import { isBusyError, isReadOnlyError, isStorageFullError, withoutBusyWait } from '../../db/sqlite.ts';

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
  /**
   * Writes a key's last_used_at. It is a hint (docs/decisions.md, "Keys"), so it never holds up
   * or fails the request that authenticated: it does not wait for a lock another
   * process holds (the wait froze the bridge up to 5 s), and a full or read-only disk skips it
   * (a GET answered 507). False when it was not written; the next one is a minute later.
   */
  touch(id: string, at: string): boolean {
    try {
      withoutBusyWait(this.#db, () => this.#db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(at, id));
      return true;
    } catch (error) {
      if (isBusyError(error) || isStorageFullError(error) || isReadOnlyError(error)) return false;
      throw error;
    }
  }
}
