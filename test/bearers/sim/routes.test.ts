import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { waitUntil } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createRule, createSim, sendText } from '../../helpers/routing.ts';

// POST /api/sim/{id}/link (src/bearers/sim/routes.ts) over HTTP on an in-process bridge: a
// bound sim interface goes offline and comes back, and the dispatcher and the health endpoint
// see it as they see a real radio that went away. Responses are checked against the OpenAPI
// schema by the test bridge.

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
});
test.after(async () => {
  await t.stop();
});

const health = async (name: string) => (await t.call('GET', '/api/interfaces/health')).body.items.find((h: { name: string }) => h.name === name);
const delivery = async (id: string) => (await t.call('GET', `/api/deliveries/${id}`)).body;
const untilState = (id: string, state: string) =>
  waitUntil(`delivery ${id} to be ${state}`, async () => {
    const d = await delivery(id);
    return d.state === state ? d : undefined;
  }, 5000);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const heardOn = async (name: string) => (await t.call('GET', `/api/messages?interface=${name}&direction=inbound`)).body.items as Array<{ text: string }>;
/** Rules match their own address only, so the tests' rules never take each other's sends. */
const forwardTo = (iface: string, address: string) =>
  createRule(t.call, `to-${iface}`, { match: { direction: 'outbound', to: [address] }, action: 'forward', destinations: [{ interface: iface, to: '{to}' }] });

test('down and up again: health shows connected false then true; a delivery waits, spending no attempt, and goes out when the link is up', async () => {
  const a = await createSim(t.call, 'link-a', { device: 'sim://link' });
  await createSim(t.call, 'link-b', { device: 'sim://link' });
  await forwardTo('link-a', '!0000000a');
  assert.is((await health('link-a')).connected, true);

  const down = await t.call('POST', `/api/sim/${a.id}/link`, { body: { up: false } });
  assert.is(down.status, 200, down.text);
  assert.equal({ ...down.body, last_error: undefined }, { id: a.id, name: 'link-a', up: false, connected: false, phase: 'closed', last_error: undefined });
  assert.match(down.body.last_error, /^ERR_SIM_OFFLINE: /);
  const offline = await health('link-a');
  assert.is(offline.connected, false);
  assert.match(offline.last_error, /^ERR_SIM_OFFLINE: /);
  assert.is((await t.call('GET', `/api/interfaces/${a.id}`)).body.device, 'sim://link', 'the binding stays');

  const sent = await sendText(t.call, '!0000000a', 'while down');
  await pause(200);
  const waiting = await delivery(sent.deliveries[0].id);
  assert.equal([waiting.state, waiting.attempts], ['held', 0]);

  const up = await t.call('POST', '/api/sim/link-a/link', { body: { up: true } });
  assert.is(up.status, 200, up.text);
  assert.equal(up.body, { id: a.id, name: 'link-a', up: true, connected: true, phase: 'online', last_error: null });
  assert.is((await health('link-a')).connected, true);
  const done = await untilState(sent.deliveries[0].id, 'delivered');
  assert.is(done.attempts, 1);
  assert.ok((await heardOn('link-b')).some((m) => m.text === 'while down'), 'the peer heard it once the link was up');
});

test('never_ack sends stay open side by side; taking the link down ends them as retryable ERR_SIM_OFFLINE failures, then held', async () => {
  await createSim(t.call, 'link-silent', { device: 'sim://silent', settings: { behaviour: 'never_ack' }, retry: { base_s: 3600, cap_s: 3600 } });
  await createSim(t.call, 'link-ear', { device: 'sim://silent' });
  await forwardTo('link-silent', '!0000000c');
  const ids = [];
  for (const text of ['one', 'two', 'three']) ids.push((await sendText(t.call, '!0000000c', text)).deliveries[0].id);
  // Every frame goes out although none is acknowledged: the bearer takes several sends at once.
  await waitUntil('the ear to hear all three', async () => (await heardOn('link-ear')).length === 3 || undefined, 5000);
  for (const id of ids) assert.is((await delivery(id)).state, 'sending');

  const down = await t.call('POST', '/api/sim/link-silent/link', { body: { up: false } });
  assert.is(down.status, 200, down.text);
  for (const id of ids) {
    const d = await untilState(id, 'held');
    assert.is(d.attempts, 1);
    assert.match(d.last_error, /^ERR_SIM_OFFLINE: /);
  }
});

test('unknown or non-sim interface: 404; not running (unbound, disabled): 409 naming what it is', async () => {
  assertProblem(await t.call('POST', '/api/sim/ifc_nope/link', { body: { up: false } }), 404, [], /interface 'ifc_nope' does not exist/);
  await t.call('POST', '/api/interfaces', { body: { name: 'link-lora', kind: 'rnode', settings: { preset: 'eu-868' } } });
  assertProblem(await t.call('POST', '/api/sim/link-lora/link', { body: { up: false } }), 404);

  await createSim(t.call, 'link-idle');
  const idle = await t.call('POST', '/api/sim/link-idle/link', { body: { up: false } });
  assertProblem(idle, 409, [], /sim interface 'link-idle' must be running \(enabled and bound to sim:\/\/<channel>\) to set its link; it is unbound/);
  assert.match(idle.body.type, /\/sim-not-running$/);

  await createSim(t.call, 'link-off', { device: 'sim://link' });
  assert.is((await t.call('POST', '/api/interfaces/link-off/disable')).status, 200);
  assertProblem(await t.call('POST', '/api/sim/link-off/link', { body: { up: true } }), 409, [], /it is disabled \(device sim:\/\/link\)/);
  const enabled = await t.call('POST', '/api/interfaces/link-off/enable');
  assert.is(enabled.status, 200);
  assert.is((await t.call('POST', '/api/sim/link-off/link', { body: { up: true } })).status, 200, 'running again once enabled');
});

test('a bad body is a 400 naming body.up', async () => {
  await createSim(t.call, 'link-body', { device: 'sim://link' });
  assertProblem(await t.call('POST', '/api/sim/link-body/link', { body: { up: 'no' } }), 400, ['body.up']);
  assertProblem(await t.call('POST', '/api/sim/link-body/link', { body: {} }), 400, ['body.up']);
  assertProblem(await t.call('POST', '/api/sim/link-body/link', { body: { up: false, down: true } }), 400);
});

test('roles: no key 401, a viewer key 403; an admin key may', async () => {
  await createSim(t.call, 'link-roles', { device: 'sim://link' });
  assertProblem(await t.call('POST', '/api/sim/link-roles/link', { key: null, body: { up: false } }), 401);
  const viewer = await t.call('POST', '/api/auth/keys', { body: { label: 'ro', role: 'viewer' } });
  assert.is(viewer.status, 201, viewer.text);
  assertProblem(await t.call('POST', '/api/sim/link-roles/link', { key: viewer.body.key, body: { up: false } }), 403, [], /viewer/);
  assert.is((await health('link-roles')).connected, true, 'nothing changed');
  const admin = await t.call('POST', '/api/auth/keys', { body: { label: 'ops', role: 'admin' } });
  const r = await t.call('POST', '/api/sim/link-roles/link', { key: admin.body.key, body: { up: false } });
  assert.is(r.status, 200, r.text);
  assert.is((await health('link-roles')).connected, false);
});

test.run();
