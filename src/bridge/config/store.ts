import type { DatabaseSync } from 'node:sqlite';
import { inTransaction, transaction } from '../../db/sqlite.ts';

// SQL for the config_sections table (bridge migration 3), nothing else. One row per section (bridge, routing, hub,
// radio, owner, modules) holding its JSON value; a section never written has no row and reads
// as its defaults, so a new default in a later release reaches every bridge that kept it.


export interface ConfigRow {
  section: string;
  value: string;
  updated_at: string;
}

export class ConfigStore {
  readonly #db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.#db = db;
  }
  all(): ConfigRow[] {
    return this.#db.prepare('SELECT section, value, updated_at FROM config_sections ORDER BY section').all() as unknown as ConfigRow[];
  }
  get(section: string): ConfigRow | undefined {
    return this.#db.prepare('SELECT section, value, updated_at FROM config_sections WHERE section = ?').get(section) as unknown as ConfigRow | undefined;
  }
  /** Counts writes, so a reader can cache what it parsed until the next one. */
  version = 0;
  /** True inside a transaction that might still roll back: nothing read there may be cached.
   *  Between the units of an open group of ingests it is false: ingests do not write sections. */
  get inTransaction(): boolean {
    return inTransaction(this.#db);
  }
  put(section: string, valueJson: string, updatedAt: string): void {
    this.version++;
    this.#db
      .prepare(
        'INSERT INTO config_sections (section, value, updated_at) VALUES (?, ?, ?) ' +
          'ON CONFLICT (section) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      )
      .run(section, valueJson, updatedAt);
  }
  /** Runs fn in a transaction of its own, or inside the caller's when one is open (an import). */
  atomically<T>(fn: () => T): { result: T; ownTransaction: boolean } {
    if (inTransaction(this.#db)) return { result: fn(), ownTransaction: false };
    return { result: transaction(this.#db, fn), ownTransaction: true };
  }
}
