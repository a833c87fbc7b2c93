import type { DatabaseSync, StatementSync } from 'node:sqlite';

// node:sqlite compiles a statement on every prepare() and keeps no cache of its own. The
// stores on the routing path (every message, every send attempt) prepare through this cache
// instead: without it compiling the SQL cost more than running it (npm run bench).

export class StatementCache {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** The compiled statement for this SQL text (compiled on first use). */
  prepare(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) this.#statements.set(sql, (statement = this.#db.prepare(sql)));
    return statement;
  }
}
