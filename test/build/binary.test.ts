import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { binaryPath, blobPath, bundleInputsPath, carriesBlob, CROSS_RUN_PACKAGES, devPackagesAmong, type SeaConfig, seaConfigPath, TARGETS } from '../../build/build.ts';
import { addonAssetName } from '../../src/lib/serialport-addon.ts';

// The shipped executables, proven inside `npm test` (and so inside CI): built when dist/ is
// missing or older than the sources, then run through scripts/smoke-binary.sh for every
// architecture (arm64 under qemu). Slow by nature: a first build and qemu take a minute.

const root = join(import.meta.dirname, '..', '..');

function newestMtime(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(s.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    // Node 24 first on PATH: the build needs it (package.json pins it).
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` };
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const relay = (d: Buffer) => {
      output += d;
      process.stdout.write(d); // progress stays visible in the runner's output on failure
    };
    child.stdout.on('data', relay);
    child.stderr.on('data', relay);
    child.on('close', (code) => resolve({ code, output }));
  });
}

test('the executables are built and current', async () => {
  const sources = Math.max(...['src', 'build', 'package.json', 'package-lock.json'].map((p) => newestMtime(join(root, p))));
  const stale = TARGETS.filter((t) => !existsSync(binaryPath(t.arch)) || statSync(binaryPath(t.arch)).mtimeMs < sources);
  if (stale.length === 0) return;
  console.log(`building: ${stale.map((t) => t.arch).join(', ')} missing or older than the sources`);
  const r = await run(process.execPath, [join(root, 'build', 'build.ts')]);
  assert.is(r.code, 0, `the build failed:\n${r.output}`);
});

test('each executable is under 120 MB and carries only the bundle, its code cache and its own serial addon', () => {
  const inputs = JSON.parse(readFileSync(bundleInputsPath, 'utf8')) as string[];
  assert.equal(devPackagesAmong(inputs), [], 'no development dependency in the bundle');
  for (const t of TARGETS) {
    // What the blob was made of, as the build wrote it down; then that the blob really holds the
    // bundle and the addon's bytes, and that the executable holds the blob.
    const used = JSON.parse(readFileSync(seaConfigPath(t.arch), 'utf8')) as SeaConfig;
    assert.equal(Object.keys(used.assets), [addonAssetName(t.arch)], `${t.arch}: its own serialport addon, nothing else`);
    assert.ok(used.assets[addonAssetName(t.arch)].includes(`prebuilds/linux-${t.arch}/`), `${t.arch}: the linux-${t.arch} prebuild`);
    assert.not.ok(used.useSnapshot, 'no snapshot');
    // scripts/setup-services.sh installs qemu-user-static and the arm64 libraries, so here both
    // carry a code cache.
    assert.ok(used.useCodeCache, `${t.arch}: no code cache in its blob: install ${CROSS_RUN_PACKAGES[t.arch]} (scripts/setup-services.sh does), then delete dist/ and run the tests again`);
    assert.not.match(readFileSync(used.main, 'utf8'), /sourceMappingURL=/, 'no source map');
    const blob = readFileSync(blobPath(t.arch));
    assert.ok(blob.includes(readFileSync(used.main)), `${t.arch}: the blob holds the bundle`);
    assert.ok(blob.includes(readFileSync(used.assets[addonAssetName(t.arch)])), `${t.arch}: the blob holds the addon's bytes`);
    const file = binaryPath(t.arch);
    assert.ok(statSync(file).size < 120 * 1024 * 1024, `${file} is over 120 MB`);
    assert.ok(carriesBlob(file, blob), `${file} carries its blob with its fuse set`);
  }
});

test('scripts/smoke-binary.sh passes for x64 and arm64', async () => {
  const r = await run('bash', [join(root, 'scripts', 'smoke-binary.sh'), 'x64', 'arm64']);
  assert.is(r.code, 0, r.output);
  assert.not.match(r.output, /\bFAIL\b/);
  assert.match(r.output, 'every check passed for: x64 arm64');
  for (const arch of ['x64', 'arm64']) {
    for (const check of ['version: ', 'GET /api/health', 'GET /api/auth/keys with the owner key: 200', 'SIGTERM: stopped cleanly, exit 0', 'serial addon: ok', 'the addon was written under CACHE_DIRECTORY', 'a world-writable addon cache is refused']) {
      assert.ok(r.output.includes(`[smoke ${arch}] ok    ${check}`), `${arch}: no passing "${check}" line`);
    }
  }
});

test.run();
