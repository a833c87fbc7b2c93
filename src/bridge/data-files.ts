import { chmodSync, closeSync, mkdirSync, openSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { AppError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';

// The files the bridge owns beside its database: the database, its
// SQLite companions and the first owner key. They hold the hub password and key hashes, so
// they are private to the bridge's user (0600), and nothing else may write over them: a
// `fieldbridge backup <the live -wal> --force` used to replace the live WAL and lose data.

export const OWNER_KEY_FILE = 'owner.key';
/** Files of the bridge's user only: read and write for the owner, nothing for group and others. */
export const PRIVATE_FILE_MODE = 0o600;

export interface OwnedFile {
  path: string;
  kind: 'database' | 'wal' | 'shm' | 'journal' | 'owner_key';
  /** What it is, for messages: "the live database's write-ahead log". */
  what: string;
}

/** The database, its -wal, -shm and -journal (sqlite.org/tempfiles.html), and owner.key
 *  (written beside the path as given, keys/service.ts). SQLite names its companions after the
 *  database's real path, so a symbolic link's target counts too. */
export function bridgeOwnedFiles(dbPath: string): OwnedFile[] {
  const given = resolve(dbPath);
  const files: OwnedFile[] = [];
  for (const db of new Set([given, canonical(given)])) {
    files.push(
      { path: db, kind: 'database', what: 'the live database' },
      { path: `${db}-wal`, kind: 'wal', what: "the live database's write-ahead log" },
      { path: `${db}-shm`, kind: 'shm', what: "the live database's shared-memory index" },
      { path: `${db}-journal`, kind: 'journal', what: "the live database's rollback journal" },
    );
  }
  files.push({ path: join(dirname(given), OWNER_KEY_FILE), kind: 'owner_key', what: 'the first owner key' });
  return files;
}

/** The owned file that `target` names, through symbolic links of the file or its folders
 *  and hard links, or null when it names none. */
export function ownedFileAt(dbPath: string, target: string): OwnedFile | null {
  const wanted = canonical(target);
  const wantedStat = statOrNull(target);
  for (const file of bridgeOwnedFiles(dbPath)) {
    if (canonical(file.path) === wanted) return file;
    const ownedStat = wantedStat && statOrNull(file.path);
    if (ownedStat && wantedStat && ownedStat.dev === wantedStat.dev && ownedStat.ino === wantedStat.ino) return file;
  }
  return null;
}

/** Throws ERR_BACKUP_TARGET_IS_SOURCE / ERR_BACKUP_TARGET_OWNED when a backup would write over
 *  a file of the running bridge (docs/backup.md). Checked before anything is written. */
export function refuseOwnedBackupTarget(dbPath: string, target: string): void {
  const owned = ownedFileAt(dbPath, target);
  if (!owned) return;
  const code = owned.kind === 'database' ? 'ERR_BACKUP_TARGET_IS_SOURCE' : 'ERR_BACKUP_TARGET_OWNED';
  throw new AppError(code, 400, `the backup target ${resolve(target)} is ${owned.what} (${owned.path}), which the bridge owns; name a file outside ${dirname(owned.path)} or with another name (--force does not override this)`);
}

/**
 * Before the database is opened: creates its folder (0700) and the file itself (0600) when
 * missing, so SQLite, which gives the -wal and -shm files the database file's mode, creates
 * those 0600 too. An existing database or companion readable by group or others (older
 * bridges created them 0644) is narrowed to the owner's bits, once, with a log line.
 */
export function prepareDatabaseFiles(dbPath: string, log?: Logger): void {
  if (dbPath === ':memory:' || dbPath === '') return;
  const db = resolve(dbPath);
  mkdirSync(dirname(db), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(db, 'wx', PRIVATE_FILE_MODE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  for (const file of bridgeOwnedFiles(db)) {
    const stat = statOrNull(file.path);
    if (!stat || !stat.isFile() || (stat.mode & 0o077) === 0) continue;
    const from = stat.mode & 0o777;
    const to = from & 0o700;
    try {
      chmodSync(file.path, to);
      log?.info('file_mode_narrowed', { path: file.path, from: octal(from), to: octal(to), why: 'bridge files hold the hub password and key hashes: owner only' });
    } catch (error) {
      log?.warn('file_mode_not_narrowed', { path: file.path, mode: octal(from), error: (error as Error).message, action: `run chmod ${octal(to)} on it as its owner` });
    }
  }
}

function octal(mode: number): string {
  return '0' + mode.toString(8).padStart(3, '0');
}

/** The absolute path with every symbolic link resolved, also when the file itself does not
 *  exist yet (its deepest existing folder is resolved). */
function canonical(path: string): string {
  const abs = resolve(path);
  try {
    return realpathSync(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(canonical(parent), basename(abs));
  }
}

function statOrNull(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
