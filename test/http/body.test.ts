import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { JsonDepthScanner, MAX_JSON_DEPTH } from '../../src/http/body.ts';
import { route } from '../../src/http/route.ts';
import { createRequestHandler, listen } from '../../src/http/server.ts';
import { createLogger } from '../../src/lib/log.ts';
import { startTestBridge } from '../helpers/bridge.ts';
import { apiClient } from '../helpers/api.ts';

// Request bodies nest at most MAX_JSON_DEPTH (32) levels (issue 14, item 2): checked while the
// bytes arrive, before JSON.parse, a schema or JSON.stringify walks the value.

const nested = (depth: number, open = '[', close = ']', inner = '') => open.repeat(depth) + inner + close.repeat(depth);
const objects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const depthOf = (text: string) => {
  const s = new JsonDepthScanner(Number.POSITIVE_INFINITY);
  s.push(Buffer.from(text));
  return s.deepest;
};

test('the scanner counts arrays and objects outside strings', () => {
  assert.is(depthOf('1'), 0);
  assert.is(depthOf('"[[[{{{"'), 0, 'brackets inside a string do not count');
  assert.is(depthOf('[]'), 1);
  assert.is(depthOf('{"a":[1,{"b":[]}],"c":{}}'), 4);
  assert.is(depthOf('["\\"[[[", "\\\\", [["x]]"]]]'), 3, 'an escaped quote does not end a string; an escaped backslash does not escape the quote');
  assert.is(depthOf('{"ключ":"значение [{"}'), 1, 'multi-byte UTF-8 is never taken for a bracket');
  assert.is(depthOf(nested(32)), 32);
  assert.is(depthOf(objects(33)), 33);
});

test('the scanner gives the same answer however the bytes are split', () => {
  const text = Buffer.from('{"a":"x\\"[{","b":[[{"c":"\\\\"}],[]],"d":"é]]"}');
  const whole = depthOf(text.toString());
  for (let cut = 0; cut <= text.length; cut++) {
    const s = new JsonDepthScanner(Number.POSITIVE_INFINITY);
    s.push(text.subarray(0, cut));
    s.push(text.subarray(cut));
    assert.is(s.deepest, whole, `split at ${cut}`);
  }
  // A byte at a time, too.
  const s = new JsonDepthScanner(Number.POSITIVE_INFINITY);
  for (const b of text) s.push(Uint8Array.of(b));
  assert.is(s.deepest, whole);
});

test('the scanner stops at the first byte past the limit', () => {
  const s = new JsonDepthScanner(3);
  assert.ok(s.push(Buffer.from('[[[')));
  assert.not.ok(s.push(Buffer.from('[')));
});

async function server() {
  const handler = createRequestHandler({
    routes: [route({ method: 'POST', path: '/echo', summary: 'echo', roles: 'public', body: z.unknown(), handler: ({ body }) => ({ got: body === undefined ? null : 'a value' }) })],
    log: createLogger({ write: () => {} }),
    now: () => 0,
    authenticate: () => null,
  });
  const s = await listen(handler, '127.0.0.1', 0);
  return { call: apiClient(() => s.url, () => ''), close: () => s.close(0) };
}

test('a body nested deeper than 32 levels is refused with 400 body-too-deep naming the limit; 32 levels are accepted', async () => {
  const s = await server();
  try {
    const ok = await s.call('POST', '/echo', { rawBody: nested(MAX_JSON_DEPTH), headers: { 'content-type': 'application/json' } });
    assert.is(ok.status, 200, ok.text);
    for (const body of [nested(MAX_JSON_DEPTH + 1), objects(MAX_JSON_DEPTH + 1), `{"x":${nested(MAX_JSON_DEPTH)}}`]) {
      const r = await s.call('POST', '/echo', { rawBody: body, headers: { 'content-type': 'application/json' } });
      assert.is(r.status, 400, r.text);
      assert.match(r.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.is(r.body.type, 'https://fieldbridge.dev/problems/body-too-deep');
      assert.match(r.body.detail, /deeper than 32 levels/);
    }
    // Brackets in strings are text, not nesting.
    const text = await s.call('POST', '/echo', { rawBody: JSON.stringify({ note: '['.repeat(10_000) }), headers: { 'content-type': 'application/json' } });
    assert.is(text.status, 200, text.text);
    // A merge patch is JSON too.
    const patch = await s.call('POST', '/echo', { rawBody: nested(40), headers: { 'content-type': 'application/merge-patch+json' } });
    assert.is(patch.body.type, 'https://fieldbridge.dev/problems/body-too-deep');
  } finally {
    await s.close();
  }
});

test('the bridge refuses 500,000 nested arrays (within 1 MiB) at once, on every route that takes a body', async () => {
  const t = await startTestBridge();
  try {
    const deep = nested(500_000);
    const started = performance.now();
    for (const [method, path] of [['POST', '/api/interfaces'], ['POST', '/api/config/import'], ['POST', '/api/messages/send'], ['POST', '/api/access-rules']]) {
      const r = await t.call(method, path, { rawBody: deep, headers: { 'content-type': 'application/json' } });
      assert.is(r.status, 400, `${path}: ${r.text}`);
      assert.is(r.body.type, 'https://fieldbridge.dev/problems/body-too-deep', path);
    }
    const settings = await t.call('POST', '/api/interfaces', { rawBody: `{"name":"deep","kind":"sms","settings":{"x":${nested(100)}}}`, headers: { 'content-type': 'application/json' } });
    assert.is(settings.body.type, 'https://fieldbridge.dev/problems/body-too-deep');
    assert.ok(performance.now() - started < 5000, 'refused quickly');
    assert.is((await t.call('GET', '/api/interfaces/deep')).status, 404, 'nothing was stored');
  } finally {
    await t.stop();
  }
});

test.run();
