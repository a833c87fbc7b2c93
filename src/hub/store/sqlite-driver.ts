import { resolve } from 'node:path';
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { preparePrivateDatabase } from '../../db/private-files.ts';
import { openSqlite } from '../../db/sqlite.ts';
import type { Logger } from '../../lib/log.ts';
import { type CatalogueTable, type Queryable, type Row, type SqlDriver, type SqlValue, toSqliteParams } from './sql.ts';

// The self-hosted hub's store: one SQLite file (HUB_SQLITE_PATH, docs/api.md section 1). node:sqlite
// is synchronous, but the store interface is async (PostgreSQL is), so a transaction's body
// can await between statements. Every operation therefore goes through one queue: a
// statement issued while another caller's transaction is open would otherwise run inside it.
// The queue is per file, not per connection: two drivers on one file in one process (tests,
// a CLI command beside a running store) would otherwise block the event loop in BEGIN
// IMMEDIATE waiting for a lock that only the blocked loop could release.

const queues = new Map<string, { tail: Promise<unknown>; users: number }>();

export class SqliteDriver implements SqlDriver {
  readonly dialect = 'sqlite' as const;
  readonly #db: DatabaseSync;
  readonly #direct: Queryable;
  readonly #queue: { tail: Promise<unknown>; users: number };
  readonly #path: string;
  // Statements are prepared once per text: the hub runs the same few over and over.
  readonly #prepared = new Map<string, ReturnType<DatabaseSync['prepare']>>();

  constructor(path: string, options: { log?: Logger } = {}) {
    this.#path = path === ':memory:' ? `:memory:${Math.random()}` : resolve(path);
    const queue = queues.get(this.#path) ?? { tail: Promise.resolve(), users: 0 };
    queue.users++;
    queues.set(this.#path, queue);
    this.#queue = queue;
    // It holds every enrolled bridge's secret, which verifies that bridge's signatures.
    preparePrivateDatabase(path, { log: options.log, why: "the hub database holds the bridges' secrets: owner only" });
    this.#db = openSqlite(path);
    this.#direct = {
      query: async (sql, params = []) => this.#statement(sql).all(...(params as SQLInputValue[])) as Row[],
      run: async (sql, params = []) => Number(this.#statement(sql).run(...(params as SQLInputValue[])).changes),
      runMany: async (sql, rows) => {
        const stmt = this.#statement(sql);
        return rows.map((params) => Number(stmt.run(...(params as SQLInputValue[])).changes));
      },
    };
  }

  query(sql: string, params?: SqlValue[]): Promise<Row[]> {
    return this.#serial(() => this.#direct.query(sql, params));
  }

  run(sql: string, params?: SqlValue[]): Promise<number> {
    return this.#serial(() => this.#direct.run(sql, params));
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#serial(() => this.#inTransaction(() => fn(this.#direct)));
  }

  migrationTransaction<T>(fn: (tx: Queryable & { exec(sql: string): Promise<void> }) => Promise<T>): Promise<T> {
    // BEGIN IMMEDIATE takes SQLite's write lock at once: a second process starting on the
    // same file waits (busy timeout) instead of migrating beside us.
    const tx = { ...this.#direct, exec: async (sql: string) => this.#db.exec(sql) };
    return this.#serial(() => this.#inTransaction(() => fn(tx)));
  }

  async catalogue(): Promise<CatalogueTable[]> {
    return this.#serial(async () => {
      const tables = this.#db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .all() as Array<{ name: string }>;
      return tables.map((t) => ({
        name: t.name,
        columns: (this.#db.prepare('SELECT name FROM pragma_table_info(?) ORDER BY cid').all(t.name) as Array<{ name: string }>).map((c) => c.name),
      }));
    });
  }

  async close(): Promise<void> {
    await this.#serial(async () => {
      this.#prepared.clear();
      if (this.#db.isOpen) this.#db.close();
    });
    if (--this.#queue.users === 0) queues.delete(this.#path);
  }

  #statement(sql: string) {
    let stmt = this.#prepared.get(sql);
    if (!stmt) {
      stmt = this.#db.prepare(toSqliteParams(sql));
      this.#prepared.set(sql, stmt);
    }
    return stmt;
  }

  async #inTransaction<T>(body: () => Promise<T>): Promise<T> {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const result = await body();
      this.#db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  #serial<T>(op: () => Promise<T>): Promise<T> {
    const next = this.#queue.tail.then(op, op);
    this.#queue.tail = next.catch(() => {});
    return next;
  }
}
