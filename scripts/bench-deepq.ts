// Deep queues (docs/performance.md, "Deep queues"): a satellite modem switched off for a day
// while the mesh keeps talking. One interface, its caps raised, disabled, and a rule that
// forwards every message to it: every delivery is held. The bridge runs as its own process (the
// executable when `npm run build` made one, else node on src/main.ts) and is sent
// 100,000 + 2,000 messages through POST /api/messages/send, 8 in flight. Printed, each beside
// its baseline from the same run:
//
//   msg/s and CPU per message (the bridge's user + system CPU, HTTP included) over 2,000
//     messages with 0, 10,000 and 100,000 deliveries already held; the time of the whole
//     100,000 against ten times the first 10,000;
//   RSS after the load (VmRSS; VmHWM is the peak);
//   idle over BENCH_DEEPQ_IDLE_S with 100,000 waiting: CPU, wake-ups (context switches of every
//     thread) and bytes written (/proc/<pid>/io), beside a bridge on an empty database idling
//     over the same seconds;
//   start after kill -9 on that database (time to the first GET /api/health 200, and its CPU),
//     beside a start on an empty database; medians of BENCH_DEEPQ_STARTS, alternating.
//
//   BENCH_DEEPQ_MESSAGES=100000   the deep point (and the load)
//   BENCH_DEEPQ_WINDOW=2000       messages per rate measurement
//   BENCH_DEEPQ_IDLE_S=60         idle window, seconds
//   BENCH_DEEPQ_STARTS=3          starts of each kind
//
// Targets: CPU per message at 100,000 at most 1.5x at 0; the 100,000 load at most 3x the first
// 10,000 scaled up; idle 0 bytes and no measurable CPU; a start after kill -9 at most 1.2x an
// empty database; RSS after the load at most 100 MiB (the executable).

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, procCpuMs, procStatus, unitAllocatorEnv } from './bench-binary.ts';

const root = join(import.meta.dirname, '..');
const BINARY = join(root, 'dist', 'fieldbridge-linux-x64');
const MAIN = join(root, 'src', 'main.ts');
const MID = 10_000;
const WINDOW = envInt('BENCH_DEEPQ_WINDOW', 2_000, 100, 10_000);
/** The deep point: past the middle one and its window. */
const DEEP = envInt('BENCH_DEEPQ_MESSAGES', 100_000, MID + WINDOW, 1_000_000);
const IDLE_S = envInt('BENCH_DEEPQ_IDLE_S', 60, 1, 3600);
const STARTS = envInt('BENCH_DEEPQ_STARTS', 3, 1, 20);
const IN_FLIGHT = 8;
/** Messages sent (and cancelled) before the first window: the hot path compiled, as on a bridge that has run a while. */
const WARM_UP = 3_000;
const TO = '!deep0000';

function envInt(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name}: expected a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

const out = (s: string) => process.stdout.write(s + '\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Voluntary and involuntary context switches of every thread: how often the process woke. */
function wakeUps(pid: number): number {
  let n = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    n += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0) + Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return n;
}
const writeBytes = (pid: number) => Number(/^write_bytes:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);

interface Bridge {
  pid: number;
  url: string;
  startupMs: number;
  startCpuMs: number;
  call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
  /** SIGTERM, or SIGKILL with `kill`; the database stays. */
  stop(kill?: boolean): Promise<void>;
}

const command = existsSync(BINARY) ? { file: BINARY, args: [] as string[], label: 'the executable' } : { file: process.execPath, args: [MAIN], label: 'node src/main.ts (no build: npm run build)' };

/** Starts the bridge on the database in `dir` and waits for GET /api/health to answer 200. */
async function start(dir: string): Promise<Bridge> {
  const port = await freePort();
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MALLOC_'))),
    ...unitAllocatorEnv(),
    SERVICE_DB_PATH: join(dir, 'bridge.db'),
    SERVICE_LISTEN: `127.0.0.1:${port}`,
    CACHE_DIRECTORY: join(dir, 'cache'),
    SERVICE_LOG_LEVEL: 'error',
  };
  const started = performance.now();
  const child = spawn(command.file, [...command.args, 'bridge'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the bridge exited with ${child.exitCode}: ${stderr}`);
    if (await fetch(`${url}/api/health`).then((r) => r.status === 200, () => false)) break;
    if (performance.now() - started > 60_000) throw new Error('the bridge did not answer within 60 s');
    await sleep(2);
  }
  const startupMs = performance.now() - started;
  const pid = child.pid!;
  const key = readFileSync(join(dir, 'owner.key'), 'utf8').trim();
  return {
    pid, url, startupMs, startCpuMs: procCpuMs(pid),
    async call(method, path, body) {
      const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    },
    async stop(kill = false) {
      if (child.exitCode === null && child.signalCode === null) child.kill(kill ? 'SIGKILL' : 'SIGTERM');
      await exited;
    },
  };
}

/** Sends messages numbered [from, to) 8 at a time; answers the seconds and the bridge's CPU. */
async function send(b: Bridge, from: number, to: number): Promise<{ seconds: number; cpuMs: number }> {
  const t0 = performance.now();
  const c0 = procCpuMs(b.pid);
  let next = from;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let i = next++; i < to; i = next++) await b.call('POST', '/api/messages/send', { to: TO, text: `deep queue message ${i}` });
    }),
  );
  return { seconds: (performance.now() - t0) / 1000, cpuMs: procCpuMs(b.pid) - c0 };
}

async function held(b: Bridge): Promise<number> {
  return Number((await b.call('GET', '/api/deliveries/stats')).held ?? 0);
}

export async function main(): Promise<number> {
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'fb-bench-deepq-'));
    dirs.push(d);
    return d;
  };
  const running: Bridge[] = [];
  const started = async (dir: string) => {
    const b = await start(dir);
    running.push(b);
    return b;
  };
  try {
    out(`deep queue: ${DEEP.toLocaleString('en-US')} messages held on one disabled interface (caps raised), POST /api/messages/send ${IN_FLIGHT} in flight; ${command.label}`);
    const deepDir = tempDir();
    const b = await started(deepDir);
    await b.call('POST', '/api/config/module', { section: 'routing', settings: { rate_limit: { sends_per_minute: 0 } } });
    await b.call('POST', '/api/interfaces', { name: 'satellite', kind: 'sim', device: 'sim://deepq', enabled: false, settings: {}, retry: { queue_max_deliveries: 1_000_000, queue_max_bytes: 1_073_741_824 } });
    await b.call('POST', '/api/access-rules', { name: 'all-to-satellite', match: { direction: 'outbound', to: [TO] }, schedule: null, action: 'forward', destinations: [{ interface: 'satellite', to: '{to}' }] });
    // Warm-up (JIT, page cache), not counted: WARM_UP messages, their deliveries cancelled, so
    // the first window starts with nothing held.
    for (let i = 0; i < WARM_UP; i += IN_FLIGHT) {
      const sent = await Promise.all(Array.from({ length: IN_FLIGHT }, (_, j) => b.call('POST', '/api/messages/send', { to: TO, text: `warm-up ${i + j}` })));
      await Promise.all(sent.flatMap((r) => (r.deliveries as Array<{ id: string }>).map((d) => b.call('POST', `/api/deliveries/${d.id}/cancel`))));
    }
    const warm = await held(b);
    if (warm !== 0) throw new Error(`${warm} deliveries still held after the warm-up`);
    const at0 = await send(b, 0, WINDOW);
    const first = await send(b, WINDOW, MID);
    const at10k = await send(b, MID, MID + WINDOW);
    const rest = await send(b, MID + WINDOW, DEEP);
    const atDeep = await send(b, DEEP, DEEP + WINDOW);
    const load = { first10kS: at0.seconds + first.seconds, wholeS: at0.seconds + first.seconds + at10k.seconds + rest.seconds };
    const rssMiB = procStatus(b.pid, 'VmRSS');
    const peakMiB = procStatus(b.pid, 'VmHWM');
    const waiting = await held(b);
    if (waiting !== DEEP + WINDOW) throw new Error(`expected ${DEEP + WINDOW} deliveries held, found ${waiting}`);
    const rate = (w: { seconds: number; cpuMs: number }, label: string) =>
      out(`  ${label.padEnd(40)} ${String(Math.round(WINDOW / w.seconds)).padStart(6)} msg/s   CPU ${(w.cpuMs / WINDOW).toFixed(3)} ms/message`);
    rate(at0, 'held before: 0');
    rate(at10k, `held before: ${MID.toLocaleString('en-US')}`);
    rate(atDeep, `held before: ${DEEP.toLocaleString('en-US')}`);
    const cpuRatio = atDeep.cpuMs / at0.cpuMs;
    const loadRatio = load.wholeS / (load.first10kS * (DEEP / MID));
    const cpuMet = cpuRatio <= 1.5 && atDeep.cpuMs / at10k.cpuMs <= 1.5;
    const loadMet = loadRatio <= 3;
    // The first window can still be warming up (it often costs more than the second): the ratio
    // to the 10,000 point is printed beside it, so a window that flatters the target shows.
    out(`  CPU per message at ${DEEP.toLocaleString('en-US')} against 0: ${cpuRatio.toFixed(2)}x (against ${MID.toLocaleString('en-US')}: ${(atDeep.cpuMs / at10k.cpuMs).toFixed(2)}x)   target at most 1.5x: ${cpuMet ? 'MET' : 'NOT MET'}`);
    out(`  the ${DEEP.toLocaleString('en-US')} load: ${load.wholeS.toFixed(1)} s against the first ${MID.toLocaleString('en-US')} scaled up ${(load.first10kS * (DEEP / MID)).toFixed(1)} s: ${loadRatio.toFixed(2)}x   target at most 3x: ${loadMet ? 'MET' : 'NOT MET'}`);
    const rssMet = rssMiB <= 100;
    out(`  RSS after the load ${rssMiB.toFixed(1)} MiB (peak ${peakMiB.toFixed(1)})   target at most 100 MiB${command.file === BINARY ? '' : ' (for the executable)'}: ${rssMet ? 'MET' : 'NOT MET'}`);

    // Idle: this bridge with everything waiting, beside one on an empty database, same seconds.
    const empty = await started(tempDir());
    await sleep(2000);
    const sample = (p: Bridge) => ({ cpu: procCpuMs(p.pid), wakes: wakeUps(p.pid), bytes: writeBytes(p.pid) });
    const [d0, e0] = [sample(b), sample(empty)];
    await sleep(IDLE_S * 1000);
    const [d1, e1] = [sample(b), sample(empty)];
    const idle = (x: typeof d0, y: typeof d0) => `CPU ${(y.cpu - x.cpu).toFixed(0)} ms, ${y.wakes - x.wakes} wake-ups, ${y.bytes - x.bytes} bytes written`;
    // /proc counts CPU in ticks of 10 ms: "no measurable CPU" is at most what the empty one spent plus one tick.
    const idleMet = d1.bytes - d0.bytes === 0 && d1.cpu - d0.cpu <= e1.cpu - e0.cpu + 10;
    out(`  idle ${IDLE_S} s, ${(DEEP + WINDOW).toLocaleString('en-US')} waiting: ${idle(d0, d1)}   empty database: ${idle(e0, e1)}   target 0 bytes, no CPU beyond the empty one's: ${idleMet ? 'MET' : 'NOT MET'}`);
    await empty.stop(true);

    // Start after kill -9 on the deep database, against a start on an empty one, alternating.
    await b.stop(true);
    const deepStarts: Bridge[] = [];
    const emptyStarts: Bridge[] = [];
    for (let i = 0; i < STARTS; i++) {
      const d = await started(deepDir);
      deepStarts.push(d);
      await d.stop(true);
      const e = await started(tempDir());
      emptyStarts.push(e);
      await e.stop(true);
    }
    const startMs = median(deepStarts.map((s) => s.startupMs));
    const emptyMs = median(emptyStarts.map((s) => s.startupMs));
    const startMet = startMs <= 1.2 * emptyMs;
    out(`  start after kill -9: ${startMs.toFixed(0)} ms (CPU ${median(deepStarts.map((s) => s.startCpuMs)).toFixed(0)} ms)   empty database: ${emptyMs.toFixed(0)} ms (CPU ${median(emptyStarts.map((s) => s.startCpuMs)).toFixed(0)} ms)   ${(startMs / emptyMs).toFixed(2)}x, target at most 1.2x: ${startMet ? 'MET' : 'NOT MET'}  (medians of ${STARTS})`);
    return cpuMet && loadMet && idleMet && startMet && rssMet ? 0 : 1;
  } finally {
    for (const r of running) await r.stop(true);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

if (import.meta.main) process.exitCode = await main();
