// What a node:sqlite error means, told by its result code (sqlite.org/rescode.html). Re-exported
// by sqlite.ts; a module of its own so that transaction.ts can use it without an import cycle.

/** SQLite's "database is locked": another connection holds the write lock. */
export const SQLITE_BUSY = 5;

/** The primary result code of a node:sqlite error (the low byte of the extended code), or undefined. */
export function primaryCode(error: unknown): number | undefined {
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

/** True for SQLITE_IOERR and its extended codes: the operating system failed a read, write or
 *  sync of the database's files (a card failing, an ext4 file system aborted after errors and
 *  remounted read-only under an open file). Nothing of the failing write is stored. The API
 *  answers 503 (docs/errors.md, storage-io). */
export function isIoError(error: unknown): boolean {
  const code = primaryCode(error);
  if (code !== undefined) return code === 10;
  return /disk I\/O error/i.test((error as Error)?.message ?? '');
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
