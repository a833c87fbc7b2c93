import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openBridgeDatabase } from '../../src/bridge/app.ts';
import { backupDatabase } from '../../src/bridge/config/backup.ts';
import { createLogger } from '../../src/lib/log.ts';
import { startTestBridge } from '../helpers/bridge.ts';
import { runCommand } from '../helpers/process.ts';

// The files the bridge owns beside its database (issue 14): created 0600 whatever the umask
// (they hold the hub password and key hashes), and never the target of `fieldbridge backup`,
// --force or not (a backup over the live -wal lost data).

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fb-files-'));
  dirs.push(dir);
  return dir;
}
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

/** Runs fn with the process umask set to `mask` (0: nothing masked, so only the mode the code asks for counts). */
async function withUmask<T>(mask: number, fn: () => Promise<T>): Promise<T> {
  const before = process.umask(mask);
  try {
    return await fn();
  } finally {
    process.umask(before);
  }
}

test('a fresh data directory: bridge.db, its -wal and -shm, owner.key and a backup are 0600, the folder 0700, even with umask 0', async () => {
  const dir = join(tempDir(), 'data');
  await withUmask(0, async () => {
    const t = await startTestBridge({ dir });
    try {
      assert.is((await t.call('POST', '/api/interfaces', { body: { name: 'm', kind: 'sim', settings: {} } })).status, 201);
      for (const name of ['bridge.db', 'bridge.db-wal', 'bridge.db-shm', 'owner.key']) assert.is(mode(join(dir, name)).toString(8), '600', name);
      assert.is(mode(dir).toString(8), '700', 'the data folder');

      const target = join(tempDir(), 'copy.db');
      await backupDatabase({ source: t.dbPath, target });
      assert.is(mode(target).toString(8), '600', 'a new backup');
      writeFileSync(join(dirname(target), 'old.db'), 'stale');
      chmodSync(join(dirname(target), 'old.db'), 0o644);
      await backupDatabase({ source: t.dbPath, target: join(dirname(target), 'old.db'), force: true });
      assert.is(mode(join(dirname(target), 'old.db')).toString(8), '600', 'a backup replacing a 0644 file');
    } finally {
      await t.stop();
    }
  });
});

test('a database left readable by others (as before issue 14) is narrowed to 0600 when opened, with a log line', () => {
  const dir = tempDir();
  const path = join(dir, 'bridge.db');
  openBridgeDatabase(path).close();
  chmodSync(path, 0o644);
  const lines: string[] = [];
  const db = openBridgeDatabase(path, createLogger({ format: 'json', write: (l) => lines.push(l) }));
  try {
    assert.is(mode(path).toString(8), '600');
    assert.is(mode(`${path}-wal`).toString(8), '600');
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.event === 'file_mode_narrowed');
    assert.ok(line, lines.join('\n'));
    assert.equal([line.path, line.from, line.to], [path, '0644', '0600']);
  } finally {
    db.close();
  }
});

test('backup refuses every file the bridge owns as its target, --force or not, through links too, and changes nothing', () => {
  const root = tempDir();
  const dir = join(root, 'data');
  mkdirSync(dir);
  const db = join(dir, 'bridge.db');
  // The running bridge: a connection holding committed rows in the WAL (no checkpoint yet).
  const live = openBridgeDatabase(db);
  live.exec('PRAGMA wal_autocheckpoint = 0');
  const insert = live.prepare("INSERT INTO audit_log (at, key_id, method, path, status, request_id) VALUES ('2026-01-01T00:00:00.000Z', NULL, 'POST', ?, 201, 'req')");
  for (let i = 0; i < 50; i++) insert.run(`/api/x/${i}`);
  writeFileSync(join(dir, 'owner.key'), 'fbb_secret\n', { mode: 0o600 });
  symlinkSync(dir, join(root, 'alias'));
  const digest = (p: string) => (existsSync(p) ? createHash('sha256').update(readFileSync(p)).digest('hex') : 'absent');
  const owned = ['bridge.db', 'bridge.db-wal', 'bridge.db-shm', 'bridge.db-journal', 'owner.key'].map((n) => join(dir, n));
  const before = owned.map(digest);
  assert.ok(statSync(`${db}-wal`).size > 0, 'the WAL holds the rows');
  try {
    const cases: Array<[string, RegExp]> = [
      [`${db}-wal`, /ERR_BACKUP_TARGET_OWNED.*is the live database's write-ahead log/],
      [db, /ERR_BACKUP_TARGET_IS_SOURCE.*is the live database/],
      [`${db}-shm`, /ERR_BACKUP_TARGET_OWNED.*shared-memory index/],
      [`${db}-journal`, /ERR_BACKUP_TARGET_OWNED.*rollback journal/],
      [join(dir, 'owner.key'), /ERR_BACKUP_TARGET_OWNED.*the first owner key/],
      [join(root, 'alias', 'bridge.db-wal'), /ERR_BACKUP_TARGET_OWNED.*write-ahead log/],
      [join(root, 'alias', 'bridge.db'), /ERR_BACKUP_TARGET_IS_SOURCE/],
    ];
    for (const [target, expected] of cases) {
      for (const force of [['--force'], []]) {
        const r = runCommand(['backup', target, ...force], { SERVICE_DB_PATH: db });
        assert.is(r.status, 1, `${target} ${force}: exit 1; ${r.stdout}${r.stderr}`);
        assert.is(r.stderr.trimEnd().split('\n').length, 1, `one line: ${r.stderr}`);
        assert.match(r.stderr, expected);
        assert.match(r.stderr, /which the bridge owns; name a file outside/);
      }
    }
    assert.equal(owned.map(digest), before, 'the database, its WAL and SHM and owner.key are untouched');
    assert.equal(readdirSync(dir).sort(), ['bridge.db', 'bridge.db-shm', 'bridge.db-wal', 'owner.key'], 'no partial copies left behind');
    assert.is((live.prepare('SELECT count(*) AS n FROM audit_log').get() as { n: number }).n, 50, 'every committed row is still there');

    // Another name in the same folder is fine.
    const beside = join(dir, 'bridge-2026-01-01.db');
    const ok = runCommand(['backup', beside], { SERVICE_DB_PATH: db });
    assert.is(ok.status, 0, ok.stderr);
    assert.is(mode(beside).toString(8), '600');
  } finally {
    live.close();
  }
});

test.run();
