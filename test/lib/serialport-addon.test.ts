import { createHash } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import loadSerialportAddon, { addonCacheDir, materializeAddon, unsafeDirReason } from '../../src/lib/serialport-addon.ts';

// How the release executable gets serialport's addon onto disk for dlopen (docs/packaging.md,
// "serialport's addon inside the executable"). The executable itself is exercised by
// scripts/smoke-binary.sh (a pty pair through the addon, x64 and arm64); here the file handling.

/** A test given a fresh directory, removed afterwards whatever happens. */
function scratchTest(name: string, fn: (dir: string) => void | Promise<void>): void {
  test(name, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fb-addon-'));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

const bytesA = Buffer.from('\x7fELF pretend addon A');
const bytesB = Buffer.from('\x7fELF pretend addon B, a newer release');

scratchTest('the addon is written once under a name holding its hash, 0700, and a restart writes nothing', (root) => {
  const dir = join(root, 'cache', 'fieldbridge');
  const file = materializeAddon(bytesA, dir);
  assert.is(file, join(dir, `serialport-${createHash('sha256').update(bytesA).digest('hex').slice(0, 16)}.node`));
  assert.equal(readFileSync(file), bytesA);
  assert.is(statSync(file).mode & 0o777, 0o700);
  const before = statSync(file);
  assert.is(materializeAddon(bytesA, dir), file, 'the same bytes: the same file');
  const after = statSync(file);
  assert.is(after.ino, before.ino, 'not written again');
  assert.is(after.mtimeMs, before.mtimeMs, 'not written again');
  assert.equal(readdirSync(dir), [file.slice(dir.length + 1)], 'no partial file left');
});

scratchTest('a file of that name with other bytes (damaged, or planted) is replaced with what the executable carries', (dir) => {
  const file = materializeAddon(bytesA, dir);
  writeFileSync(file, 'truncated');
  assert.is(materializeAddon(bytesA, dir), file);
  assert.equal(readFileSync(file), bytesA);
});

scratchTest('an upgraded executable writes its addon beside the old one instead of over it', (dir) => {
  const a = materializeAddon(bytesA, dir);
  const b = materializeAddon(bytesB, dir);
  assert.is.not(a, b);
  assert.equal(readFileSync(a), bytesA, 'a process still running the old release keeps its file');
  assert.equal(readFileSync(b), bytesB);
});

scratchTest('a cache that cannot be created gives an error naming the directory and the variables, and leaves nothing', (dir) => {
  const blocker = join(dir, 'not-a-directory');
  writeFileSync(blocker, ''); // a file where the directory should be: refused even for root
  const cache = join(blocker, 'fieldbridge');
  assert.throws(() => materializeAddon(bytesA, cache), (e: Error) => e.message.includes(cache) && e.message.includes('CACHE_DIRECTORY'));
  assert.equal(readdirSync(dir), ['not-a-directory']);
});

scratchTest('code is never loaded from a directory others may write or that is not ours: refused, nothing written', (dir) => {
  const shared = join(dir, 'shared');
  mkdirSync(shared);
  chmodSync(shared, 0o777);
  assert.throws(() => materializeAddon(bytesA, shared), (e: Error) => e.message.includes(shared) && /others may write it \(mode 777\)/.test(e.message));
  assert.equal(readdirSync(shared), []);
  const theirs = join(dir, 'theirs');
  mkdirSync(theirs, { mode: 0o700 });
  assert.match(unsafeDirReason(theirs, 12345) ?? '', /belongs to uid \d+, not to this user \(uid 12345\)/);
  if (process.getuid?.() === 0) {
    chownSync(theirs, 65534, 65534); // nobody: root can hand it over, and must then refuse it
    assert.throws(() => materializeAddon(bytesA, theirs), /belongs to uid 65534/);
  }
  const link = join(dir, 'link');
  symlinkSync(join(dir, 'shared'), link);
  assert.match(unsafeDirReason(link) ?? '', /not a directory/, 'a symlink is not followed');
});

scratchTest('two processes writing the same addon at once both end with the whole file', async (dir) => {
  const big = Buffer.alloc(4 * 1024 * 1024, 7);
  const { execFile } = await import('node:child_process');
  const script = `import { materializeAddon } from ${JSON.stringify(join(import.meta.dirname, '..', '..', 'src', 'lib', 'serialport-addon.ts'))};
    process.stdout.write(materializeAddon(Buffer.alloc(${big.length}, 7), ${JSON.stringify(dir)}));`;
  const run = () =>
    new Promise<string>((resolve, reject) => execFile(process.execPath, ['--input-type=module', '-e', script], (error, stdout) => (error ? reject(error) : resolve(stdout))));
  const files = await Promise.all([run(), run(), run()]);
  assert.equal(new Set(files).size, 1);
  assert.ok(Buffer.compare(readFileSync(files[0]), big) === 0, 'the whole addon');
  assert.equal(readdirSync(dir), [files[0].slice(dir.length + 1)], 'no partial file left');
});

test('the cache is systemd\'s CacheDirectory=, else the XDG cache, else ~/.cache, never /tmp', () => {
  const passwd = () => '/home/from-passwd';
  assert.is(addonCacheDir({ CACHE_DIRECTORY: '/var/cache/fieldbridge', XDG_CACHE_HOME: '/x', HOME: '/h' }, passwd), '/var/cache/fieldbridge');
  assert.is(addonCacheDir({ CACHE_DIRECTORY: '/var/cache/a:/var/cache/b' }, passwd), '/var/cache/a', 'several CacheDirectory= entries: the first');
  assert.is(addonCacheDir({ CACHE_DIRECTORY: '', XDG_CACHE_HOME: '/x', HOME: '/h' }, passwd), '/x/fieldbridge');
  assert.is(addonCacheDir({ XDG_CACHE_HOME: '/x' }, passwd), '/x/fieldbridge');
  assert.is(addonCacheDir({ HOME: '/home/pi' }, passwd), '/home/pi/.cache/fieldbridge');
  assert.is(addonCacheDir({ HOME: '' }, passwd), '/home/from-passwd/.cache/fieldbridge', 'an empty HOME: the passwd entry');
});

test('outside the executable the package\'s own prebuild is loaded, and it is the real addon', () => {
  const binding = loadSerialportAddon() as Record<string, unknown>;
  for (const fn of ['open', 'close', 'set', 'get', 'update', 'flush', 'drain']) assert.type(binding[fn], 'function', `binding.${fn}`);
});

test.run();
