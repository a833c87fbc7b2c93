import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'node:http';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';

// Every error status of the HTTP kernel, as a curl user meets it: a problem+json body with the
// right status and a detail that says what to fix. Never a stack trace.

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
});
test.after(async () => {
  await t.stop();
});

function assertProblem(r: { status: number; headers: Headers; body: any; text: string }, status: number, detail?: RegExp) {
  assert.is(r.status, status, r.text);
  assert.is(r.headers.get('content-type'), 'application/problem+json');
  assert.is(r.body.status, status);
  assert.type(r.body.type, 'string');
  assert.type(r.body.title, 'string');
  assert.type(r.body.detail, 'string');
  if (detail) assert.match(r.body.detail, detail);
  assert.not.match(r.text, /at .*\.ts:\d+/, 'no stack trace in the body');
  assert.ok(r.headers.get('x-request-id'));
}

test('no key: 401 with WWW-Authenticate', async () => {
  const r = await t.call('GET', '/api/auth/keys', { key: null });
  assertProblem(r, 401, /Authorization: Bearer/);
  assert.is(r.headers.get('www-authenticate'), 'Bearer');
});

test('an unknown or malformed key: 401', async () => {
  assertProblem(await t.call('GET', '/api/auth/keys', { key: 'fbb_aaaaaaaaaaaa_' + 'x'.repeat(43) }), 401, /unknown/);
  assertProblem(await t.call('GET', '/api/auth/keys', { key: 'nonsense' }), 401);
  assertProblem(await t.call('GET', '/api/auth/keys', { key: null, headers: { authorization: 'Basic Zm9vOmJhcg==' } }), 401);
});

test('a viewer key on a POST: 403 naming the role', async () => {
  const created = await t.call('POST', '/api/auth/keys', { body: { label: 'ro', role: 'viewer' } });
  assert.is(created.status, 201);
  const r = await t.call('POST', '/api/auth/keys', { key: created.body.key, body: { label: 'x', role: 'viewer' } });
  assertProblem(r, 403, /viewer/);
});

test('broken JSON: 400 naming the problem', async () => {
  const r = await t.call('POST', '/api/auth/keys', { rawBody: '{"label": "x", ', headers: { 'content-type': 'application/json' } });
  assertProblem(r, 400, /not valid JSON/);
});

test('a schema violation: 400 naming every bad field', async () => {
  const r = await t.call('POST', '/api/auth/keys', { body: { label: '', role: 'superuser' } });
  assertProblem(r, 400);
  const paths = r.body.errors.map((e: { path: string }) => e.path).sort();
  assert.equal(paths, ['body.label', 'body.role']);
});

test('a missing body on a route that needs one: 400', async () => {
  const r = await t.call('POST', '/api/auth/keys', {});
  assertProblem(r, 400);
});

test('an unknown path: 404', async () => {
  assertProblem(await t.call('GET', '/api/no-such-thing'), 404, /no route/);
});

test('a wrong method: 405 with Allow', async () => {
  const r = await t.call('PUT', '/api/auth/keys', { body: {} });
  assertProblem(r, 405);
  assert.is(r.headers.get('allow'), 'GET, POST');
});

test('a 2 MiB body: 413, and the connection still answers', async () => {
  const big = JSON.stringify({ label: 'x'.repeat(2 * 1024 * 1024), role: 'viewer' });
  assertProblem(await t.call('POST', '/api/auth/keys', { rawBody: big, headers: { 'content-type': 'application/json' } }), 413, /larger than 1048576/);
});

test('a 2 MiB chunked body without Content-Length: 413 without buffering it', async () => {
  const url = new URL(t.url);
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: '/api/auth/keys', method: 'POST', headers: { authorization: `Bearer ${t.ownerKey}`, 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < 2 * 1024 * 1024) {
        sent += chunk.length;
        if (!req.write(chunk)) return req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
  assert.is(status, 413);
});

test('a text/plain body: 415', async () => {
  const r = await t.call('POST', '/api/auth/keys', { rawBody: 'label=x', headers: { 'content-type': 'text/plain' } });
  assertProblem(r, 415, /application\/json/);
});

test('a malformed percent-encoding in the path: 400', async () => {
  assertProblem(await t.call('DELETE', '/api/auth/keys/%E0%A4%A'), 400);
});

test('X-Request-Id is taken from the request when it is sane, made up otherwise', async () => {
  const mine = await t.call('GET', '/api/health', { headers: { 'x-request-id': 'abc-123' } });
  assert.is(mine.headers.get('x-request-id'), 'abc-123');
  const hostile = await t.call('GET', '/api/health', { headers: { 'x-request-id': 'a b;c=<x>' } });
  assert.match(hostile.headers.get('x-request-id') ?? '', /^req_/);
});

test('every request is logged once with its route template, status and key id', async () => {
  await t.call('GET', '/api/auth/keys', { headers: { 'x-request-id': 'log-check-1' } });
  const lines = t.logs.map((l) => JSON.parse(l)).filter((l) => l.request_id === 'log-check-1' && l.event === 'http_request');
  assert.is(lines.length, 1);
  assert.is(lines[0].route, '/api/auth/keys');
  assert.is(lines[0].status, 200);
  assert.match(lines[0].key_id, /^key_/);
  assert.type(lines[0].duration_ms, 'number');
});

test('the log never shows a key secret', async () => {
  const created = await t.call('POST', '/api/auth/keys', { body: { label: 'secret-check', role: 'admin' } });
  await t.call('GET', '/api/auth/keys', { key: created.body.key });
  const all = t.logs.join('\n');
  assert.not.ok(all.includes(created.body.key), 'created key is not in the log');
  assert.not.ok(all.includes(t.ownerKey), 'owner key is not in the log');
});

test.run();
