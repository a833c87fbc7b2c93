import { closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { backup, DatabaseSync } from 'node:sqlite';
import { BUSY_TIMEOUT_MS } from '../../db/sqlite.ts';
import { AppError, StartupError } from '../../lib/errors.ts';
import { PRIVATE_FILE_MODE, refuseOwnedBackupTarget } from '../data-files.ts';

// `fieldbridge backup <file>` (docs/api.md 9: "use the database's online backup command
// while running; a plain copy of a live file may be inconsistent"). SQLite's online backup
// API through node:sqlite, while the bridge keeps writing.
//
// Why all pages in one step by default: a backup step that finds the source changed by
// another connection since the previous step starts over (sqlite.org/c3ref/backup_finish.html),
// so a copy taken in small steps next to a bridge writing every millisecond may never finish.
// One step reads one snapshot inside a single read transaction; in WAL mode the bridge's
// writers are not blocked meanwhile, only its checkpoints wait until the step ends.
//
// The copy is written beside the target as "<file>.partial-<pid>", verified (PRAGMA
// integrity_check must answer "ok"; its schema_version must equal the source's), and only
// then moved into place, so a failed backup never leaves a file under the target's name.

export const ALL_PAGES = 2 ** 31 - 1;

export interface BackupOptions {
  /** The live bridge database (SERVICE_DB_PATH). */
  source: string;
  target: string;
  /** Replace an existing target. */
  force?: boolean;
  /** Pages copied per step; default all at once (see above). Small steps only on a quiet bridge. */
  pagesPerStep?: number;
  /** Receives human-readable progress lines. */
  progress?: (line: string) => void;
}

export interface BackupResult {
  target: string;
  pages: number;
  bytes: number;
  schemaVersion: number;
}

export async function backupDatabase(options: BackupOptions): Promise<BackupResult> {
  const say = options.progress ?? (() => {});
  const source = resolve(options.source);
  const target = resolve(options.target);
  refuseOwnedBackupTarget(source, target);
  if (source === target) throw new AppError('ERR_BACKUP_TARGET_IS_SOURCE', 400, `the backup target ${target} is the live database itself; name another file`);
  if (!existsSync(source) || !statSync(source).isFile()) {
    throw new AppError('ERR_BACKUP_SOURCE_MISSING', 404, `no bridge database at ${source}; set SERVICE_DB_PATH to the file the bridge uses`);
  }
  const leftovers = [target, `${target}-wal`, `${target}-shm`].filter((f) => existsSync(f));
  if (leftovers.length > 0 && !options.force) {
    throw new AppError('ERR_BACKUP_TARGET_EXISTS', 409, `${leftovers[0]} already exists; choose another name or pass --force to replace it`);
  }
  if (existsSync(target) && statSync(target).isDirectory()) {
    throw new AppError('ERR_BACKUP_TARGET_UNWRITABLE', 400, `${target} is a directory; name a file inside it`);
  }

  const partial = `${target}.partial-${process.pid}`;
  try {
    closeSync(openSync(partial, 'wx', PRIVATE_FILE_MODE));
  } catch (error) {
    throw unwritable(target, error);
  }

  try {
    const { pages, schemaVersion } = await copy(source, partial, options.pagesPerStep ?? ALL_PAGES, say);
    say(`verifying the copy: PRAGMA integrity_check, schema_version ${schemaVersion}`);
    verifyBackup(partial, schemaVersion);
    if (options.force) {
      for (const f of [`${target}-wal`, `${target}-shm`]) rmSync(f, { force: true });
      renameSync(partial, target);
    } else {
      // link() refuses to replace a file created meanwhile, where rename() would not.
      try {
        linkSync(partial, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
          throw new AppError('ERR_BACKUP_TARGET_EXISTS', 409, `${target} appeared while the backup ran; nothing was replaced`);
        }
        throw unwritable(target, error);
      }
      unlinkSync(partial);
    }
    syncDirectory(dirname(target));
    const bytes = statSync(target).size;
    say(`backup written to ${target}: ${pages} pages, ${bytes} bytes, integrity_check ok, schema_version ${schemaVersion}`);
    return { target, pages, bytes, schemaVersion };
  } finally {
    for (const f of [partial, `${partial}-wal`, `${partial}-shm`, `${partial}-journal`]) rmSync(f, { force: true });
  }
}

async function copy(source: string, partial: string, pagesPerStep: number, say: (line: string) => void) {
  let db: DatabaseSync;
  try {
    // Read-write although we only read: a read-only connection to a WAL database creates the
    // -wal and -shm files when the bridge is stopped and cannot remove them on close, leaving
    // files owned by whoever ran the backup that the bridge's own user may then be unable to
    // open. A read-write connection removes them when it is the last one to close.
    db = new DatabaseSync(source, { timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    throw new AppError('ERR_BACKUP_SOURCE_INVALID', 400, `cannot open ${source}: ${(error as Error).message}; run the backup as the user the bridge runs as`);
  }
  try {
    const schemaVersion = readSchemaVersion(db, source);
    const pageSize = (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size;
    const pageCount = (db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
    say(`backing up ${source}: ${pageCount} pages of ${pageSize} bytes (${(pageCount * pageSize / 1048576).toFixed(1)} MiB), schema_version ${schemaVersion}`);
    let lastTenth = -1;
    const pages = await backup(db, partial, {
      rate: pagesPerStep,
      progress: ({ totalPages, remainingPages }) => {
        const tenth = Math.floor(((totalPages - remainingPages) / Math.max(1, totalPages)) * 10);
        if (tenth === lastTenth) return;
        lastTenth = tenth;
        say(`copied ${totalPages - remainingPages} of ${totalPages} pages (${tenth * 10}%)`);
      },
    }).catch((error: Error) => {
      throw new AppError('ERR_BACKUP_FAILED', 500, `the online backup of ${source} failed: ${error.message}`);
    });
    say(`copied ${pages} pages`);
    return { pages, pageSize, schemaVersion };
  } finally {
    db.close();
  }
}

function readSchemaVersion(db: DatabaseSync, path: string): number {
  try {
    const row = db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
    if (row && typeof row.version === 'number') return row.version;
  } catch (error) {
    throw new AppError('ERR_BACKUP_SOURCE_INVALID', 400, `${path} is not a fieldbridge bridge database: ${(error as Error).message}`);
  }
  throw new AppError('ERR_BACKUP_SOURCE_INVALID', 400, `${path} is not a fieldbridge bridge database: schema_version is empty`);
}

/** Throws unless the file passes PRAGMA integrity_check and records the expected schema version. */
export function verifyBackup(path: string, expectedSchemaVersion: number): void {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
    const rows = db.prepare('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>;
    const problems = rows.map((r) => r.integrity_check).filter((m) => m !== 'ok');
    if (problems.length > 0) {
      throw new AppError('ERR_BACKUP_VERIFY_FAILED', 500, `the copy failed PRAGMA integrity_check: ${problems.slice(0, 5).join('; ')}`);
    }
    const version = readSchemaVersion(db, path);
    if (version !== expectedSchemaVersion) {
      throw new AppError('ERR_BACKUP_VERIFY_FAILED', 500, `the copy is at schema_version ${version} but the source was at ${expectedSchemaVersion}; was the bridge upgraded during the backup? Take it again`);
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError('ERR_BACKUP_VERIFY_FAILED', 500, `the copy cannot be read back: ${(error as Error).message}`);
  } finally {
    db?.close();
  }
}

function unwritable(target: string, error: unknown): AppError {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT' ? `the folder ${dirname(target)} does not exist`
    : code === 'ENOTDIR' ? `${dirname(target)} is not a folder`
    : code === 'EACCES' || code === 'EPERM' ? `no permission to write in ${dirname(target)}`
    : code === 'EROFS' ? `${dirname(target)} is on a read-only file system`
    : code === 'ENOSPC' ? 'the disk is full'
    : (error as Error).message;
  return new AppError('ERR_BACKUP_TARGET_UNWRITABLE', 400, `cannot write ${target}: ${why}`);
}

function syncDirectory(dir: string): void {
  // Makes the rename itself durable across a power cut; not every file system allows it.
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // best effort
  }
}

/** The CLI: `fieldbridge backup <file> [--force]`. Progress on stdout; failures exit 1, usage errors 2. */
export async function backupCommand(args: { dbPath: string; target: string | undefined; force: boolean; write?: (line: string) => void }): Promise<number> {
  if (!args.target) throw new StartupError('backup: name the file to write: fieldbridge backup <file> [--force]', 2);
  const write = args.write ?? ((line: string) => process.stdout.write(line + '\n'));
  try {
    await backupDatabase({ source: args.dbPath, target: args.target, force: args.force, progress: write });
  } catch (error) {
    if (error instanceof AppError) throw new StartupError(`backup failed (${error.code}): ${error.message}`);
    throw error;
  }
  return 0;
}
