import { closeSync, openSync, statSync, unlinkSync } from 'node:fs';

// Another process asks the running bridge for its write lock (issue 22 review; docs/decisions.md
// "Issue 22: a write path made for flash", "Another process that wants to write"). Under a
// steady flow, groups of ingests follow each other and hold SQLite's write lock nearly all the
// time; SQLite's busy wait in another process (`fieldbridge keys create`) then rarely finds it
// free. Such a process first creates `<database>-write-wanted`; while the file is there, and
// recent, the bridge opens no group: each ingest commits alone and the lock is free between them.

/** The file that says a write is wanted, beside the database. */
export const writeWantedPath = (dbPath: string): string => `${dbPath}-write-wanted`;

/** A file older than this is left over from a process that died: ignored. */
export const WRITE_WANTED_MAX_AGE_MS = 60_000;

/** How long one look at the file is trusted (a stat per ingest would cost more than it says). */
const LOOK_EVERY_MS = 50;

/** Runs `work` (which opens the database and writes) with the bridge asked to leave the lock free;
 *  the file is removed afterwards, whatever happened. */
export async function whileWriteWanted<T>(dbPath: string, work: () => T | Promise<T>): Promise<T> {
  const path = writeWantedPath(dbPath);
  let made = false;
  try {
    // wx: never follow or truncate something already there; 0600 like the database.
    closeSync(openSync(path, 'wx', 0o600));
    made = true;
  } catch {
    // Already there (another such process) or the folder is not ours to write: work anyway, with
    // SQLite's own busy wait as before.
  }
  try {
    return await work();
  } finally {
    if (made) {
      try {
        unlinkSync(path);
      } catch {
        // Gone already.
      }
    }
  }
}

/** For the bridge: a function that says whether another process wants the write lock now. */
export function writeWantedWatcher(dbPath: string, now: () => number = () => performance.now()): () => boolean {
  const path = writeWantedPath(dbPath);
  let lookedAt = -Infinity;
  let wanted = false;
  return () => {
    const t = now();
    if (t - lookedAt < LOOK_EVERY_MS) return wanted;
    lookedAt = t;
    const st = statSync(path, { throwIfNoEntry: false });
    wanted = st !== undefined && Date.now() - st.mtimeMs < WRITE_WANTED_MAX_AGE_MS;
    return wanted;
  };
}
