import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sign } from '../../src/bearers/webhook/wire.ts';

// The receiver examples of docs/webhooks.md ("Verifying the signature") are run as written:
// the shell line computes the signature the bridge sends, and the Node receiver accepts a
// request the bridge signed and refuses one with a body changed after signing. The receiver
// gets this process's environment, so under faketime both ends read the same clock.

const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'webhooks.md'), 'utf8');
const SECRET = 'doc-example-secret-0123456789';
const BODY = Buffer.from('{"type":"delivery","message":{"from":"!a1b2c3d4","text":"grüße, SOS at camp 3"}}', 'utf8');
let dir: string;

test.before(() => void (dir = mkdtempSync(join(tmpdir(), 'fb-doc-hook-'))));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('the shell line gives the signature the bridge sends', () => {
  const line = doc.split('\n').find((l) => l.startsWith("printf '%s.' \"$TS\""));
  assert.ok(line, 'the shell example is in docs/webhooks.md');
  writeFileSync(join(dir, 'body.json'), BODY);
  const ts = 1767225605;
  const out = execFileSync('sh', ['-c', line!], { cwd: dir, env: { PATH: process.env.PATH, TS: String(ts), SECRET } }).toString().trim();
  assert.is(out, sign(SECRET, ts, BODY));
});

test('the Node receiver accepts a signed request and refuses a changed body', async () => {
  const code = /```js\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(code, 'the Node example is in docs/webhooks.md');
  writeFileSync(join(dir, 'receiver.mjs'), code!);
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const child = spawn(process.execPath, [join(dir, 'receiver.mjs')], { env: { ...process.env, PORT: String(port), FIELDBRIDGE_SECRET: SECRET }, stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  child.stdout.on('data', (c) => (printed += c));
  try {
    const post = async (body: Buffer, signedBody = body) => {
      const ts = Math.floor(Date.now() / 1000);
      for (let i = 0; ; i++) {
        try {
          const r = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body, headers: { 'x-fieldbridge-timestamp': String(ts), 'x-fieldbridge-signature': sign(SECRET, ts, signedBody), 'x-fieldbridge-delivery': 'dlv_doc' } });
          return r.status;
        } catch (error) {
          if (i > 100) throw error;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    assert.is(await post(BODY), 204);
    // The receiver prints before it answers, but its stdout reaches this process on its own
    // pipe, possibly after the answer.
    for (let i = 0; i < 100 && !printed.includes('dlv_doc'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.match(printed, /dlv_doc !a1b2c3d4 grüße, SOS at camp 3/);
    assert.is(await post(Buffer.from(BODY.toString().replace('camp 3', 'camp 4')), BODY), 401);
  } finally {
    child.kill();
  }
});

test.run();
