import postgres from 'postgres';
import type { CatalogueTable, Queryable, Row, SqlDriver, SqlValue } from './sql.ts';

// The hosted hub's store: PostgreSQL through porsager's `postgres` (docs/design.md section 2).
// Shared SQL text runs with sql.unsafe(text, values, {prepare: true}) (docs/dependencies.md, "postgres (porsager) 3.4"). Several
// replicas share one database, so migrations run under pg_advisory_xact_lock inside their
// transaction: the lock belongs to the transaction's pinned connection and is released at
// COMMIT/ROLLBACK, which a session lock taken through the pool would not be (same section).

/** Arbitrary but fixed: every hub replica must agree on it. ASCII "fbhub" as a number. */
export const MIGRATION_LOCK_ID = 0x6662687562;

type Sql = ReturnType<typeof postgres>;
/** What a pool and a transaction have in common, as far as the hub uses them. */
type Unsafe = { unsafe: Sql['unsafe'] };

function queryable(sql: Unsafe): Queryable {
  return {
    // A plain array: postgres' result carries extra properties (count, command, ...).
    query: async (text, params = []) => [...(await sql.unsafe(text, params as never[], { prepare: true }))] as Row[],
    run: async (text, params = []) => (await sql.unsafe(text, params as never[], { prepare: true })).count,
  };
}

export class PostgresDriver implements SqlDriver {
  readonly dialect = 'postgres' as const;
  readonly #sql: Sql;
  readonly #q: Queryable;

  constructor(url: string, options: { max?: number } = {}) {
    this.#sql = postgres(url, {
      max: options.max ?? 10,
      // CREATE TABLE IF NOT EXISTS and friends send NOTICEs; they are not news for an operator.
      onnotice: () => {},
      // count(*) and other bigints come back as strings by default; the hub keeps its
      // numbers well inside 2^53, so it reads them as numbers.
      types: { bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) } } as never,
    });
    this.#q = queryable(this.#sql);
  }

  query(text: string, params?: SqlValue[]): Promise<Row[]> {
    return this.#q.query(text, params);
  }

  run(text: string, params?: SqlValue[]): Promise<number> {
    return this.#q.run(text, params);
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#sql.begin((tx) => fn(queryable(tx))) as Promise<T>;
  }

  migrationTransaction<T>(fn: (tx: Queryable & { exec(sql: string): Promise<void> }) => Promise<T>): Promise<T> {
    return this.#sql.begin(async (tx) => {
      await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`);
      // Plain unsafe without parameters runs a multi-statement migration as one simple query.
      return fn({ ...queryable(tx), exec: async (text: string) => void (await tx.unsafe(text)) });
    }) as Promise<T>;
  }

  async catalogue(): Promise<CatalogueTable[]> {
    const rows = (await this.#sql.unsafe(
      `SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = current_schema()
        ORDER BY table_name, ordinal_position`,
    )) as unknown as Array<{ table_name: string; column_name: string }>;
    const tables = new Map<string, string[]>();
    for (const r of rows) {
      const cols = tables.get(r.table_name) ?? [];
      cols.push(r.column_name);
      tables.set(r.table_name, cols);
    }
    return [...tables].map(([name, columns]) => ({ name, columns }));
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 });
  }
}
