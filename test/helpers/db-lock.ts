import { spawn } from 'node:child_process';

/** A database lock held by another process: what a `sqlite3` shell or a second `fieldbridge`
 *  command does to the bridge (issue 14, item 7). */
export interface HeldLock {
  /** Ends the holder's transaction (nothing it did is kept) and waits for it to exit. */
  release(): Promise<void>;
  /** Settles when the holder has exited (after release(), or after holdMs). */
  released: Promise<void>;
}

/** Another process opens `dbPath`, takes its write lock (BEGIN EXCLUSIVE: in WAL mode the lock
 *  is taken at once, readers still read) and holds it until release(), or for `holdMs`. It waits
 *  up to 5 s for the lock, as a second `fieldbridge` command does: the bridge holds it while a
 *  group of ingests waits for its commit (up to INGEST_GROUP_MS, issue 22). */
export async function holdLock(dbPath: string, holdMs?: number): Promise<HeldLock> {
  const code = `
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(process.argv[1], { timeout: 5000 });
    db.exec('BEGIN EXCLUSIVE');
    process.stdout.write('locked\\n');
    const end = () => { db.exec('ROLLBACK'); db.close(); process.exit(0); };
    process.stdin.once('data', end);
    if (process.argv[2]) setTimeout(end, Number(process.argv[2]));`;
  const child = spawn(process.execPath, ['-e', code, dbPath, holdMs === undefined ? '' : String(holdMs)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const released = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise((resolve, reject) => {
    child.stdout!.once('data', resolve);
    child.once('exit', (c) => reject(new Error(`the lock holder exited (${c}) before locking`)));
  });
  return {
    released,
    release: async () => {
      if (child.exitCode === null) child.stdin!.end('go\n');
      await released;
    },
  };
}
