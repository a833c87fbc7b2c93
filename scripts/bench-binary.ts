// Bench line for the shipped executable (issue 3, item 7): time from spawn until
// GET /api/health answers 200, and resident memory right after, for the x64 executable beside
// plain `node` running the same esbuild bundle, alternating in one run so both see the same
// machine load. Each start uses a fresh database (migrations and owner.key included).
//
//   node scripts/bench-binary.ts [runs]        (after npm run build; default 7 runs each)
//
// Figures are medians. Not a test: a noisy machine moves them (docs/packaging.md measured
// 60-114 ms startup here). `npm run bench` runs it after the routing benchmark.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const binary = join(root, 'dist', 'fieldbridge-linux-x64');
const bundle = join(root, '.build', 'bundle', 'fieldbridge.cjs');

export interface StartSample {
  startupMs: number;
  rssMiB: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts command, polls /api/health until 200, reads VmRSS, stops it with SIGTERM. */
export async function measureStart(command: string, args: string[]): Promise<StartSample> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-bench-'));
  const port = await freePort();
  const env = { ...process.env, SERVICE_DB_PATH: join(dir, 'bridge.db'), SERVICE_LISTEN: `127.0.0.1:${port}`, PKG_NATIVE_CACHE_PATH: join(dir, 'cache'), SERVICE_LOG_LEVEL: 'error' };
  const started = process.hrtime.bigint();
  const child = spawn(command, [...args, 'bridge'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}: ${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.status === 200, () => false);
      if (ok) break;
      if (process.hrtime.bigint() - started > 30_000_000_000n) throw new Error(`${command} did not answer within 30 s`);
      await new Promise((r) => setTimeout(r, 2));
    }
    const startupMs = Number(process.hrtime.bigint() - started) / 1e6;
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const rssKiB = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
    return { startupMs, rssMiB: rssKiB / 1024 };
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function main(): Promise<number> {
  const runs = Number(process.argv[2] ?? 7);
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
    { name: 'executable (pkg SEA)', command: binary, args: [] as string[], samples: [] as StartSample[] },
    { name: `node ${process.version} + bundle`, command: process.execPath, args: [bundle], samples: [] as StartSample[] },
  ];
  for (let i = 0; i < runs; i++) for (const v of variants) v.samples.push(await measureStart(v.command, v.args));
  const rows = variants.map((v) => ({ name: v.name, ms: median(v.samples.map((s) => s.startupMs)), rss: median(v.samples.map((s) => s.rssMiB)) }));
  for (const r of rows) process.stdout.write(`binary startup  ${r.name.padEnd(28)} ${r.ms.toFixed(0).padStart(5)} ms to /api/health   RSS ${r.rss.toFixed(0).padStart(4)} MiB\n`);
  const [exe, node] = rows;
  process.stdout.write(`binary startup  executable / node+bundle      ${(exe.ms / node.ms).toFixed(2)}x time   ${(exe.rss / node.rss).toFixed(2)}x RSS   (median of ${runs} runs each)\n`);
  return 0;
}

if (import.meta.main) process.exitCode = await main();
