import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkSerialPaths } from '../../../../src/bearers/shared/links/port-check.ts';

// A real pty pair from socat, opened through the real serialport native binding.
const dir = mkdtempSync(join(tmpdir(), 'fb-'));
const a = join(dir, 'A');
const b = join(dir, 'B');
let socat: ChildProcess;

test.before(async () => {
  socat = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: 'ignore' });
  for (let i = 0; i < 100 && !(existsSync(a) && existsSync(b)); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(existsSync(a) && existsSync(b), 'socat made no pty pair');
});

test.after(() => {
  socat.kill();
  rmSync(dir, { recursive: true, force: true });
});

test('bytes pass both ways between a pty pair', async () => {
  const result = await checkSerialPaths(a, b);
  assert.ok(result.ok, result.lines.join('\n'));
  assert.is(result.lines.length, 2);
  assert.match(result.lines[0], `${a} -> ${b}: 40 bytes`);
  assert.match(result.lines[1], `${b} -> ${a}: 40 bytes`);
});

test('without a loopback the probe does not come back: not ok, says so', async () => {
  const result = await checkSerialPaths(a, undefined, 200);
  assert.not.ok(result.ok);
  assert.equal(result.lines, [`${a} -> ${a} (loopback): the 40-byte probe did not arrive within 200 ms`]);
});

test('a path that does not exist is reported, not thrown', async () => {
  const result = await checkSerialPaths(join(dir, 'missing'), b);
  assert.not.ok(result.ok);
  assert.match(result.lines[0], `cannot open ${join(dir, 'missing')}`);
});

test('a path that is not a tty is reported', async () => {
  const result = await checkSerialPaths(dir, undefined, 200);
  assert.not.ok(result.ok);
  assert.match(result.lines[0], 'cannot open');
});

test('the ports are closed afterwards: they open again at once', async () => {
  assert.ok((await checkSerialPaths(a, b)).ok);
  assert.ok((await checkSerialPaths(b, a)).ok);
});

test.run();
