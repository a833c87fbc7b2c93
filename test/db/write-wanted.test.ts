import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WRITE_WANTED_MAX_AGE_MS, whileWriteWanted, writeWantedPath, writeWantedWatcher } from '../../src/db/write-wanted.ts';

// Another process asking the running bridge for its write lock (db/write-wanted.ts, issue 22
// review). The bridge side in a running bridge: test/bridge/engine/group-commit.test.ts.

const dir = mkdtempSync(join(tmpdir(), 'fb-write-wanted-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('the file is there while the work runs, mode 0600, and gone after it, also when the work fails', async () => {
  const db = join(dir, 'a.db');
  const watch = writeWantedWatcher(db);
  assert.is(watch(), false);
  await whileWriteWanted(db, () => {
    assert.ok(existsSync(writeWantedPath(db)));
    assert.is(statSync(writeWantedPath(db)).mode & 0o777, 0o600);
    assert.ok(writeWantedWatcher(db)(), 'a bridge sees the wish');
  });
  assert.not.ok(existsSync(writeWantedPath(db)));
  await whileWriteWanted(db, () => {
    throw new Error('the write failed');
  }).then(() => assert.unreachable('the error goes to the caller'), (e: Error) => assert.is(e.message, 'the write failed'));
  assert.not.ok(existsSync(writeWantedPath(db)), 'removed after a failure too');
});

test("a file another process made is left to it while that process runs; one whose process is gone is ignored", async () => {
  const db = join(dir, 'b.db');
  // This test process stands for the other one: it runs.
  writeFileSync(writeWantedPath(db), `${process.pid}\n`);
  await whileWriteWanted(db, () => undefined);
  assert.ok(existsSync(writeWantedPath(db)), 'not ours to remove');
  assert.ok(writeWantedWatcher(db)());
  const gone = spawnSync('true').pid;
  writeFileSync(writeWantedPath(db), `${gone}\n`);
  assert.is(writeWantedWatcher(db)(), false, 'its process is gone: the bridge groups again');
});

test('our own wish carries our pid; a file without one (an operator\'s touch) counts for a minute from when the bridge sees it', async () => {
  const db = join(dir, 'e.db');
  await whileWriteWanted(db, () => assert.is(readFileSync(writeWantedPath(db), 'utf8').trim(), String(process.pid)));
  let now = 0;
  const watch = writeWantedWatcher(db, () => now);
  writeFileSync(writeWantedPath(db), '');
  assert.ok(watch(), 'new: stands');
  now = WRITE_WANTED_MAX_AGE_MS - 100;
  assert.ok(watch());
  now = WRITE_WANTED_MAX_AGE_MS;
  assert.is(watch(), false, 'a minute later: left over, ignored');
  const st = statSync(writeWantedPath(db));
  utimesSync(writeWantedPath(db), st.atime, new Date(st.mtimeMs + 2000));
  now += 100;
  assert.ok(watch(), 'touched again: stands again');
});

test('the bridge looks at the file at most every 50 ms (a stat per ingest would cost more than it tells)', async () => {
  const db = join(dir, 'c.db');
  let now = 0;
  const watch = writeWantedWatcher(db, () => now);
  assert.is(watch(), false);
  writeFileSync(writeWantedPath(db), `${process.pid}\n`);
  now = 49;
  assert.is(watch(), false, 'the last look still holds');
  now = 50;
  assert.is(watch(), true);
});

test('a folder that cannot hold the file: the work runs anyway', async () => {
  const db = join(dir, 'no-such-folder', 'd.db');
  assert.is(await whileWriteWanted(db, () => 42), 42);
});

test.run();
