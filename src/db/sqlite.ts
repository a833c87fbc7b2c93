import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

// docs/api.md section 8: the bridge waits up to 5000 ms for a busy database before giving up.
export const BUSY_TIMEOUT_MS = 5000;

/** Opens (creating parent folders) a SQLite file with the pragmas every store expects. */
export function openSqlite(path: string): DatabaseSync {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
  // WAL lets the API read while the dispatcher writes; NORMAL is durable across an
  // application crash (a power cut may lose the last transactions, never corrupt the file).
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  return db;
}

/** Runs fn inside BEGIN IMMEDIATE ... COMMIT, rolling back on any throw. */
export function transaction<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/** True for SQLite's "database is locked/busy" errors, which the API answers with 503. */
export function isBusyError(error: unknown): boolean {
  const e = error as { errcode?: number; code?: string; message?: string };
  // errcode is the extended result code; its low byte 5 is SQLITE_BUSY, 6 SQLITE_LOCKED.
  if (typeof e?.errcode === 'number') return (e.errcode & 0xff) === 5 || (e.errcode & 0xff) === 6;
  return /database is (locked|busy)/i.test(e?.message ?? '');
}
