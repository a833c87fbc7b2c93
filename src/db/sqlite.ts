import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { StartupError } from '../lib/errors.ts';
import { primaryCode, SQLITE_BUSY } from './errors.ts';
import { commitGroup } from './transaction.ts';

// Transactions, riders, afterCommit and group commit live in transaction.ts, what an error
// means in errors.ts; every store imports them from here.
export { isBusyError, isIoError, isLockHeldError, isReadOnlyError, isStorageFullError } from './errors.ts';
export {
  afterCommit, type CommitRider, commitCount, commitGroup, commitMark, committed, enableGroupCommit, inTransaction, lastWriteTrouble, leaveRide, onGroupFailed,
  type CommittedOptions, type ExpectedWrite, expectWrite, type GroupPolicy, type Grouping, noticeLostGroup, pendingCommit, rideNextCommit, transaction, type WriteTrouble,
} from './transaction.ts';

// docs/api.md section 8: the bridge waits up to 5000 ms for a busy database before giving up.
export const BUSY_TIMEOUT_MS = 5000;

/** How hard a commit waits for the disk: NORMAL (the default) or FULL (an fsync per commit). */
export type SyncLevel = 'normal' | 'full';

export interface OpenOptions {
  /** 'full' syncs the WAL at every commit; default 'normal' (docs/decisions.md, "Database"). */
  synchronous?: SyncLevel;
  /** Page size of a database created by this open; an existing file keeps its own. Default:
   *  SQLite's (4096). */
  pageSize?: number;
  /** WAL pages after which a commit checkpoints; default SQLite's (1000). */
  walAutocheckpoint?: number;
  /** Where sorts and temporary tables too large for the page cache go: 'memory' keeps them off
   *  the disk; default SQLite's (a temporary file). */
  tempStore?: 'memory' | 'file';
}

/** Sets how hard a commit waits for the disk, on an open connection (outside a transaction). */
export function setSynchronous(db: DatabaseSync, level: SyncLevel): void {
  db.exec(`PRAGMA synchronous = ${level === 'full' ? 'FULL' : 'NORMAL'}`);
}

/** Opens (creating parent folders) a SQLite file with the pragmas every store expects. */
export function openSqlite(path: string, options: OpenOptions = {}): DatabaseSync {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    // Takes effect only while the file is still empty (before journal_mode writes its header):
    // a new database gets it, an existing one keeps its own.
    if (options.pageSize !== undefined) db.exec(`PRAGMA page_size = ${Number(options.pageSize)}`);
    // WAL lets the API read while the dispatcher writes; NORMAL is durable across an
    // application crash (a power cut may lose the last transactions, never corrupt the file).
    // FULL also syncs the WAL at every commit: a power cut then loses nothing committed.
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    if (options.tempStore !== undefined) db.exec(`PRAGMA temp_store = ${options.tempStore === 'memory' ? 'MEMORY' : 'FILE'}`);
    if (options.walAutocheckpoint !== undefined) db.exec(`PRAGMA wal_autocheckpoint = ${Number(options.walAutocheckpoint)}`);
    db.exec('PRAGMA foreign_keys = ON');
    // SQLite opens a file (or a -wal) it may not write read-only, without a word, and every
    // write would fail later. Writing the header's user_version, unchanged, and rolling back
    // says so now (SQLITE_READONLY) and puts nothing on disk.
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
 * An error met while opening a database file, as one line for the operator: the
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

// The write-behinds run this once per turn of the event loop: the statement is compiled once.
const busyTimeoutOf = new WeakMap<DatabaseSync, StatementSync>();

/**
 * Runs fn with SQLite's busy wait off: a lock another process holds fails at once with
 * SQLITE_BUSY instead of blocking the event loop for up to BUSY_TIMEOUT_MS. For
 * what must not hold up the bridge and can be tried again later: the health check, the
 * write-behinds' own flushes, a key's last_used_at. The connection's wait is restored after.
 * `joinGroup`: fn is an ingest, a transaction() that asked to group, which joins an open group.
 */
export function withoutBusyWait<T>(db: DatabaseSync, fn: () => T, options: { joinGroup?: boolean } = {}): T {
  // Background writes made here (credentials, driver state, a sequence offset) are often single
  // statements outside transaction(): inside an open group they would not be committed when
  // they return, and would go with a failed group. The group commits first,
  // but for an ingest, which is what groups are for.
  if (!options.joinGroup) commitGroup(db);
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
