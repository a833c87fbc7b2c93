import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openBridgeDatabase } from '../../../src/bridge/app.ts';
import { backupDatabase, verifyBackup } from '../../../src/bridge/config/backup.ts';
import { bridgeMigrations } from '../../../src/bridge/migrations.ts';
import { AppError } from '../../../src/lib/errors.ts';

// `fieldbridge backup`: an online copy of a real database file while another process keeps
// writing to it, verified, plus every way it refuses.

const root = join(import.meta.dirname, '..', '..', '..');
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fb-'));
  dirs.push(dir);
  return dir;
}
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A bridge database with a `load` table of `rows` rows (~300 bytes each). */
function makeBridgeDb(path: string, rows: number): void {
  const db = openBridgeDatabase(path);
  db.exec('CREATE TABLE load (id INTEGER PRIMARY KEY, body TEXT NOT NULL, at INTEGER NOT NULL)');
  const insert = db.prepare('INSERT INTO load (body, at) VALUES (?, ?)');
  db.exec('BEGIN');
  for (let i = 0; i < rows; i++) insert.run('r'.repeat(300), i);
  db.exec('COMMIT');
  db.close();
}

// The writer commits 20 rows per transaction as fast as it can, in its own process and
// connection, like the running bridge would.
const WRITER = `
import { DatabaseSync } from 'node:sqlite';
const db = new DatabaseSync(process.env.FB_DB, { timeout: 5000 });
const insert = db.prepare('INSERT INTO load (body, at) VALUES (?, ?)');
let stop = false;
let commits = 0;
process.on('SIGTERM', () => { stop = true; });
const body = 'w'.repeat(300);
function batch() {
  if (stop) { db.close(); process.stdout.write('commits ' + commits + '\\n'); return; }
  db.exec('BEGIN IMMEDIATE');
  for (let i = 0; i < 20; i++) insert.run(body, Date.now());
  db.exec('COMMIT');
  if (++commits === 1) process.stdout.write('ready\\n');
  setImmediate(batch);
}
batch();
`;

function startWriter(dbPath: string) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER], { env: { ...process.env, FB_DB: dbPath }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', () => out.includes('ready') && resolve());
    child.once('exit', () => reject(new Error(`writer exited early: ${out}`)));
  });
  const stop = () =>
    new Promise<string>((resolve) => {
      child.once('exit', () => resolve(out));
      child.kill('SIGTERM');
    });
  return { ready, stop };
}

const rowCount = (path: string) => {
  // Not readOnly: a read-only connection leaves -wal/-shm files behind on a closed database.
  const db = new DatabaseSync(path, { timeout: 5000 });
  try {
    return db.prepare('SELECT count(*) AS n, max(id) AS m FROM load').get() as { n: number; m: number };
  } finally {
    db.close();
  }
};

async function refusal(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (error) {
    assert.instance(error, AppError);
    return error as AppError;
  }
  throw new Error('expected the backup to be refused');
}

test('a backup taken while another process writes continuously is consistent and opens as a bridge database', async () => {
  const dir = tempDir();
  const source = join(dir, 'bridge.db');
  const target = join(dir, 'copy.db');
  makeBridgeDb(source, 50_000); // ~17 MB
  const writer = startWriter(source);
  await writer.ready;
  const lines: string[] = [];
  let result;
  let before: number;
  let after: number;
  try {
    before = rowCount(source).n;
    result = await backupDatabase({ source, target, progress: (l) => lines.push(l) });
    after = rowCount(source).n;
  } finally {
    const out = await writer.stop();
    assert.match(out, /commits \d+/);
  }
  assert.ok(after > before, 'the writer committed while the backup ran');
  assert.is(result.schemaVersion, bridgeMigrations.length);
  assert.ok(result.pages > 4000);
  assert.match(lines.join('\n'), 'integrity_check ok');

  // A consistent snapshot: whole transactions of 20 rows, no gaps, at least the rows present at the start.
  const copy = openBridgeDatabase(target);
  try {
    assert.is((copy.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check, 'ok');
    const { n, m } = copy.prepare('SELECT count(*) AS n, max(id) AS m FROM load').get() as { n: number; m: number };
    assert.is(n, m);
    assert.ok(n >= before);
    assert.is((n - 50_000) % 20, 0);
    assert.is((copy.prepare('SELECT version FROM schema_version').get() as { version: number }).version, bridgeMigrations.length);
  } finally {
    copy.close();
  }
  assert.equal(readdirSync(dir).filter((f) => f.includes('partial')), []);
});

test('small steps on a quiet database report progress lines', async () => {
  const dir = tempDir();
  const source = join(dir, 'bridge.db');
  makeBridgeDb(source, 2_000);
  const lines: string[] = [];
  const result = await backupDatabase({ source, target: join(dir, 'copy.db'), pagesPerStep: 10, progress: (l) => lines.push(l) });
  const percents = lines.filter((l) => /^copied \d+ of \d+ pages \(\d+%\)$/.test(l));
  assert.ok(percents.length >= 5, lines.join('\n'));
  assert.match(lines[0], `backing up ${source}`);
  assert.is(rowCount(join(dir, 'copy.db')).n, 2_000);
  assert.is(result.bytes, readFileSync(join(dir, 'copy.db')).length);
});

test('an existing target is refused without --force and replaced with it', async () => {
  const dir = tempDir();
  const source = join(dir, 'bridge.db');
  const target = join(dir, 'copy.db');
  makeBridgeDb(source, 10);
  writeFileSync(target, 'keep me');
  const error = await refusal(backupDatabase({ source, target }));
  assert.is(error.code, 'ERR_BACKUP_TARGET_EXISTS');
  assert.match(error.message, '--force');
  assert.is(readFileSync(target, 'utf8'), 'keep me');

  // A stale -wal beside the target would be replayed into the new copy: --force removes it.
  writeFileSync(`${target}-wal`, 'stale');
  rmSync(target);
  assert.is((await refusal(backupDatabase({ source, target }))).code, 'ERR_BACKUP_TARGET_EXISTS');
  writeFileSync(target, 'old backup');
  await backupDatabase({ source, target, force: true });
  assert.not.ok(existsSync(`${target}-wal`));
  assert.is(rowCount(target).n, 10);
  assert.equal(readdirSync(dir).sort(), ['bridge.db', 'copy.db']);
});

test('a missing or foreign source, and a target that cannot be written, are clear errors', async () => {
  const dir = tempDir();
  const source = join(dir, 'bridge.db');
  const missing = await refusal(backupDatabase({ source, target: join(dir, 'copy.db') }));
  assert.is(missing.code, 'ERR_BACKUP_SOURCE_MISSING');
  assert.match(missing.message, 'SERVICE_DB_PATH');
  assert.not.ok(existsSync(source), 'the missing source was not created');

  writeFileSync(join(dir, 'notes.txt'), 'not a database at all, just text that is long enough to be a header');
  assert.is((await refusal(backupDatabase({ source: join(dir, 'notes.txt'), target: join(dir, 'a.db') }))).code, 'ERR_BACKUP_SOURCE_INVALID');
  const other = new DatabaseSync(join(dir, 'other.db'));
  other.exec('CREATE TABLE t (x)');
  other.close();
  const foreign = await refusal(backupDatabase({ source: join(dir, 'other.db'), target: join(dir, 'b.db') }));
  assert.is(foreign.code, 'ERR_BACKUP_SOURCE_INVALID');
  assert.match(foreign.message, 'not a fieldbridge bridge database');

  makeBridgeDb(source, 10);
  const noFolder = await refusal(backupDatabase({ source, target: join(dir, 'nowhere', 'copy.db') }));
  assert.is(noFolder.code, 'ERR_BACKUP_TARGET_UNWRITABLE');
  assert.match(noFolder.message, 'does not exist');
  const underFile = await refusal(backupDatabase({ source, target: join(dir, 'notes.txt', 'copy.db') }));
  assert.is(underFile.code, 'ERR_BACKUP_TARGET_UNWRITABLE');
  mkdirSync(join(dir, 'folder'));
  assert.is((await refusal(backupDatabase({ source, target: join(dir, 'folder'), force: true }))).code, 'ERR_BACKUP_TARGET_UNWRITABLE');
  assert.is((await refusal(backupDatabase({ source, target: source, force: true }))).code, 'ERR_BACKUP_TARGET_IS_SOURCE');
  assert.equal(readdirSync(dir).sort(), ['bridge.db', 'folder', 'notes.txt', 'other.db']);
});

test('verification refuses a damaged copy and a schema version that does not match', async () => {
  const dir = tempDir();
  const source = join(dir, 'bridge.db');
  const copy = join(dir, 'copy.db');
  makeBridgeDb(source, 3_000);
  await backupDatabase({ source, target: copy });
  verifyBackup(copy, bridgeMigrations.length);
  const wrongVersion = (() => {
    try {
      verifyBackup(copy, bridgeMigrations.length + 1);
    } catch (e) {
      return e as AppError;
    }
  })();
  assert.is(wrongVersion?.code, 'ERR_BACKUP_VERIFY_FAILED');
  assert.match(wrongVersion!.message, 'schema_version');

  // Overwrite the middle of the file (table b-tree pages) with garbage.
  const fd = openSync(copy, 'r+');
  writeSync(fd, Buffer.alloc(4096 * 20, 0x5a), 0, 4096 * 20, 4096 * 40);
  closeSync(fd);
  const damaged = (() => {
    try {
      verifyBackup(copy, bridgeMigrations.length);
    } catch (e) {
      return e as AppError;
    }
  })();
  assert.is(damaged?.code, 'ERR_BACKUP_VERIFY_FAILED');
});

test('fieldbridge backup: progress on stdout, exit 0; refusals exit 1; a missing file name exits 2', async () => {
  const dir = tempDir();
  const source = join(dir, 'bridge.db');
  makeBridgeDb(source, 100);
  const run = (args: string[]) =>
    new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(process.execPath, [join(root, 'src', 'main.ts'), 'backup', ...args], { env: { ...process.env, SERVICE_DB_PATH: source } });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('close', (code) => resolve({ code, out, err }));
    });
  const ok = await run([join(dir, 'copy.db')]);
  assert.is(ok.code, 0, ok.err);
  assert.match(ok.out, 'backing up');
  assert.match(ok.out, 'integrity_check ok');
  const again = await run([join(dir, 'copy.db')]);
  assert.is(again.code, 1);
  assert.match(again.err, 'ERR_BACKUP_TARGET_EXISTS');
  assert.is((await run([join(dir, 'copy.db'), '--force'])).code, 0);
  const none = await run([]);
  assert.is(none.code, 2);
  assert.match(none.err, 'fieldbridge backup <file>');
  assert.is((await run(['a.db', 'b.db'])).code, 2);
});

test.run();
