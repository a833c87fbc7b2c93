import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { StartupError } from '../lib/errors.ts';

// docs/api.md section 8: the bridge waits up to 5000 ms for a busy database before giving up.
export const BUSY_TIMEOUT_MS = 5000;

/** SQLite's "database is locked": another connection holds the write lock. */
const SQLITE_BUSY = 5;

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

/**
 * Writes that wait for a commit that happens anyway (group commit, issue 22): the delivery
 * write-behind and the audit log register here, and the next transaction() on the connection
 * carries their writes, after its own work and before its COMMIT. Each rider runs inside a
 * savepoint, so a rider that fails is rolled back alone and never costs the host its commit.
 */
export interface CommitRider {
  /** Runs the rider's writes inside the host transaction. */
  ride(): void;
  /** The host transaction committed them. */
  committed(): void;
  /** They were rolled back (the rider threw, or the host failed): keep them for later. */
  failed(error: unknown): void;
}

const riders = new WeakMap<DatabaseSync, Set<CommitRider>>();

/** The rider's writes go with the next transaction() on this connection (once). */
export function rideNextCommit(db: DatabaseSync, rider: CommitRider): void {
  let set = riders.get(db);
  if (!set) riders.set(db, (set = new Set()));
  set.add(rider);
}

/** The rider commits on its own after all (or has nothing left to write). */
export function leaveRide(db: DatabaseSync, rider: CommitRider): void {
  riders.get(db)?.delete(rider);
}

/** Work for after the current transaction commits (in-memory counters, issue 17 review): a
 *  /metrics counter bumped inside a transaction that then rolls back, and is replayed, would
 *  count twice. Outside a transaction it runs at once. Dropped when the transaction, or the
 *  savepoint it was queued in (a rider, a nested transaction()), rolls back. */
const afterCommits = new WeakMap<DatabaseSync, Array<() => void>>();
export function afterCommit(db: DatabaseSync, fn: () => void): void {
  const list = db.isTransaction ? afterCommits.get(db) : undefined;
  if (list) list.push(fn);
  else fn();
}
function dropAfterCommits(db: DatabaseSync, mark: number): void {
  const list = afterCommits.get(db);
  if (list) list.length = Math.min(list.length, mark);
}
function runAfterCommits(list: Array<() => void>): void {
  for (const fn of list) {
    try {
      fn();
    } catch {
      // A counter that throws must not undo a commit that happened.
    }
  }
}

/** Commits made by transaction() on each connection: scripts/bench-writes.ts counts them. */
const commits = new WeakMap<DatabaseSync, number>();
export function commitCount(db: DatabaseSync): number {
  return commits.get(db) ?? 0;
}

/** Runs fn inside BEGIN IMMEDIATE ... COMMIT, rolling back on any throw. The writes of the
 *  riders waiting for a commit (rideNextCommit) go with it. Inside another transaction it is
 *  a savepoint of that one: its work commits with the outer transaction, or not at all (a
 *  frame split into parts is stored whole or not at all, router/held-frames.ts). */
export function transaction<T>(db: DatabaseSync, fn: () => T): T {
  if (db.isTransaction) return savepoint(db, fn);
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    noteOutcome(db, error);
    throw error;
  }
  const aboard: CommitRider[] = [];
  const after: Array<() => void> = [];
  afterCommits.set(db, after);
  let result: T;
  try {
    result = fn();
    const waiting = riders.get(db);
    if (waiting && waiting.size > 0) {
      const list = [...waiting];
      waiting.clear();
      for (const rider of list) {
        db.exec('SAVEPOINT rider');
        const mark = after.length;
        try {
          rider.ride();
          db.exec('RELEASE rider');
          aboard.push(rider);
        } catch (error) {
          dropAfterCommits(db, mark);
          if (db.isTransaction) {
            db.exec('ROLLBACK TO rider');
            db.exec('RELEASE rider');
          }
          rider.failed(error);
          // The error took the whole transaction with it (SQLITE_FULL can): the host fails too.
          if (!db.isTransaction) throw error;
        }
      }
    }
    db.exec('COMMIT');
    commits.set(db, commitCount(db) + 1);
    noteOutcome(db, null);
  } catch (error) {
    // SQLITE_FULL (and a few other errors) may have rolled the transaction back already.
    if (db.isTransaction) db.exec('ROLLBACK');
    afterCommits.delete(db);
    noteOutcome(db, error);
    for (const rider of aboard) rider.failed(error);
    throw error;
  }
  afterCommits.delete(db);
  for (const rider of aboard) rider.committed();
  runAfterCommits(after);
  return result;
}

function savepoint<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('SAVEPOINT nested');
  const mark = afterCommits.get(db)?.length ?? 0;
  try {
    const result = fn();
    db.exec('RELEASE nested');
    return result;
  } catch (error) {
    dropAfterCommits(db, mark);
    if (db.isTransaction) {
      db.exec('ROLLBACK TO nested');
      db.exec('RELEASE nested');
    }
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

/** True for SQLITE_BUSY alone: another connection holds the lock, and waiting may help
 *  (db/busy.ts waits and tries again only for this; SQLITE_LOCKED is a conflict inside this
 *  process that waiting does not end). */
export function isLockHeldError(error: unknown): boolean {
  const code = primaryCode(error);
  if (code !== undefined) return code === SQLITE_BUSY;
  return /database is locked/i.test((error as Error)?.message ?? '');
}

/** True for SQLite's "database is locked/busy" errors, which the API answers with 503. */
export function isBusyError(error: unknown): boolean {
  const e = error as { errcode?: number; code?: string; message?: string };
  // errcode is the extended result code; its low byte 5 is SQLITE_BUSY, 6 SQLITE_LOCKED.
  if (typeof e?.errcode === 'number') return (e.errcode & 0xff) === 5 || (e.errcode & 0xff) === 6;
  return /database is (locked|busy)/i.test(e?.message ?? '');
}
