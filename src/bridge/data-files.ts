import { dirname, join, resolve } from 'node:path';
import { canonical, databaseFiles, preparePrivateDatabase, statOrNull } from '../db/private-files.ts';
import { AppError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';

// The files the bridge owns beside its database: the database, its
// SQLite companions and the first owner key. They hold the hub password and key hashes, so
// they are private to the bridge's user (0600), and nothing else may write over them: a
// `fieldbridge backup <the live -wal> --force` used to replace the live WAL and lose data.

export const OWNER_KEY_FILE = 'owner.key';
export { PRIVATE_FILE_MODE } from '../db/private-files.ts';

export interface OwnedFile {
  path: string;
  kind: 'database' | 'wal' | 'shm' | 'journal' | 'owner_key';
  /** What it is, for messages: "the live database's write-ahead log". */
  what: string;
}

/** The database with its SQLite companions (db/private-files.ts), and owner.key (written
 *  beside the path as given, keys/service.ts). */
export function bridgeOwnedFiles(dbPath: string): OwnedFile[] {
  return [...databaseFiles(dbPath), { path: join(dirname(resolve(dbPath)), OWNER_KEY_FILE), kind: 'owner_key', what: 'the first owner key' }];
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

/** Before the database is opened: its folder 0700, the database and its companions 0600, and
 *  owner.key narrowed too (db/private-files.ts). */
export function prepareDatabaseFiles(dbPath: string, log?: Logger): void {
  if (dbPath === ':memory:' || dbPath === '') return;
  preparePrivateDatabase(dbPath, { log, others: [join(dirname(resolve(dbPath)), OWNER_KEY_FILE)], why: 'bridge files hold the hub password and key hashes: owner only' });
}
