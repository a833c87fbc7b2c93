import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../../src/lib/log.ts';
import { openHubStore } from '../../../src/hub/store/store.ts';

// The hub's SQLite file holds every enrolled bridge's secret (what verifies its signatures):
// private to the hub's user like the bridge's files, whatever the umask, in a folder of its own
// created 0700; an older file readable by others is narrowed when the hub opens it.

const dirs: string[] = [];
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-hubfiles-'));
  dirs.push(dir);
  return dir;
};
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

test('a fresh hub.db, its -wal and -shm are 0600 in a 0700 folder, even with umask 0', async () => {
  const dir = join(tempDir(), 'state');
  const path = join(dir, 'hub.db');
  const before = process.umask(0);
  try {
    const store = await openHubStore({ sqlitePath: path });
    try {
      for (const file of [path, `${path}-wal`, `${path}-shm`]) {
        assert.ok(existsSync(file), file);
        assert.is(mode(file), '600', file);
      }
      assert.is(mode(dir), '700', 'the folder the hub created');
    } finally {
      await store.close();
    }
  } finally {
    process.umask(before);
  }
});

test('a hub.db left readable by others is narrowed to 0600 when opened, with a log line', async () => {
  const path = join(tempDir(), 'hub.db');
  await (await openHubStore({ sqlitePath: path })).close();
  chmodSync(path, 0o644);
  const lines: string[] = [];
  const store = await openHubStore({ sqlitePath: path }, { log: createLogger({ format: 'json', write: (l) => lines.push(l) }) });
  try {
    assert.is(mode(path), '600');
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.event === 'file_mode_narrowed');
    assert.ok(line, lines.join('\n'));
    assert.equal([line.path, line.from, line.to], [path, '0644', '0600']);
  } finally {
    await store.close();
  }
});

test.run();
