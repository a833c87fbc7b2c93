import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { BUSY_TIMEOUT_MS, isBusyError, isIoError, isReadOnlyError, isStorageFullError, lastWriteTrouble, withoutBusyWait } from './sqlite.ts';

// What GET /api/health says of the database (docs/api.md 4.10). The check never waits
// for a lock: SQLite's busy wait blocks the whole event loop (node:sqlite is synchronous), so a
// health check that waited on another process's lock froze the bridge for up to 5 s and then
// answered late. It runs at most once a second; in between the last answer is repeated.

export type DbState = 'ok' | 'busy' | 'full' | 'read-only' | 'io-error' | 'closed' | 'error';

export interface DbStatus {
  db: DbState;
  /** Why, in words, when db is not "ok"; null when it is. */
  detail: string | null;
}

/** A check answers for this long; a health poll more often than this reads the last answer. */
export const DB_CHECK_INTERVAL_MS = 1000;

/** With less room than this left (on the file system, or under the database's own page limit)
 *  the storage counts as full: the largest body the API takes is 1 MiB (8 MiB for an import),
 *  and SQLite needs room in its write-ahead log before a write can commit. */
export const MIN_FREE_BYTES = 1024 * 1024;

/** A write that failed for want of room keeps the state "full" this long, unless a later commit
 *  succeeds first. The space check below still sees a full disk after that; the window covers a
 *  large write failing while some room is left. A write that failed for want of write access or
 *  on a failing file system ("read-only", "io-error") keeps its state until a commit succeeds:
 *  the check's own BEGIN IMMEDIATE writes nothing, so it passes on an ext4 file system aborted
 *  under the open file, and nothing else would show it. */
export const WRITE_TROUBLE_MS = 10_000;

export interface DbHealthOptions {
  /** Monotonic milliseconds (tests replace it); the bridge's clock may be a fake one. */
  now?: () => number;
  /** Bytes an unprivileged user may still write on the file system holding `folder`, or null
   *  when that cannot be read (tests replace it). */
  freeBytes?: (folder: string) => number | null;
}

export class DbHealth {
  readonly #db: DatabaseSync;
  readonly #now: () => number;
  readonly #freeBytes: (folder: string) => number | null;
  #last: { at: number; status: DbStatus } | undefined;

  /** Nothing is read from `db` until the first check (the OpenAPI generator builds the routes
   *  without a database). */
  constructor(db: DatabaseSync, options: DbHealthOptions = {}) {
    this.#db = db;
    this.#now = options.now ?? (() => performance.now());
    this.#freeBytes = options.freeBytes ?? fileSystemFreeBytes;
  }

  /** The database's state now, or as found less than DB_CHECK_INTERVAL_MS ago. */
  status(): DbStatus {
    const now = this.#now();
    if (this.#last && now - this.#last.at < DB_CHECK_INTERVAL_MS) return this.#last.status;
    const status = this.#check();
    this.#last = { at: now, status };
    return status;
  }

  #check(): DbStatus {
    const db = this.#db;
    if (!db.isOpen) return { db: 'closed', detail: 'the database is closed (the bridge is stopping)' };
    try {
      withoutBusyWait(db, () => {
        db.prepare('SELECT version FROM schema_version').get();
        // Taking the write lock and giving it back writes nothing; it fails at once when
        // another process holds it. Inside a transaction of our own (never, between two
        // turns of the event loop) the lock is ours already.
        if (!db.isTransaction) {
          db.exec('BEGIN IMMEDIATE');
          db.exec('ROLLBACK');
        }
      });
    } catch (error) {
      return fromError(error) ?? { db: 'error', detail: (error as Error)?.message ?? String(error) };
    }
    const room = this.#room();
    if (room !== null && room < MIN_FREE_BYTES) {
      return { db: 'full', detail: `${room} bytes left for the database, less than ${MIN_FREE_BYTES}: writes fail or soon will; free space on its file system` };
    }
    const trouble = lastWriteTrouble(db);
    const state = trouble && fromError(trouble.error);
    if (trouble && state) {
      const ageMs = performance.now() - trouble.atMs;
      if (state.db !== 'full' || ageMs < WRITE_TROUBLE_MS) return { db: state.db, detail: `a write failed ${Math.round(ageMs / 1000)} s ago: ${state.detail}` };
    }
    return { db: 'ok', detail: null };
  }

  /** Bytes the database may still grow by: the least of the file system's free space and
   *  what its page limit leaves (PRAGMA max_page_count: about 17 TB unless set; free pages
   *  inside the file count as room). null when neither can be read. */
  #room(): number | null {
    const db = this.#db;
    const pragma = (name: string) => Number(Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0]);
    let inFile: number | null = null;
    try {
      inFile = (pragma('max_page_count') - pragma('page_count') + pragma('freelist_count')) * pragma('page_size');
    } catch {
      inFile = null;
    }
    const location = db.location();
    const onDisk = location ? this.#freeBytes(dirname(location)) : null;
    if (inFile === null || !Number.isFinite(inFile)) return onDisk;
    return onDisk === null ? inFile : Math.min(inFile, onDisk);
  }
}

function fromError(error: unknown): DbStatus | null {
  if (isBusyError(error)) {
    return { db: 'busy', detail: `another process holds the database's write lock; writes wait for it up to ${BUSY_TIMEOUT_MS} ms, then fail with 503 db-busy` };
  }
  if (isStorageFullError(error)) return { db: 'full', detail: 'the disk holding the database is full (SQLITE_FULL); free space on it' };
  if (isReadOnlyError(error)) return { db: 'read-only', detail: 'the database cannot be written (SQLITE_READONLY): its file system is read-only or its mode changed' };
  if (isIoError(error)) {
    return { db: 'io-error', detail: `the file system holding the database failed a read or write (SQLITE_IOERR: ${(error as Error).message}); an SD card after errors is remounted read-only: check dmesg, repair it (fsck), restart the bridge` };
  }
  return null;
}

/** Bytes free for the bridge on the file system holding `folder`; null when it cannot be read. */
export function fileSystemFreeBytes(folder: string): number | null {
  try {
    const s = statfsSync(folder);
    // bavail: blocks free for unprivileged users (the bridge's); bfree includes root's reserve.
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}
