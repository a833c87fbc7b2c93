import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { getRawAsset, isSea } from 'node:sea';

// How the release executable loads serialport's native addon (docs/packaging.md, "Single
// executable"). build/build.ts bundles @serialport/bindings-cpp and points its `node-gyp-build`
// import at this file; from the source tree bindings-cpp keeps its own loader.
//
// node-gyp-build looks for a prebuilt .node file beside the package on disk. Inside the
// executable there is no such disk: the addon travels as a SEA asset, and the dynamic loader can
// only open a file. So the asset is written once into a cache directory, under a name that holds
// its hash (an upgrade writes a new file; a restart writes nothing), and loaded from there.

/** The prebuilt addon of each architecture we ship, inside the @serialport/bindings-cpp package. */
export const SERIALPORT_PREBUILDS = {
  x64: 'prebuilds/linux-x64/@serialport+bindings-cpp.glibc.node',
  arm64: 'prebuilds/linux-arm64/@serialport+bindings-cpp.armv8.glibc.node',
} as const;

/** The SEA asset key of an architecture's addon. */
export const addonAssetName = (arch: string): string => `serialport-linux-${arch}.node`;

/**
 * Where the addon is written: systemd's CacheDirectory= (it exports CACHE_DIRECTORY; the units
 * set it), else the user's cache directory, else the temporary directory.
 */
export function addonCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const systemd = env.CACHE_DIRECTORY?.split(':')[0];
  if (systemd) return systemd;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'fieldbridge');
  const home = env.HOME || homedir();
  return home ? join(home, '.cache', 'fieldbridge') : join(tmpdir(), `fieldbridge-${process.getuid?.() ?? 'user'}`);
}

/**
 * Puts `bytes` into `dir` as serialport-<first 16 hex digits of its SHA-256>.node and returns the
 * path. A file already there with the same bytes is used as it is; one with other bytes
 * (damaged, or put there by someone else) is replaced, so what is loaded is always what the
 * executable carries. Written beside and renamed, so a crash never leaves half an addon.
 */
export function materializeAddon(bytes: Uint8Array, dir: string): string {
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const file = join(dir, `serialport-${hash}.node`);
  const present = readIfThere(file);
  if (present && Buffer.compare(present, bytes) === 0) return file;
  const partial = `${file}.${process.pid}.partial`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(partial, bytes, { mode: 0o700 });
    renameSync(partial, file);
  } catch (error) {
    try {
      rmSync(partial, { force: true });
    } catch {
      // The directory itself is unusable: there is no partial file to remove.
    }
    throw new Error(
      `serial ports need the serialport addon written to ${dir} (${(error as Error).message}); ` +
        'set CACHE_DIRECTORY to a directory this user may write',
      { cause: error },
    );
  }
  return file;
}

function readIfThere(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Stands in for `require('node-gyp-build')(packageDir)` inside the bundle: returns the addon's
 * exports. The argument is ignored: once bundled, bindings-cpp's `__dirname` is the bundle's.
 */
export default function loadSerialportAddon(): unknown {
  if (!isSea()) {
    // The bundle run by plain node (the benchmark does): the package's own loader, from the
    // node_modules beside the bundle.
    const from = createRequire(process.argv[1] ?? join(process.cwd(), 'bundle.cjs'));
    const nodeGypBuild = from('node-gyp-build') as (dir: string) => unknown;
    return nodeGypBuild(dirname(from.resolve('@serialport/bindings-cpp/package.json')));
  }
  const name = addonAssetName(process.arch);
  let asset: ArrayBuffer;
  try {
    asset = getRawAsset(name);
  } catch {
    throw new Error(`this executable carries no serialport addon for ${process.arch} (${name}); serial ports cannot be opened`);
  }
  const file = materializeAddon(new Uint8Array(asset), addonCacheDir());
  const addon = { exports: {} as unknown };
  process.dlopen(addon, file);
  return addon.exports;
}
