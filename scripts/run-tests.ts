// Test runner: every test/**/*.test.ts file runs in its own Node process under uvu (so one
// file's leaked handle or crash cannot hide another's result), two at a time, each with a
// time limit. Prints a file's full output only when it fails, then the line CI reads:
// "N passed, N failed".
//
//   npm test                      every test file
//   npm test -- test/http rnode   only files whose path contains one of the words

import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, relative } from 'node:path';

const FILE_TIMEOUT_MS = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 300_000);
const root = join(import.meta.dirname, '..');
const filters = process.argv.slice(2);

function findTests(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === 'fixtures' ? [] : findTests(path);
      return name.endsWith('.test.ts') ? [path] : [];
    });
}

const files = findTests(join(root, 'test')).filter(
  (f) => filters.length === 0 || filters.some((w) => relative(root, f).includes(w.replace(/^\.\//, ''))),
);

interface FileResult {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  output: string;
  ms: number;
}

function runFile(file: string): Promise<FileResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'scripts', 'uvu-file.ts'), file], {
      cwd: root,
      env: { ...process.env, FORCE_COLOR: '0', FIELDBRIDGE_TEST: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => {
      output += `\n[runner] ${relative(root, file)} still running after ${FILE_TIMEOUT_MS} ms: killed (a leaked handle or a hung test)\n`;
      child.kill('SIGKILL');
    }, FILE_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      const total = count(output, 'Total');
      const passed = count(output, 'Passed');
      const skipped = count(output, 'Skipped');
      // uvu's Total leaves the skipped tests out.
      let failed = Math.max(0, total - passed);
      // A file that crashed, hung or exited non-zero without a failing test still fails.
      if ((code !== 0 || total + skipped === 0) && failed === 0) failed = 1;
      resolve({ file, passed, failed, skipped, output, ms: Date.now() - started });
    });
  });
}

function count(output: string, label: string): number {
  const matches = [...output.matchAll(new RegExp(`^\\s*${label}:\\s+(\\d+)`, 'gm'))];
  return matches.length ? Number(matches[matches.length - 1][1]) : 0;
}

const results: FileResult[] = [];
const queue = [...files];
const workers = Math.max(1, Math.min(Number(process.env.TEST_JOBS ?? cpus().length + 1), 4));
await Promise.all(
  Array.from({ length: workers }, async () => {
    for (let file = queue.shift(); file; file = queue.shift()) {
      const r = await runFile(file);
      results.push(r);
      const mark = r.failed > 0 ? 'FAIL' : 'ok  ';
      process.stdout.write(`${mark} ${relative(root, r.file)}  ${r.passed} passed, ${r.failed} failed${r.skipped ? `, ${r.skipped} skipped` : ''}  (${(r.ms / 1000).toFixed(1)} s)\n`);
      if (r.failed > 0) process.stdout.write(r.output.replace(/^/gm, '    | ') + '\n');
      else if (r.skipped > 0) for (const why of r.output.match(/^\s*skipped: .*$/gm) ?? []) process.stdout.write(`    | ${why.trim()}\n`);
    }
  }),
);

const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
const skipped = results.reduce((n, r) => n + r.skipped, 0);
if (files.length === 0) process.stdout.write('no test files matched\n');
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exitCode = failed > 0 || files.length === 0 ? 1 : 0;
