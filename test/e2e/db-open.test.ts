import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAIN, runCommand } from '../helpers/process.ts';

// Issue 14, item 6: a database that cannot be opened stops `fieldbridge bridge` with one line
// on stderr naming the path and SERVICE_DB_PATH, exit code 1, no stack trace.

const dir = mkdtempSync(join(tmpdir(), 'fb-dbopen-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function assertOneLine(r: { status: number | null; stderr: string }, path: string, why: RegExp): void {
  assert.is(r.status, 1, r.stderr);
  const lines = r.stderr.trimEnd().split('\n');
  assert.is(lines.length, 1, `one line, got: ${r.stderr}`);
  assert.match(lines[0], /^fieldbridge: cannot open the database /);
  assert.ok(lines[0].includes(path), lines[0]);
  assert.match(lines[0], /SERVICE_DB_PATH/);
  assert.match(lines[0], why);
  assert.not.match(r.stderr, /\n\s+at /, 'no stack trace');
}

test('a file where a folder of the path should be', () => {
  writeFileSync(join(dir, 'not-a-folder'), 'x');
  const path = join(dir, 'not-a-folder', 'data', 'bridge.db');
  const env = { SERVICE_DB_PATH: path, SERVICE_LISTEN: '127.0.0.1:0' };
  assertOneLine(runCommand(['bridge'], env), path, /not-a-folder is a file, not a folder/);
  // The other commands that open the database say the same.
  assertOneLine(runCommand(['keys', 'create', '--role', 'owner', '--label', 'x'], env), path, /is a file, not a folder/);
  assertOneLine(runCommand(['migrate'], env), path, /is a file, not a folder/);
});

// Root may write anywhere: as root, these run the command as nobody (uid 65534) instead.
const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;

function runAsUser(args: string[], path: string) {
  const env = { ...process.env, SERVICE_DB_PATH: path, SERVICE_LISTEN: '127.0.0.1:0' };
  if (!asRoot) return spawnSync(process.execPath, [MAIN, ...args], { env, encoding: 'utf8', timeout: 30_000 });
  assert.ok(spawnSync('setpriv', ['--version']).status === 0, 'setpriv (util-linux) is needed to run this as another user when the tests run as root');
  chmodSync(dir, 0o755);
  return spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, MAIN, ...args], { env, encoding: 'utf8', timeout: 30_000 });
}

test('a folder this user may not write', () => {
  const locked = join(dir, 'locked');
  mkdirSync(locked);
  const path = join(locked, 'bridge.db');
  if (!asRoot) chmodSync(locked, 0o555); // as root: the folder is root's, 0755
  try {
    assertOneLine(runAsUser(['bridge'], path), path, /may not write .*locked/);
  } finally {
    chmodSync(locked, 0o755);
  }
});

test('a database file this user may only read (SQLite would open it read-only without a word)', () => {
  const mine = join(dir, 'mine');
  mkdirSync(mine);
  if (asRoot) chownSync(mine, NOBODY, NOBODY);
  const path = join(mine, 'bridge.db');
  const made = runAsUser(['migrate'], path);
  assert.is(made.status, 0, made.stderr);
  for (const f of readdirSync(mine)) chmodSync(join(mine, f), 0o400);
  assertOneLine(runAsUser(['bridge'], path), path, /may not write .*bridge\.db/);
});

test.run();
