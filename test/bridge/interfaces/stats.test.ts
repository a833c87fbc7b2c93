import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createRule, createSim, sendText, settle } from '../../helpers/routing.ts';

// GET /api/interfaces/{id}/stats: one endpoint for every kind, answering the link state and
// the values the kind's driver module reports (its stats schema), checked against the
// OpenAPI response schema on every answer (the test bridge validates responses).

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
});
test.after(async () => {
  await t.stop();
});

test('a sim interface reports its counters, channel, behaviour and mtu; the counters follow the traffic', async () => {
  const a = await createSim(t.call, 'stats-a', { device: 'sim://stats', settings: { mtu: 100 } });
  await createSim(t.call, 'stats-b', { device: 'sim://stats' });
  await createRule(t.call, 'stats-out', { action: 'forward', destinations: [{ interface: 'stats-a', to: '{to}' }] });
  await sendText(t.call, '!00000002', 'one');
  await sendText(t.call, '!00000002', 'two');
  await settle(20);
  const r = await t.call('GET', `/api/interfaces/${a.id}/stats`);
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, {
    id: a.id, name: 'stats-a', kind: 'sim', connected: true, phase: 'online', last_error: null,
    stats: { sent: 2, failed: 0, received: 0, channel: 'stats', behaviour: 'deliver', mtu: 100 },
  });
  const b = await t.call('GET', '/api/interfaces/stats-b/stats');
  assert.is(b.body.stats.received, 2, 'the peer on the channel heard both');
  const health = (await t.call('GET', '/api/interfaces/health')).body.items.find((h: { id: string }) => h.id === a.id);
  assert.equal(health.device, r.body.stats, 'health shows the same device values');
  const metrics = (await t.call('GET', '/metrics')).text;
  assert.ok(metrics.includes(`fieldbridge_device_value{interface="stats-a",interface_id="${a.id}",kind="sim",name="sent"} 2\n`), metrics);
  assert.match(metrics, /^fieldbridge_device_value\{interface="stats-b",interface_id="ifc_[^"]+",kind="sim",name="received"\} 2$/m);
});

test('an unbound interface answers its settings and zero counters; an unbound iridium interface its credits from the database', async () => {
  const idle = await createSim(t.call, 'stats-idle', { settings: { behaviour: 'fail' } });
  const r = await t.call('GET', `/api/interfaces/${idle.id}/stats`);
  assert.is(r.status, 200, r.text);
  assert.is(r.body.phase, 'unbound');
  assert.equal(r.body.stats, { sent: 0, failed: 0, received: 0, channel: null, behaviour: 'fail', mtu: 230 });
  const sat = await t.call('POST', '/api/interfaces', { body: { name: 'stats-sat', kind: 'iridium', settings: { credits_per_day: 3 } } });
  const s = await t.call('GET', `/api/interfaces/${sat.body.id}/stats`);
  assert.is(s.status, 200, s.text);
  assert.is(s.body.kind, 'iridium');
  assert.equal([s.body.stats.credits_today, s.body.stats.credits_left_today, s.body.stats.credits_left_this_month, s.body.stats.imei], [0, 3, null, null]);
  const one = await t.call('GET', `/api/interfaces/${sat.body.id}`);
  assert.is(one.body.reported.credits_left_today, 3, 'GET /api/interfaces/{id} shows what the device reports');
});

test('an RNode interface reports the radio values as null until the radio said them, and the derived bit rate', async () => {
  const r = await t.call('POST', '/api/interfaces', { body: { name: 'stats-lora', kind: 'rnode', settings: { preset: 'eu-868' } } });
  assert.is(r.status, 201, r.text);
  const s = await t.call('GET', '/api/interfaces/stats-lora/stats');
  assert.is(s.status, 200, s.text);
  assert.is(s.body.kind, 'rnode');
  assert.is(s.body.stats.frequency_hz, null);
  assert.is(s.body.stats.radio_on, false);
  assert.ok(s.body.stats.bitrate_bps > 0, 'bit rate from the preset');
  const legacy = await t.call('GET', '/api/routing/ifaces/stats-lora/stats');
  assert.equal({ ...legacy.body, id: undefined, name: undefined, connected: undefined, phase: undefined, last_error: undefined }, { ...s.body.stats, id: undefined, name: undefined, connected: undefined, phase: undefined, last_error: undefined }, 'the RNode route answers the same values');
});

test('bad references: unknown id 404, and the RNode route refuses a non-RNode interface with 404', async () => {
  assertProblem(await t.call('GET', '/api/interfaces/ifc_nope/stats'), 404);
  assertProblem(await t.call('GET', '/api/routing/ifaces/stats-a/stats'), 404, [], /RNode interface/);
  assertProblem(await t.call('GET', '/api/interfaces/stats-a/stats', { key: null }), 401);
});

test.run();
