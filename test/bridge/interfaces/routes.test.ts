import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createRule, createSim } from '../../helpers/routing.ts';

// Bad input on /api/interfaces (issue 4): every kind of refusal says which field, and a
// refused request changes nothing.

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
});
test.after(async () => {
  await t.stop();
});

const body = (over: Record<string, unknown> = {}) => ({ name: 'good', kind: 'sim', settings: {}, ...over });

test('unknown interface ids answer 404 on every endpoint', async () => {
  const calls: Array<[string, string, unknown?]> = [
    ['GET', '/api/interfaces/ifc_nope'],
    ['PUT', '/api/interfaces/ifc_nope', { name: 'x', settings: {}, transforms: { inbound: [], outbound: [] }, retry: {} }],
    ['DELETE', '/api/interfaces/no-such-name'],
    ['POST', '/api/interfaces/ifc_nope/enable'],
    ['POST', '/api/interfaces/ifc_nope/disable'],
    ['POST', '/api/interfaces/ifc_nope/bind', { device: 'sim://x' }],
    ['POST', '/api/interfaces/ifc_nope/unbind'],
  ];
  for (const [method, path, b] of calls) {
    const r = await t.call(method, path, b === undefined ? {} : { body: b });
    assertProblem(r, 404, [], /does not exist/);
  }
});

test('create: each bad field is refused with 400 naming it, and nothing is created', async () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [body({ name: 'Not A Slug' }), 'body.name'],
    [body({ name: '' }), 'body.name'],
    [body({ kind: 'carrier-pigeon' }), 'body.kind'],
    [body({ settings: { behaviour: 'explode' } }), 'body.settings.behaviour'],
    [body({ settings: { latency_ms: -1 } }), 'body.settings.latency_ms'],
    [body({ settings: { colour: 'red' } }), 'body.settings'],
    [body({ device: 'com3' }), 'body.device'],
    [body({ device: 'sim://' }), 'body.device'],
    [body({ transforms: { inbound: [], outbound: [{ type: 'truncate', max_bytes: 0 }] } }), 'body.transforms.outbound[0].max_bytes'],
    [body({ transforms: { inbound: [{ type: 'rot13' }], outbound: [] } }), 'body.transforms.inbound[0].type'],
    [body({ transforms: { inbound: [], outbound: [{ type: 'prefix', text: '{sender} ' }] } }), 'body.transforms.outbound[0].text'],
    [body({ transforms: { inbound: [], outbound: [{ type: 'drop_if', regex: '(a)\\1' }] } }), 'body.transforms.outbound[0].regex'],
    [body({ transforms: { inbound: [], outbound: [{ type: 'split', max_bytes: 8 }] } }), 'body.transforms.outbound[0].max_bytes'],
    [body({ transforms: { sideways: [] } }), 'body.transforms'],
    [body({ retry: { base_s: 60, cap_s: 10 } }), 'body.retry.cap_s'],
    [body({ retry: { max_attempts: 0 } }), 'body.retry.max_attempts'],
    [body({ retry: { ttl_s: 1.5 } }), 'body.retry.ttl_s'],
    [body({ enabled: 'yes' }), 'body.enabled'],
    [body({ state: {} }), 'body'],
  ];
  for (const [b, path] of cases) assertProblem(await t.call('POST', '/api/interfaces', { body: b }), 400, [path]);
  // Every bad field at once, not one per round trip (docs/style.md habit 9).
  const many = await t.call('POST', '/api/interfaces', { body: body({ name: 'BAD', kind: 'x', retry: { base_s: -1 } }) });
  assertProblem(many, 400, ['body.name', 'body.kind', 'body.retry.base_s']);
  // Not JSON, wrong content type, missing fields.
  assertProblem(await t.call('POST', '/api/interfaces', { rawBody: '{"name":', headers: { 'content-type': 'application/json' } }), 400);
  assert.is((await t.call('POST', '/api/interfaces', { rawBody: 'name=x', headers: { 'content-type': 'text/plain' } })).status, 415);
  assertProblem(await t.call('POST', '/api/interfaces', { body: {} }), 400, ['body.name', 'body.kind']);
  assert.equal((await t.call('GET', '/api/interfaces')).body.items, [], 'nothing was created');
});

test('names are unique: create and rename onto a taken name answer 409', async () => {
  const a = await createSim(t.call, 'taken');
  await createSim(t.call, 'other');
  assertProblem(await t.call('POST', '/api/interfaces', { body: body({ name: 'taken' }) }), 409, [], /already exists/);
  const put = await t.call('PUT', '/api/interfaces/other', { body: { name: 'taken', settings: {}, transforms: { inbound: [], outbound: [] }, retry: {} } });
  assertProblem(put, 409, [], /already exists/);
  assert.is((await t.call('GET', '/api/interfaces/other')).body.name, 'other', 'the refused rename changed nothing');
  // Renaming to its own name is no clash.
  const same = await t.call('PUT', `/api/interfaces/${a.id}`, { body: { name: 'taken', settings: { mtu: 100 }, transforms: { inbound: [], outbound: [] }, retry: {} } });
  assert.is(same.status, 200, same.text);
  assert.is(same.body.settings.mtu, 100);
});

test('PUT needs every writable field (400 naming the missing one) and cannot flip state', async () => {
  const full = { name: 'put-me', settings: {}, transforms: { inbound: [], outbound: [] }, retry: {} };
  await createSim(t.call, 'put-me', { device: 'sim://put', transforms: { inbound: [], outbound: [{ type: 'truncate', max_bytes: 50 }] } });
  for (const field of ['name', 'settings', 'transforms', 'retry']) {
    const { [field]: _gone, ...partial } = full as Record<string, unknown>;
    assertProblem(await t.call('PUT', '/api/interfaces/put-me', { body: partial }), 400, [`body.${field}`]);
  }
  // Read-only fields that differ from the stored ones are refused, each named (issue 14).
  for (const [extra, path] of [[{ enabled: false }, 'body.enabled'], [{ device: null }, 'body.device'], [{ kind: 'sms' }, 'body.kind']] as const) {
    assertProblem(await t.call('PUT', '/api/interfaces/put-me', { body: { ...full, ...extra } }), 400, [path]);
  }
  assertProblem(await t.call('PUT', '/api/interfaces/put-me', { body: { ...full, colour: 'red' } }), 400, ['body']);
  const after = (await t.call('GET', '/api/interfaces/put-me')).body;
  assert.is(after.enabled, true);
  assert.is(after.device, 'sim://put');
  assert.equal(after.transforms.outbound, [{ type: 'truncate', max_bytes: 50 }], 'refused PUTs changed nothing');
  // Invalid settings for the interface's own kind.
  assertProblem(await t.call('PUT', '/api/interfaces/put-me', { body: { ...full, settings: { mtu: 0 } } }), 400, ['body.settings.mtu']);
});

test('GET -> edit -> PUT: the body GET answers is accepted; read-only fields must equal the stored ones', async () => {
  await createSim(t.call, 'trip', { device: 'sim://trip', settings: { mtu: 120 }, transforms: { inbound: [], outbound: [{ type: 'truncate', max_bytes: 50 }] } });
  const got = (await t.call('GET', '/api/interfaces/trip')).body;
  assert.ok('reported' in got && 'state' in got, 'GET {id} answers state and reported');
  // What `curl ... | jq '.name = "trip-2" | .settings.mtu = 99' | curl -X PUT ...` sends.
  const put = await t.call('PUT', `/api/interfaces/${got.id}`, { body: { ...got, name: 'trip-2', settings: { ...got.settings, mtu: 99 } } });
  assert.is(put.status, 200, put.text);
  assert.is(put.body.name, 'trip-2');
  assert.is(put.body.settings.mtu, 99);
  assert.equal(put.body.transforms, got.transforms);
  assert.is(put.body.device, 'sim://trip');
  // state and reported describe the moment of the GET: whatever they hold is ignored.
  const again = await t.call('PUT', '/api/interfaces/trip-2', { body: { ...put.body, state: { connected: false }, reported: { sent: 1e6 } } });
  assert.is(again.status, 200, again.text);
  // Stored read-only fields that differ: 400 naming each, and saying where that state moves.
  const moved = await t.call('PUT', '/api/interfaces/trip-2', {
    body: { ...again.body, id: 'ifc_01M7Z549TJYPE8EFFRTHXNMDB9', kind: 'sms', enabled: false, device: null, created_at: '2020-01-01T00:00:00.000Z' },
  });
  assertProblem(moved, 400, ['body.id', 'body.kind', 'body.enabled', 'body.device', 'body.created_at']);
  const message = (p: string) => moved.body.errors.find((e: any) => e.path === p).message;
  assert.match(message('body.enabled'), /read-only.*\/disable/);
  assert.match(message('body.device'), /read-only.*\/unbind/);
  // A body read before another change: its updated_at is stale.
  await t.call('PUT', '/api/interfaces/trip-2', { body: { ...again.body, settings: { ...again.body.settings, mtu: 98 } } });
  const stale = await t.call('PUT', '/api/interfaces/trip-2', { body: { ...again.body, settings: { ...again.body.settings, mtu: 97 } } });
  assertProblem(stale, 400, ['body.updated_at'], /changed since/);
  const after = (await t.call('GET', '/api/interfaces/trip-2')).body;
  assert.equal([after.enabled, after.device, after.kind, after.settings.mtu], [true, 'sim://trip', 'sim', 98], 'refused PUTs changed nothing');
});

test('PATCH takes a JSON merge patch (RFC 7396): members given replace, null removes, the rest stays', async () => {
  const made = await createSim(t.call, 'patchy', { device: 'sim://patchy', settings: { mtu: 120, latency_ms: 5 }, retry: { max_attempts: 3 } });
  const merge = { 'content-type': 'application/merge-patch+json' };
  const p = await t.call('PATCH', '/api/interfaces/patchy', { body: { settings: { mtu: 80 }, retry: { base_s: 7 } }, headers: merge });
  assert.is(p.status, 200, p.text);
  assert.equal([p.body.settings.mtu, p.body.settings.latency_ms, p.body.retry.base_s, p.body.retry.max_attempts], [80, 5, 7, 3]);
  assert.equal([p.body.name, p.body.device, p.body.enabled], ['patchy', 'sim://patchy', true]);
  // null removes a member: the setting falls back to its default. Plain application/json works too.
  const removed = await t.call('PATCH', `/api/interfaces/${made.id}`, { body: { settings: { mtu: null }, name: 'patchy-2' } });
  assert.is(removed.status, 200, removed.text);
  assert.equal([removed.body.settings.mtu, removed.body.settings.latency_ms, removed.body.name], [230, 5, 'patchy-2']);
  // Read-only members, bad values (named as in a PUT), a patch that is not an object, JSON Patch.
  assertProblem(await t.call('PATCH', '/api/interfaces/patchy-2', { body: { enabled: false, device: null }, headers: merge }), 400, ['body.enabled', 'body.device']);
  assertProblem(await t.call('PATCH', '/api/interfaces/patchy-2', { body: { settings: { mtu: 0 }, retry: { max_attempts: 0 } }, headers: merge }), 400, ['body.settings.mtu', 'body.retry.max_attempts']);
  assertProblem(await t.call('PATCH', '/api/interfaces/patchy-2', { body: { name: null }, headers: merge }), 400, ['body.name']);
  assertProblem(await t.call('PATCH', '/api/interfaces/patchy-2', { body: [{ op: 'replace', path: '/name', value: 'x' }], headers: merge }), 400, ['body']);
  const jsonPatch = await t.call('PATCH', '/api/interfaces/patchy-2', { body: [{ op: 'replace', path: '/name', value: 'x' }], headers: { 'content-type': 'application/json-patch+json' } });
  assertProblem(jsonPatch, 415, [], /merge-patch\+json/);
  assertProblem(await t.call('PATCH', '/api/interfaces/nope', { body: { name: 'x' } }), 404);
  const after = (await t.call('GET', '/api/interfaces/patchy-2')).body;
  assert.equal([after.enabled, after.device, after.settings.mtu], [true, 'sim://patchy', 230], 'refused patches changed nothing');
});

test('bind needs a valid port value; unknown fields are refused', async () => {
  await createSim(t.call, 'binder');
  assertProblem(await t.call('POST', '/api/interfaces/binder/bind', { body: {} }), 400, ['body.device']);
  assertProblem(await t.call('POST', '/api/interfaces/binder/bind', { body: { device: 'tcp://' } }), 400, ['body.device']);
  assertProblem(await t.call('POST', '/api/interfaces/binder/bind', { body: { device: null } }), 400, ['body.device']);
  assertProblem(await t.call('POST', '/api/interfaces/binder/bind', { body: { device: 'sim://ok', extra: 1 } }), 400, ['body']);
  assert.is((await t.call('GET', '/api/interfaces/binder')).body.device, null);
  // A kind without a driver binds and says so: test/bridge/engine/core.test.ts (every kind has one now).
});

test('interfaces are found by id or name; rules and deliveries refuse unknown interfaces with 400', async () => {
  const named = await createSim(t.call, 'by-name');
  assert.is((await t.call('GET', `/api/interfaces/${named.id}`)).body.name, 'by-name');
  assert.is((await t.call('GET', '/api/interfaces/by-name')).body.id, named.id);
  await createRule(t.call, 'names-it', { match: { interfaces: ['by-name'] } });
  assertProblem(await t.call('GET', '/api/deliveries?interface=ghost'), 400, ['query.interface']);
  assertProblem(await t.call('GET', '/api/messages?interface=ghost'), 400, ['query.interface']);
  // health lists every interface with its counters and queue depth.
  const health = (await t.call('GET', '/api/interfaces/health')).body.items;
  const h = health.find((x: any) => x.id === named.id);
  assert.equal({ enabled: h.enabled, bound: h.bound, connected: h.connected, queue_depth: h.queue_depth, counters: h.counters },
    { enabled: true, bound: false, connected: false, queue_depth: 0, counters: { sent: 0, failed: 0, received: 0, duplicates: 0 } });
});

test.run();
