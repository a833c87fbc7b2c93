// The hub writes its SQL once, in PostgreSQL's dialect for placeholders ($1, $2, ...), and the
// SQLite driver rewrites them. node:sqlite rejects "$1" ("column index out of range") but
// accepts "?1" (docs/dependencies.md, placeholders), so "$n" becomes "?n" everywhere outside string literals, quoted
// identifiers and comments, where a "$1" is text and must stay as it is.

export type SqlValue = string | number | null;
export type Row = Record<string, unknown>;

/** What a store needs from a database: parameterised queries, one after another. */
export interface Queryable {
  /** Runs one statement; returns its rows (empty for statements without RETURNING). */
  query(sql: string, params?: SqlValue[]): Promise<Row[]>;
  /** Runs one statement and returns how many rows it changed. */
  run(sql: string, params?: SqlValue[]): Promise<number>;
  /** SQLite only: runs one statement once per parameter list, in one go (no await between
   *  rows); returns the rows each changed. The ingest's batches use it. */
  runMany?(sql: string, rows: SqlValue[][]): Promise<number[]>;
}

export interface CatalogueTable {
  name: string;
  columns: string[];
}

export interface SqlDriver extends Queryable {
  readonly dialect: 'sqlite' | 'postgres';
  /** Runs fn in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Like transaction, but also holds the database-wide migration lock (PostgreSQL: an
   * advisory lock taken inside the transaction; SQLite: BEGIN IMMEDIATE is that lock already).
   */
  migrationTransaction<T>(fn: (tx: Queryable & { exec(sql: string): Promise<void> }) => Promise<T>): Promise<T>;
  /** Every user table with its columns, read from the database catalogue (docs/api.md 4.2). */
  catalogue(): Promise<CatalogueTable[]>;
  close(): Promise<void>;
}

/** Rewrites $n placeholders to ?n outside '...' literals, "..." identifiers and comments. */
export function toSqliteParams(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      // A quoted run ends at the next lone quote; a doubled quote is an escaped one.
      let j = i + 1;
      for (; j < sql.length; j++) {
        if (sql[j] === c) {
          if (sql[j + 1] === c) j++;
          else break;
        }
      }
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const j = end === -1 ? sql.length : end;
      out += sql.slice(i, j);
      i = j;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      const j = end === -1 ? sql.length : end + 2;
      out += sql.slice(i, j);
      i = j;
    } else if (c === '$' && /[0-9]/.test(sql[i + 1] ?? '') && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? '')) {
      let j = i + 1;
      while (/[0-9]/.test(sql[j] ?? '')) j++;
      out += '?' + sql.slice(i + 1, j);
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Quotes an identifier read from the catalogue, so any table name is safe in a statement. */
export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}
