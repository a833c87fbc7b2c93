import { chmodSync, closeSync, mkdirSync, openSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Logger } from '../lib/log.ts';

// A SQLite database only its own user may read: the bridge's (the hub password, key hashes)
// and the hub's (every enrolled bridge's secret, which verifies its signatures). The folder is
// created 0700, the file 0600 before SQLite opens it, so the -wal and -shm SQLite creates get
// the file's mode too; a file of an older release readable by others is narrowed once.

/** Files of the service's user only: read and write for the owner, nothing for group and others. */
export const PRIVATE_FILE_MODE = 0o600;
/** A folder the service creates for its database: the owner's only. */
export const PRIVATE_DIR_MODE = 0o700;

export interface DatabaseFile {
  path: string;
  kind: 'database' | 'wal' | 'shm' | 'journal';
  /** What it is, for messages: "the live database's write-ahead log". */
  what: string;
}

/** The database, its -wal, -shm and -journal (sqlite.org/tempfiles.html). SQLite names its
 *  companions after the database's real path, so a symbolic link's target counts too. */
export function databaseFiles(dbPath: string): DatabaseFile[] {
  const given = resolve(dbPath);
  const files: DatabaseFile[] = [];
  for (const db of new Set([given, canonical(given)])) {
    files.push(
      { path: db, kind: 'database', what: 'the live database' },
      { path: `${db}-wal`, kind: 'wal', what: "the live database's write-ahead log" },
      { path: `${db}-shm`, kind: 'shm', what: "the live database's shared-memory index" },
      { path: `${db}-journal`, kind: 'journal', what: "the live database's rollback journal" },
    );
  }
  return files;
}

/**
 * Before the database is opened: creates its folder (0700) and the file itself (0600) when
 * missing; narrows the database, its companions and `others` (files kept beside it) to the
 * owner's bits where group or others may read them, with a log line saying `why`.
 */
export function preparePrivateDatabase(dbPath: string, options: { log?: Logger; others?: readonly string[]; why: string }): void {
  if (dbPath === '' || dbPath.startsWith(':memory:')) return;
  const db = resolve(dbPath);
  mkdirSync(dirname(db), { recursive: true, mode: PRIVATE_DIR_MODE });
  try {
    closeSync(openSync(db, 'wx', PRIVATE_FILE_MODE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  for (const path of [...databaseFiles(db).map((f) => f.path), ...(options.others ?? [])]) narrowToOwner(path, options.why, options.log);
}

/** A file readable or writable by group or others loses those bits (logged); missing: nothing. */
export function narrowToOwner(path: string, why: string, log?: Logger): void {
  const stat = statOrNull(path);
  if (!stat || !stat.isFile() || (stat.mode & 0o077) === 0) return;
  const from = stat.mode & 0o777;
  const to = from & 0o700;
  try {
    chmodSync(path, to);
    log?.info('file_mode_narrowed', { path, from: octal(from), to: octal(to), why });
  } catch (error) {
    log?.warn('file_mode_not_narrowed', { path, mode: octal(from), error: (error as Error).message, action: `run chmod ${octal(to)} on it as its owner` });
  }
}

function octal(mode: number): string {
  return '0' + mode.toString(8).padStart(3, '0');
}

/** The absolute path with every symbolic link resolved, also when the file itself does not
 *  exist yet (its deepest existing folder is resolved). */
export function canonical(path: string): string {
  const abs = resolve(path);
  try {
    return realpathSync(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(canonical(parent), basename(abs));
  }
}

export function statOrNull(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
