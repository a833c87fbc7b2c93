// Bench lines for the shipped executable (issue 3 item 7; issue 22 item 3, small boards): how
// long it takes from spawn until GET /api/health answers 200, the CPU it spends on the way, its
// resident memory then and once settled, and after a load of messages; beside bare Node (the
// same Node answering /api/health from a ten-line HTTP server: what any Node program costs)
// and plain `node` running the same esbuild bundle (what the executable's packaging costs).
// Variants alternate in one run so they see the same machine load; each start uses a fresh
// database (migrations and owner.key included). Then how many modules each subcommand loads,
// counted on the source tree (docs/performance.md, "Memory and start-up").
//
//   node scripts/bench-binary.ts [runs]        (after npm run build; default 7 runs each)
//
//   BENCH_BINARY_MESSAGES=100000   messages routed through the executable before its RSS is
//                                  read again (0 skips; issue 22: 100,000)
//   BENCH_BINARY_SETTLE_MS=2000    how long after the first answer the settled RSS is read
//   BENCH_BINARY_UNIT_ENV=0        run with glibc's defaults (no MALLOC_* at all) instead of
//                                  the systemd unit's allocator settings (by default every
//                                  process here gets them, as the unit gives them to the
//                                  bridge: MALLOC_ARENA_MAX=1 today)
//
// Figures are medians. Not a test: a noisy machine moves them (docs/packaging.md measured
// 60-114 ms startup here). `npm run bench` runs it after the routing benchmark.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname, '..');
const binary = join(root, 'dist', 'fieldbridge-linux-x64');
const bundle = join(root, '.build', 'bundle', 'fieldbridge.cjs');
const MAIN = join(root, 'src', 'main.ts');

const MESSAGES = envInt('BENCH_BINARY_MESSAGES', 100_000, 0, 10_000_000);
const SETTLE_MS = envInt('BENCH_BINARY_SETTLE_MS', 2_000, 0, 60_000);
const UNIT_ENV = envInt('BENCH_BINARY_UNIT_ENV', 1, 0, 1) === 1;
const LOAD_CONCURRENCY = 8;
const TICK_MS = 1000 / 100; // USER_HZ: /proc/<pid>/stat counts CPU in 1/100 s on Linux

// Targets of issue 22 item 3, for the x64 executable.
const TARGET_START_MIB = 80;
const TARGET_LOADED_MIB = 100;

function envInt(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  const n = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name}: expected a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

export interface StartSample {
  startupMs: number;
  /** User + system CPU of the process from spawn until the first 200. */
  cpuMs: number;
  /** VmRSS at the first 200. */
  rssMiB: number;
  /** VmRSS SETTLE_MS later, nothing asked meanwhile. */
  settledRssMiB: number;
}

/** Bare Node: the same binary answering /api/health from an HTTP server and nothing else. */
const BARE_NODE_SERVER =
  "const [h, p] = process.env.SERVICE_LISTEN.split(':');" +
  "const s = require('node:http').createServer((q, r) => { r.writeHead(200, { 'content-type': 'application/json' }); r.end('{\"status\":\"ok\"}'); }).listen(Number(p), h);" +
  "process.on('SIGTERM', () => s.close());";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN) / 1024;
}

/** utime + stime of the whole process (every thread, live or ended), in ms. */
export function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // fields 14 and 15
}

interface Running {
  pid: number;
  url: string;
  dir: string;
  startupMs: number;
  cpuMs: number;
  stop(): Promise<void>;
}

/**
 * The glibc allocator settings (MALLOC_*) that systemd/fieldbridge.service gives the bridge,
 * read from the unit so the figures follow it: the executable is measured as it is run.
 */
export function unitAllocatorEnv(): Record<string, string> {
  const unit = readFileSync(join(root, 'systemd', 'fieldbridge.service'), 'utf8');
  return Object.fromEntries([...unit.matchAll(/^Environment=(MALLOC_[A-Z_]+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
}

/** Spawns `command ...args bridge` on a fresh database and waits for GET /api/health to answer 200. */
async function startBridgeProcess(command: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-bench-'));
  const port = await freePort();
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MALLOC_'))),
    ...(UNIT_ENV ? unitAllocatorEnv() : {}),
    SERVICE_DB_PATH: join(dir, 'data', 'bridge.db'),
    SERVICE_LISTEN: `127.0.0.1:${port}`,
    CACHE_DIRECTORY: join(dir, 'cache'),
    SERVICE_LOG_LEVEL: 'error',
    ...extraEnv,
  };
  const started = process.hrtime.bigint();
  const child = spawn(command, [...args, 'bridge'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = `http://127.0.0.1:${port}`;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}: ${stderr}`);
      const ok = await fetch(`${url}/api/health`).then((r) => r.status === 200, () => false);
      if (ok) break;
      if (process.hrtime.bigint() - started > 30_000_000_000n) throw new Error(`${command} did not answer within 30 s`);
      await new Promise((r) => setTimeout(r, 2));
    }
    const startupMs = Number(process.hrtime.bigint() - started) / 1e6;
    return { pid: child.pid!, url, dir, startupMs, cpuMs: procCpuMs(child.pid!), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One start: time and CPU to the first 200, RSS then and SETTLE_MS later. */
export async function measureStart(command: string, args: string[]): Promise<StartSample> {
  const p = await startBridgeProcess(command, args);
  try {
    const rssMiB = procStatus(p.pid, 'VmRSS');
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    return { startupMs: p.startupMs, cpuMs: p.cpuMs, rssMiB, settledRssMiB: procStatus(p.pid, 'VmRSS') };
  } finally {
    await p.stop();
  }
}

export interface LoadSample {
  messages: number;
  seconds: number;
  startRssMiB: number;
  rssMiB: number;
  peakRssMiB: number;
  /** User + system CPU of the executable over the load, per message (HTTP request included). */
  cpuMsPerMessage: number;
}

/**
 * Routes `messages` frames through a started bridge the way a radio's frames go (POST
 * /api/messages/simulate-mesh-rx on a sim interface, a rule forwarding each to a second sim
 * interface, delivered there), then reads VmRSS and VmHWM (the peak).
 */
export async function measureLoad(command: string, args: string[], messages: number): Promise<LoadSample> {
  const p = await startBridgeProcess(command, args);
  try {
    const startRssMiB = procStatus(p.pid, 'VmRSS');
    const key = readFileSync(join(dirname(join(p.dir, 'data', 'bridge.db')), 'owner.key'), 'utf8').trim();
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(p.url + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    };
    // routing.rate_limit guards a satellite budget against runaway scripts; the benchmark is one.
    await call('POST', '/api/config/module', { section: 'routing', settings: { rate_limit: { sends_per_minute: 0 } } });
    await call('POST', '/api/interfaces', { name: 'bench-in', kind: 'sim', device: 'sim://bench-in', settings: {} });
    await call('POST', '/api/interfaces', { name: 'bench-out', kind: 'sim', device: 'sim://bench-out', settings: {} });
    await call('POST', '/api/access-rules', { name: 'bench-forward', match: { direction: 'inbound' }, schedule: null, action: 'forward', destinations: [{ interface: 'bench-out', to: '{from}' }] });
    const started = performance.now();
    const cpuBefore = procCpuMs(p.pid);
    let next = 0;
    await Promise.all(
      Array.from({ length: LOAD_CONCURRENCY }, async () => {
        for (let i = next++; i < messages; i = next++) {
          await call('POST', '/api/messages/simulate-mesh-rx', { from: '!0000beef', text: `bench message ${i}`, interface: 'bench-in' });
        }
      }),
    );
    for (;;) {
      const stats = await call('GET', '/api/deliveries/stats');
      if (Number(stats.delivered) >= messages) break;
      if (performance.now() - started > 3_600_000) throw new Error(`not delivered within an hour: ${JSON.stringify(stats)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const seconds = (performance.now() - started) / 1000;
    const cpuMsPerMessage = (procCpuMs(p.pid) - cpuBefore) / messages;
    return { messages, seconds, startRssMiB, rssMiB: procStatus(p.pid, 'VmRSS'), peakRssMiB: procStatus(p.pid, 'VmHWM'), cpuMsPerMessage };
  } finally {
    await p.stop();
  }
}

/** Loads registered modules (ES and CommonJS, ours, packages' and node: built-ins) through a
 *  module.registerHooks load hook, written to a file when the process exits. */
const LOADED_MODULES_HOOK =
  "import { registerHooks } from 'node:module'; import { writeFileSync } from 'node:fs';" +
  'const seen = new Set(); registerHooks({ load(url, context, next) { seen.add(url); return next(url, context); } });' +
  "process.on('exit', () => writeFileSync(process.env.FB_LOADED_MODULES, [...seen].join('\\n')));";

/**
 * The modules `fieldbridge <args>` loads, run from the source tree (src/main.ts on this Node):
 * file URLs of src/ and node_modules/, and node: built-ins. A command that serves (`bridge`,
 * `hub`) is stopped with SIGTERM once GET /api/health answered; others run to their end.
 */
export async function loadedModules(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-modules-'));
  const port = await freePort();
  const out = join(dir, 'modules.txt');
  const serves = args[0] === 'bridge' || args[0] === 'hub';
  const childEnv = {
    ...process.env,
    FB_LOADED_MODULES: out,
    SERVICE_DB_PATH: join(dir, 'bridge.db'),
    SERVICE_LISTEN: `127.0.0.1:${port}`,
    SERVICE_LOG_LEVEL: 'error',
    // The hub on SQLite, its MQTT broker a closed port: it starts and keeps trying.
    HUB_SQLITE_PATH: join(dir, 'hub.db'),
    HUB_LISTEN: `127.0.0.1:${port}`,
    HUB_MQTT_URL: 'mqtt://127.0.0.1:1',
    HUB_LOG_LEVEL: 'error',
    ...env,
  };
  const child = spawn(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(LOADED_MODULES_HOOK)}`, MAIN, ...args], { env: childEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  try {
    if (serves) {
      const started = Date.now();
      for (;;) {
        if (child.exitCode !== null) throw new Error(`fieldbridge ${args.join(' ')} exited with ${child.exitCode}: ${stderr}`);
        const ok = await fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.status === 200, () => false);
        if (ok) break;
        if (Date.now() - started > 60_000) throw new Error(`fieldbridge ${args.join(' ')} did not answer within 60 s: ${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      child.kill('SIGTERM');
    }
    const code = await exited;
    if (!existsSync(out)) throw new Error(`fieldbridge ${args.join(' ')} exited with ${code} and listed no modules: ${stderr}`);
    return readFileSync(out, 'utf8').split('\n').filter(Boolean);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A module list in groups: ours, packages, built-ins; and the packages by name. */
export function summarizeModules(urls: string[]): { ours: number; packages: number; builtins: number; byPackage: Map<string, number> } {
  const byPackage = new Map<string, number>();
  let ours = 0;
  let builtins = 0;
  for (const url of urls) {
    if (url.startsWith('node:')) builtins++;
    else {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
      if (pkg) byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + 1);
      else ours++;
    }
  }
  return { ours, packages: urls.length - ours - builtins, builtins, byPackage };
}

/**
 * Drops the page cache of a file (GNU dd, iflag=nocache count=0: posix_fadvise DONTNEED on the
 * whole file), so it is read from disk as after a reboot. How the cache was filled changes the
 * RSS: pages the build has just written come back in large folios, mapped whole on the first fault,
 * and the same executable then shows about 15 MiB more file-backed RSS than a copy of it
 * (docs/performance.md, "Memory and start-up"). Pages other processes have mapped stay.
 */
export function dropPageCache(file: string): void {
  spawnSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0'], { stdio: 'ignore' });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function main(): Promise<number> {
  const runs = Number(process.argv[2] ?? 7);
  const out = (line: string) => process.stdout.write(line + '\n');

  // Modules per subcommand, from the source tree (no build needed).
  for (const args of [['version'], ['bridge'], ['hub']]) {
    const s = summarizeModules(await loadedModules(args));
    const biggest = [...s.byPackage].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([name, n]) => `${name} ${n}`).join(', ');
    out(`modules         fieldbridge ${args[0].padEnd(8)} ${String(s.ours + s.packages).padStart(4)} loaded: ${s.ours} of src/, ${s.packages} of packages${biggest ? ` (${biggest})` : ''}, ${s.builtins} node: built-ins`);
  }

  for (const [file, what] of [[binary, 'the x64 executable'], [bundle, 'the esbuild bundle']]) {
    if (!existsSync(file)) {
      process.stderr.write(`bench-binary: ${file} (${what}) is missing: run npm run build first\n`);
      return 1;
    }
  }
  if (process.arch !== 'x64') {
    process.stderr.write(`bench-binary: the x64 executable cannot run natively on ${process.arch}\n`);
    return 1;
  }
  const variants = [
    { name: 'executable (Node SEA)', command: binary, args: [] as string[], samples: [] as StartSample[] },
    { name: `node ${process.version} + bundle`, command: process.execPath, args: [bundle], samples: [] as StartSample[] },
    { name: 'bare node: HTTP server only', command: process.execPath, args: ['-e', BARE_NODE_SERVER], samples: [] as StartSample[] },
  ];
  const allocator = Object.entries(UNIT_ENV ? unitAllocatorEnv() : {}).map(([k, v]) => `${k}=${v}`).join(' ');
  out(`binary env      ${allocator ? `${allocator} for every process below, as systemd/fieldbridge.service runs the bridge` : 'glibc defaults (BENCH_BINARY_UNIT_ENV=0)'}`);
  for (const file of [binary, bundle, process.execPath]) dropPageCache(file);
  for (let i = 0; i < runs; i++) for (const v of variants) v.samples.push(await measureStart(v.command, v.args));
  const rows = variants.map((v) => ({
    name: v.name,
    ms: median(v.samples.map((s) => s.startupMs)),
    cpu: median(v.samples.map((s) => s.cpuMs)),
    rss: median(v.samples.map((s) => s.rssMiB)),
    settled: median(v.samples.map((s) => s.settledRssMiB)),
  }));
  for (const r of rows) {
    out(`binary startup  ${r.name.padEnd(28)} ${r.ms.toFixed(0).padStart(5)} ms to /api/health   CPU ${r.cpu.toFixed(0).padStart(4)} ms   RSS ${r.rss.toFixed(0).padStart(4)} MiB, ${r.settled.toFixed(0).padStart(4)} MiB ${SETTLE_MS / 1000} s later`);
  }
  const [exe, node, bare] = rows;
  out(`binary startup  executable / node+bundle      ${(exe.ms / node.ms).toFixed(2)}x time   ${(exe.rss / node.rss).toFixed(2)}x RSS   (median of ${runs} runs each)`);
  out(`binary startup  executable - bare node        +${(exe.ms - bare.ms).toFixed(0)} ms   +${(exe.cpu - bare.cpu).toFixed(0)} ms CPU   +${(exe.settled - bare.settled).toFixed(0)} MiB RSS settled`);
  let met = exe.settled <= TARGET_START_MIB;
  out(`target: executable RSS after start at most ${TARGET_START_MIB} MiB: ${met ? 'MET' : 'NOT MET'} (${exe.settled.toFixed(1)} MiB settled, ${exe.rss.toFixed(1)} at the first answer)`);

  if (MESSAGES > 0) {
    const load = await measureLoad(binary, [], MESSAGES);
    out(`binary load     executable, ${load.messages} messages routed (sim to sim, ${(load.messages / load.seconds).toFixed(0)} msg/s, CPU ${load.cpuMsPerMessage.toFixed(2)} ms/message): RSS ${load.startRssMiB.toFixed(0)} -> ${load.rssMiB.toFixed(0)} MiB, peak ${load.peakRssMiB.toFixed(0)} MiB`);
    const loadMet = load.peakRssMiB <= TARGET_LOADED_MIB;
    out(`target: executable RSS after ${load.messages} messages at most ${TARGET_LOADED_MIB} MiB: ${loadMet ? 'MET' : 'NOT MET'} (peak ${load.peakRssMiB.toFixed(1)} MiB, now ${load.rssMiB.toFixed(1)})`);
    met &&= loadMet;
  }
  return met ? 0 : 1;
}

if (import.meta.main) process.exitCode = await main();
