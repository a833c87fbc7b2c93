import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { StartupError } from '../lib/errors.ts';

// docs/api.md section 8: the bridge waits up to 5000 ms for a busy database before giving up.
export const BUSY_TIMEOUT_MS = 5000;

/** Opens (creating parent folders) a SQLite file with the pragmas every store expects. */
/** SQLite's "database is locked": another connection holds the write lock. */
const SQLITE_BUSY = 5;

export function openSqlite(path: string): DatabaseSync {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    // WAL lets the API read while the dispatcher writes; NORMAL is durable across an
    // application crash (a power cut may lose the last transactions, never corrupt the file).
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec('PRAGMA foreign_keys = ON');
    // SQLite opens a file (or a -wal) it may not write read-only, without a word, and every
    // write would fail later. Writing the header's user_version, unchanged, and rolling back
    // says so now (SQLITE_READONLY) and puts nothing on disk (issue 14).
    const { user_version: userVersion } = db.prepare('PRAGMA user_version').get() as { user_version: number };
    try {
      // Without the busy wait: a file another process is writing (the running bridge, while
      // `fieldbridge backup` opens it) is writable, just busy, and must not hold up the open.
      withoutBusyWait(db, () => {
        db.exec('BEGIN IMMEDIATE');
        try {
          db.exec(`PRAGMA user_version = ${Number(userVersion)}`);
        } finally {
          if (db.isTransaction) db.exec('ROLLBACK');
        }
      });
    } catch (error) {
      if (primaryCode(error) !== SQLITE_BUSY) throw error;
    }
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * An error met while opening a database file, as one line for the operator (issue 14): the
 * path, what is in the way in words (found by looking at the path itself: Node reports a
 * read-only file system under mkdir as ENOENT and a file in the way as EEXIST), and the
 * variable that chose the path. A StartupError passes through (a migration's own message);
 * main prints it without a stack trace.
 */
export function databaseOpenError(error: unknown, path: string, variable: string): unknown {
  if (error instanceof StartupError) return error;
  const file = resolve(path);
  const e = error as { code?: string; errcode?: number; message?: string };
  const sqlite = typeof e.errcode === 'number' ? OPEN_SQLITE[e.errcode & 0xff] : undefined;
  let seen: string | null = null;
  try {
    seen = pathProblem(file);
  } catch {
    // Looking was not possible either: SQLite's or Node's own words below.
  }
  const why = seen ?? sqlite ?? e.message ?? String(error);
  return new StartupError(`cannot open the database ${file}: ${why}; ${variable} names it: point it at a file in a folder this user may write, on a writable file system`);
}

/** What stops this user from creating or writing `file`, or null when nothing visible does. */
function pathProblem(file: string): string | null {
  let existing = dirname(file);
  const missing: string[] = [];
  while (!existsSync(existing) && dirname(existing) !== existing) {
    missing.unshift(existing);
    existing = dirname(existing);
  }
  if (!statSync(existing).isDirectory()) return `${existing} is a file, not a folder`;
  const denied = (target: string, mode: number): string | null => {
    try {
      accessSync(target, mode);
      return null;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EROFS') return `${target} is on a read-only file system`;
      if (code === 'EACCES' || code === 'EPERM') return `this user (uid ${process.getuid?.() ?? '?'}) may not write ${target}`;
      return `${target}: ${(error as Error).message}`;
    }
  };
  if (missing.length > 0) return denied(existing, constants.W_OK | constants.X_OK) ?? `${missing[0]} does not exist and could not be created`;
  const folder = denied(existing, constants.W_OK | constants.X_OK);
  if (!existsSync(file)) return folder;
  if (statSync(file).isDirectory()) return `${file} is a folder, not a file`;
  // SQLite writes its -wal and -shm files beside the database: the folder must be writable too.
  return denied(file, constants.R_OK | constants.W_OK) ?? folder;
}

// sqlite.org/rescode.html, primary result codes.
const OPEN_SQLITE: Record<number, string> = {
  3: 'permission denied (SQLITE_PERM)',
  8: 'the file or its folder is read-only for this user, or the file system is read-only (SQLITE_READONLY)',
  10: 'an I/O error (SQLITE_IOERR)',
  13: 'the disk is full (SQLITE_FULL)',
  14: 'the file, its folder or its -wal/-shm files cannot be opened for writing (SQLITE_CANTOPEN)',
  26: 'the file is not a SQLite database (SQLITE_NOTADB)',
};

/** The last transaction() on a connection that failed for want of room or of write access
 *  (SQLITE_FULL, SQLITE_READONLY), and when; forgotten at the next commit. DbHealth reads it. */
export interface WriteTrouble {
  error: unknown;
  atMs: number;
}
const troubles = new WeakMap<DatabaseSync, WriteTrouble>();

export function lastWriteTrouble(db: DatabaseSync): WriteTrouble | undefined {
  return troubles.get(db);
}

function noteOutcome(db: DatabaseSync, error: unknown): void {
  if (error === null) troubles.delete(db);
  else if (isStorageFullError(error) || isReadOnlyError(error)) troubles.set(db, { error, atMs: Date.now() });
}

/** Runs fn inside BEGIN IMMEDIATE ... COMMIT, rolling back on any throw. */
export function transaction<T>(db: DatabaseSync, fn: () => T): T {
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    noteOutcome(db, error);
    throw error;
  }
  try {
    const result = fn();
    db.exec('COMMIT');
    noteOutcome(db, null);
    return result;
  } catch (error) {
    // SQLITE_FULL (and a few other errors) may have rolled the transaction back already.
    if (db.isTransaction) db.exec('ROLLBACK');
    noteOutcome(db, error);
    throw error;
  }
}

// The write-behinds run this once per turn of the event loop: the statement is compiled once.
const busyTimeoutOf = new WeakMap<DatabaseSync, StatementSync>();

/**
 * Runs fn with SQLite's busy wait off: a lock another process holds fails at once with
 * SQLITE_BUSY instead of blocking the event loop for up to BUSY_TIMEOUT_MS (issue 14). For
 * what must not hold up the bridge and can be tried again later: the health check, the
 * write-behinds' own flushes, a key's last_used_at. The connection's wait is restored after.
 */
export function withoutBusyWait<T>(db: DatabaseSync, fn: () => T): T {
  let read = busyTimeoutOf.get(db);
  if (!read) busyTimeoutOf.set(db, (read = db.prepare('PRAGMA busy_timeout')));
  const before = (read.get() as { timeout: number }).timeout;
  db.exec('PRAGMA busy_timeout = 0');
  try {
    return fn();
  } finally {
    db.exec(`PRAGMA busy_timeout = ${Number(before)}`);
  }
}

/** The primary result code of a node:sqlite error (the low byte of the extended code), or undefined. */
function primaryCode(error: unknown): number | undefined {
  const errcode = (error as { errcode?: unknown })?.errcode;
  return typeof errcode === 'number' ? errcode & 0xff : undefined;
}

/** True for SQLITE_FULL: the disk (or the database's max_page_count) has no room for the
 *  write. The API answers 507 (docs/errors.md, storage-full). */
export function isStorageFullError(error: unknown): boolean {
  const code = primaryCode(error);
  if (code !== undefined) return code === 13;
  return /database or disk is full/i.test((error as Error)?.message ?? '');
}

/** True for SQLITE_READONLY: the file became read-only under the bridge (a file system
 *  remounted read-only after errors, a changed mode). The API answers 503. */
export function isReadOnlyError(error: unknown): boolean {
  const code = primaryCode(error);
  if (code !== undefined) return code === 8;
  return /readonly database/i.test((error as Error)?.message ?? '');
}

/** True for SQLite's "database is locked/busy" errors, which the API answers with 503. */
export function isBusyError(error: unknown): boolean {
  const e = error as { errcode?: number; code?: string; message?: string };
  // errcode is the extended result code; its low byte 5 is SQLITE_BUSY, 6 SQLITE_LOCKED.
  if (typeof e?.errcode === 'number') return (e.errcode & 0xff) === 5 || (e.errcode & 0xff) === 6;
  return /database is (locked|busy)/i.test(e?.message ?? '');
}
