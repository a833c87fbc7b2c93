import type { DatabaseSync } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';
import { afterCommit } from '../../db/sqlite.ts';
import { fromJson, toJson } from '../../lib/json.ts';

// Contacts and object groups are the same shape of thing: a named value that rules refer to
// as "@name". One store class serves both tables.

export interface BookRow<V> {
  id: string;
  name: string;
  value: V;
  created_at: string;
  updated_at: string;
}

export class BookStore<V> {
  // find runs for every @name a rule or destination mentions: statements are compiled once.
  readonly #db: StatementCache;
  readonly #table: 'contacts' | 'object_groups';
  readonly #column: 'addresses' | 'members';

  readonly #raw: DatabaseSync;
  #version = 0;

  constructor(db: DatabaseSync, table: 'contacts' | 'object_groups', column: 'addresses' | 'members') {
    this.#db = new StatementCache(db);
    this.#raw = db;
    this.#table = table;
    this.#column = column;
  }
  /** Moves on every write (and again when its transaction commits): caches of what the book
   *  holds (the senders policy's @name expansions) compare it to know they are stale. */
  get version(): number {
    return this.#version;
  }
  #changed(): void {
    this.#version++;
    afterCommit(this.#raw, () => this.#version++);
  }
  list(): BookRow<V>[] {
    return (this.#db.prepare(`SELECT id, name, ${this.#column} AS value, created_at, updated_at FROM ${this.#table} ORDER BY name`).all() as unknown as Array<BookRow<string>>).map(
      (r) => ({ ...r, value: fromJson<V>(r.value, undefined as V) }),
    );
  }
  find(ref: string): BookRow<V> | undefined {
    const r = this.#db
      .prepare(`SELECT id, name, ${this.#column} AS value, created_at, updated_at FROM ${this.#table} WHERE id = ? OR name = ?`)
      .get(ref, ref) as unknown as BookRow<string> | undefined;
    return r && { ...r, value: fromJson<V>(r.value, undefined as V) };
  }
  insert(row: BookRow<V>): void {
    this.#db
      .prepare(`INSERT INTO ${this.#table} (id, name, ${this.#column}, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`)
      .run(row.id, row.name, toJson(row.value), row.created_at, row.updated_at);
    this.#changed();
  }
  update(row: BookRow<V>): void {
    this.#db.prepare(`UPDATE ${this.#table} SET name = ?, ${this.#column} = ?, updated_at = ? WHERE id = ?`).run(row.name, toJson(row.value), row.updated_at, row.id);
    this.#changed();
  }
  delete(id: string): void {
    this.#db.prepare(`DELETE FROM ${this.#table} WHERE id = ?`).run(id);
    this.#changed();
  }
}
