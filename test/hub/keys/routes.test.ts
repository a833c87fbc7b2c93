import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hashKey } from '../../../src/auth/secrets.ts';
import { startTestHub, type TestHub } from '../helper.ts';

let h: TestHub;
test.before.each(async () => {
  h = await startTestHub();
});
test.after.each(async () => {
  await h.stop();
});

test('the setup token makes the first owner key once, and is logged at the first start only', async () => {
  const fresh = await startTestHub({ setup: false });
  try {
    const token = fresh.hub.setupToken!;
    assert.ok(fresh.logs.some((l) => l.includes('hub_setup_token') && l.includes(token)), 'the token is in the log');
    const wrong = await fresh.call('POST', '/api/setup', { key: null, body: { setup_token: 'fbs_wrong', label: 'x' } });
    assert.is(wrong.status, 403);
    const ok = await fresh.call('POST', '/api/setup', { key: null, body: { setup_token: token, label: 'me' } });
    assert.is(ok.status, 201);
    assert.match(ok.body.key, /^fbh_/);
    assert.is(ok.body.role, 'owner');
    const again = await fresh.call('POST', '/api/setup', { key: null, body: { setup_token: token, label: 'me again' } });
    assert.is(again.status, 403);
    assert.is((await fresh.call('GET', '/api/auth/keys', { key: ok.body.key })).body.items.length, 1);
    assert.is(await fresh.hub.keys.issueSetupToken(), null, 'no new token once a key exists');
  } finally {
    await fresh.stop();
  }
});

test('POST /api/auth/keys returns the secret once; the list never shows it or its hash', async () => {
  const created = await h.call('POST', '/api/auth/keys', { body: { label: 'ops laptop', role: 'admin' } });
  assert.is(created.status, 201);
  assert.equal(Object.keys(created.body).sort(), ['created_at', 'id', 'key', 'label', 'role']);
  assert.match(created.body.key, /^fbh_[a-z2-9]{12}_[A-Za-z0-9_-]{43}$/);
  assert.match(created.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const list = await h.call('GET', '/api/auth/keys');
  assert.is(list.status, 200);
  assert.equal(list.body.items.map((k: { label: string }) => k.label), ['first owner', 'ops laptop']);
  assert.not.ok(list.text.includes(created.body.key));
  assert.not.ok(list.text.includes(hashKey(created.body.key)));
  assert.not.ok('key' in list.body.items[1]);
});

test('roles: only an owner manages keys; an admin gets 403; any valid key reads devices', async () => {
  const admin = (await h.call('POST', '/api/auth/keys', { body: { label: 'a', role: 'admin' } })).body.key;
  const viewer = (await h.call('POST', '/api/auth/keys', { body: { label: 'v', role: 'viewer' } })).body.key;
  assert.is((await h.call('GET', '/api/auth/keys', { key: admin })).status, 403);
  assert.is((await h.call('POST', '/api/auth/keys', { key: admin, body: { label: 'x', role: 'owner' } })).status, 403);
  assert.is((await h.call('DELETE', '/api/auth/keys/key_x', { key: admin })).status, 403);
  for (const key of [h.ownerKey, admin, viewer]) {
    const devices = await h.call('GET', '/api/devices', { key });
    assert.is(devices.status, 200);
    assert.equal(devices.body, { items: [], next_cursor: null });
  }
  assert.is((await h.call('GET', '/api/tenant/export', { key: viewer })).status, 403);
});

test('a deleted key gets 401 at once; the last owner key cannot be deleted', async () => {
  const created = (await h.call('POST', '/api/auth/keys', { body: { label: 'temp', role: 'owner' } })).body;
  assert.is((await h.call('GET', '/api/devices', { key: created.key })).status, 200);
  assert.is((await h.call('DELETE', `/api/auth/keys/${created.id}`)).status, 204);
  const after = await h.call('GET', '/api/devices', { key: created.key });
  assert.is(after.status, 401);
  assert.is(after.headers.get('content-type'), 'application/problem+json');
  assert.is((await h.call('DELETE', `/api/auth/keys/${created.id}`)).status, 404);
  const ownerId = (await h.call('GET', '/api/auth/keys')).body.items[0].id;
  const last = await h.call('DELETE', `/api/auth/keys/${ownerId}`);
  assert.is(last.status, 409);
  assert.match(last.body.detail, 'last owner key');
});

test('tenants are separate: a key sees and deletes only its own tenant\'s keys', async () => {
  const other = await h.hub.keys.create('acme', 'acme owner', 'owner');
  const otherList = await h.call('GET', '/api/auth/keys', { key: other.key });
  assert.equal(otherList.body.items.map((k: { id: string }) => k.id), [other.id]);
  assert.is((await h.call('DELETE', `/api/auth/keys/${other.id}`)).status, 404);
  assert.is((await h.call('GET', '/api/devices', { key: other.key })).status, 200);
});

test('bad requests: every kind is refused with problem+json and nothing is created', async () => {
  const cases: Array<[string, { key?: string | null; body?: unknown; headers?: Record<string, string> }, number]> = [
    ['no key', { key: null, body: { label: 'x', role: 'admin' } }, 401],
    ['malformed key', { key: 'fbh_nonsense', body: { label: 'x', role: 'admin' } }, 401],
    ['a bridge key shape', { key: 'fbb_abcdefghijkm_' + 'A'.repeat(43), body: { label: 'x', role: 'admin' } }, 401],
    ['unknown role', { body: { label: 'x', role: 'root' } }, 400],
    ['empty label', { body: { label: '  ', role: 'admin' } }, 400],
    ['missing role', { body: { label: 'x' } }, 400],
    ['extra field', { body: { label: 'x', role: 'admin', key: 'mine' } }, 400],
    ['not an object', { body: ['x'] }, 400],
    ['not JSON content', { body: { label: 'x', role: 'admin' }, headers: { 'content-type': 'text/plain' } }, 415],
  ];
  for (const [name, options, status] of cases) {
    const res = await h.call('POST', '/api/auth/keys', options);
    assert.is(res.status, status, name);
    assert.is(res.headers.get('content-type'), 'application/problem+json', name);
  }
  const bad = await h.call('POST', '/api/auth/keys', { body: {} });
  assert.equal(bad.body.errors.map((e: { path: string }) => e.path).sort(), ['body.label', 'body.role'], 'every bad field at once');
  const broken = await fetch(h.url + '/api/auth/keys', { method: 'POST', headers: { authorization: `Bearer ${h.ownerKey}`, 'content-type': 'application/json' }, body: '{"label":' });
  assert.is(broken.status, 400);
  assert.is((await h.call('GET', '/api/auth/keys')).body.items.length, 1);
});

test('health, OpenAPI and metrics', async () => {
  const health = await h.call('GET', '/api/health', { key: null });
  assert.is(health.status, 200);
  assert.is(health.body.db, 'ok');
  assert.is(health.body.mqtt, 'off');
  const doc = await h.call('GET', '/api/openapi.json', { key: null });
  assert.ok(doc.body.paths['/api/auth/keys'].post);
  assert.ok(doc.body.paths['/api/tenant/export'].get);
  assert.is((await h.call('GET', '/metrics', { key: null })).status, 401);
  const metrics = await h.call('GET', '/metrics');
  assert.match(metrics.text, 'fieldbridge_hub_http_requests_total');
});

test.run();
