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
  for (const extra of [{ enabled: false }, { device: null }, { kind: 'sms' }]) {
    assertProblem(await t.call('PUT', '/api/interfaces/put-me', { body: { ...full, ...extra } }), 400, ['body']);
  }
  const after = (await t.call('GET', '/api/interfaces/put-me')).body;
  assert.is(after.enabled, true);
  assert.is(after.device, 'sim://put');
  assert.equal(after.transforms.outbound, [{ type: 'truncate', max_bytes: 50 }], 'refused PUTs changed nothing');
  // Invalid settings for the interface's own kind.
  assertProblem(await t.call('PUT', '/api/interfaces/put-me', { body: { ...full, settings: { mtu: 0 } } }), 400, ['body.settings.mtu']);
});

test('bind needs a valid port value; unknown fields are refused', async () => {
  await createSim(t.call, 'binder');
  assertProblem(await t.call('POST', '/api/interfaces/binder/bind', { body: {} }), 400, ['body.device']);
  assertProblem(await t.call('POST', '/api/interfaces/binder/bind', { body: { device: 'tcp://' } }), 400, ['body.device']);
  assertProblem(await t.call('POST', '/api/interfaces/binder/bind', { body: { device: null } }), 400, ['body.device']);
  assertProblem(await t.call('POST', '/api/interfaces/binder/bind', { body: { device: 'sim://ok', extra: 1 } }), 400, ['body']);
  assert.is((await t.call('GET', '/api/interfaces/binder')).body.device, null);
  // A kind without a driver in this release binds, and says so in its state instead of pretending.
  const sat = await t.call('POST', '/api/interfaces', { body: { name: 'sat-0', kind: 'iridium', settings: {} } });
  assert.is(sat.status, 201, sat.text);
  const bound = await t.call('POST', '/api/interfaces/sat-0/bind', { body: { device: '/dev/serial/by-id/usb-modem' } });
  assert.is(bound.status, 200, bound.text);
  assert.is(bound.body.state.connected, false);
  assert.match(bound.body.state.last_error, /no driver/);
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
