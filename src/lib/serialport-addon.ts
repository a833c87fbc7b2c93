import { createHash, randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { getRawAsset, isSea } from 'node:sea';

// How the release executable loads serialport's native addon (docs/packaging.md, "serialport's
// addon inside the executable"). build/build.ts bundles @serialport/bindings-cpp and points its
// `node-gyp-build` import at this file; from the source tree bindings-cpp keeps its own loader.
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
 * Where the addon is written: systemd's CacheDirectory= (it exports CACHE_DIRECTORY; the bridge's
 * unit sets it), else $XDG_CACHE_HOME/fieldbridge, else ~/.cache/fieldbridge. Never a shared
 * directory such as /tmp: what is there is loaded as code.
 */
export function addonCacheDir(env: NodeJS.ProcessEnv = process.env, home: () => string = homedir): string {
  const systemd = env.CACHE_DIRECTORY?.split(':')[0];
  if (systemd) return systemd;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'fieldbridge');
  return join(env.HOME || home(), '.cache', 'fieldbridge');
}

/** Why this process must not load code from `dir`, or undefined: it must be a directory of our
 *  own user that nobody else may write (a file there is dlopen'ed). */
export function unsafeDirReason(dir: string, uid: number | undefined = process.getuid?.()): string | undefined {
  const st = lstatSync(dir);
  if (!st.isDirectory()) return 'it is not a directory';
  if (uid !== undefined && st.uid !== uid) return `it belongs to uid ${st.uid}, not to this user (uid ${uid})`;
  if ((st.mode & 0o022) !== 0) return `group or others may write it (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}

/**
 * Puts `bytes` into `dir` as serialport-<first 16 hex digits of its SHA-256>.node and returns the
 * path. A file already there with the same bytes is used as it is; one with other bytes
 * (damaged by a crash of an older release, say) is replaced, so what is loaded is what the
 * executable carries. Written under a fresh random name, exclusively, and renamed, so neither a
 * crash nor a second process ever leaves half an addon under the final name.
 */
export function materializeAddon(bytes: Uint8Array, dir: string): string {
  const hint = `the serialport addon is written to ${dir} before a serial port opens`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new Error(`${hint}, and it cannot be created (${(error as Error).message}); give this user a cache directory (CACHE_DIRECTORY, XDG_CACHE_HOME or HOME)`, { cause: error });
  }
  const unsafe = unsafeDirReason(dir);
  if (unsafe) throw new Error(`${hint}, and it is not safe to load code from: ${unsafe}; fix its owner and mode or choose another (CACHE_DIRECTORY)`);
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const file = join(dir, `serialport-${hash}.node`);
  const present = readIfThere(file);
  if (present && Buffer.compare(present, bytes) === 0) return file;
  const partial = join(dir, `.serialport-${hash}.${randomBytes(6).toString('hex')}.partial`);
  try {
    writeFileSync(partial, bytes, { mode: 0o700, flag: 'wx' });
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw new Error(`${hint}, and writing it failed (${(error as Error).message})`, { cause: error });
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
 * A failure here fails bindings-cpp's module, which the bundle remembers: serial opens report
 * it until the bridge restarts.
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
  let dir: string;
  try {
    dir = addonCacheDir();
  } catch (error) {
    throw new Error(`no cache directory for the serialport addon: set CACHE_DIRECTORY (${(error as Error).message})`, { cause: error });
  }
  const file = materializeAddon(new Uint8Array(asset), dir);
  const addon = { exports: {} as unknown };
  try {
    process.dlopen(addon, file);
  } catch (error) {
    throw new Error(`the serialport addon ${file} could not be loaded (${(error as Error).message}); a file system mounted noexec refuses it`, { cause: error });
  }
  return addon.exports;
}
