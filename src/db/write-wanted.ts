import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';

// Another process asks the running bridge for its write lock (docs/decisions.md
// "Issue 22: a write path made for flash", "Another process that wants to write"). Under a
// steady flow, groups of ingests follow each other and hold SQLite's write lock nearly all the
// time; SQLite's busy wait in another process (`fieldbridge keys create`) then rarely finds it
// free. Such a process first creates `<database>-write-wanted` holding its pid; while the file
// is there and that process runs, the bridge opens no group: each ingest commits alone and the
// lock is free between them. A process that died leaves the file behind: its pid says so. A
// file without a pid (an operator's `touch`, docs/backup.md) counts for a minute.

/** The file that says a write is wanted, beside the database. */
export const writeWantedPath = (dbPath: string): string => `${dbPath}-write-wanted`;

/** How long a file without a pid counts after the bridge first sees it. */
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
    const fd = openSync(path, 'wx', 0o600);
    made = true;
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
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

/** For the bridge: a function that says whether another process wants the write lock now.
 *  `now`: a monotonic clock in milliseconds. */
export function writeWantedWatcher(dbPath: string, now: () => number = () => performance.now()): () => boolean {
  const path = writeWantedPath(dbPath);
  let lookedAt = -Infinity;
  let wanted = false;
  // A file without a pid (an operator's `touch`) counts for WRITE_WANTED_MAX_AGE_MS from when
  // this watcher first saw it as it is (a new touch starts again): measured here, not against
  // the file's time, which is the kernel's clock and not necessarily ours.
  let bare: { mtimeMs: number; since: number } | undefined;
  return () => {
    const t = now();
    if (t - lookedAt < LOOK_EVERY_MS) return wanted;
    lookedAt = t;
    const st = statSync(path, { throwIfNoEntry: false });
    const pid = st === undefined ? undefined : pidIn(path);
    if (st === undefined || pid !== null) {
      bare = undefined;
      wanted = pid !== undefined && pid !== null && running(pid);
      return wanted;
    }
    if (bare?.mtimeMs !== st.mtimeMs) bare = { mtimeMs: st.mtimeMs, since: t };
    wanted = t - bare.since < WRITE_WANTED_MAX_AGE_MS;
    return wanted;
  };
}

/** The pid the file holds; null when it holds none; undefined when it is gone. */
function pidIn(path: string): number | null | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
    return pid > 0 ? pid : null;
  } catch {
    return undefined;
  }
}

/** Whether a process runs (EPERM: it does, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
