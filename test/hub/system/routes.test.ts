import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestHub, type TestHub } from '../helper.ts';

// Issue 15 item 5: the hub's /metrics counts every tenant (ingest, HTTP requests, refusals), so
// only an owner key of the operator's tenant ("default") reads it; a customer's keys get 403.

let h: TestHub;
test.before(async () => {
  h = await startTestHub();
});
test.after(async () => {
  await h.stop();
});

test('an owner key of the operator\'s tenant reads /metrics', async () => {
  const r = await h.call('GET', '/metrics');
  assert.is(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', 'text/plain');
  assert.match(r.text, 'fieldbridge_hub_http_requests_total');
  assert.is((await h.call('GET', '/metrics', { key: null })).status, 401);
});

test('another tenant\'s owner, and the operator\'s admin and viewer keys, get 403', async () => {
  const customer = await h.hub.keys.create('acme', 'acme owner', 'owner');
  const refused = await h.call('GET', '/metrics', { key: customer.key });
  assert.is(refused.status, 403);
  assert.is(refused.body.type, 'https://fieldbridge.dev/problems/forbidden');
  assert.not.ok(refused.text.includes('fieldbridge_hub_'), 'no figures in the refusal');
  for (const role of ['admin', 'viewer'] as const) {
    const key = (await h.hub.keys.create('default', role, role)).key;
    assert.is((await h.call('GET', '/metrics', { key })).status, 403, role);
  }
  // The customer's own routes still work.
  assert.is((await h.call('GET', '/api/devices', { key: customer.key })).status, 200);
});

test('the OpenAPI document says who may read /metrics', async () => {
  const doc = (await h.call('GET', '/api/openapi.json', { key: null })).body;
  assert.match(doc.paths['/metrics'].get.summary, 'operator');
  assert.ok(doc.paths['/metrics'].get.responses['403']);
});

test.run();
