import { DatabaseSync } from 'node:sqlite';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';
import { startTestHub, type TestHub } from '../hub/helper.ts';
import { eventually, type PrivateBroker, privateBroker } from '../hub/mosquitto.ts';

// Issue 7 acceptance, through the whole bridge: messages that enter the bridge's router while
// the broker is down wait in the outbox, and reach the hub once each when it is back. The bridge
// is enrolled as an operator does it (issue 15 item 3): POST /api/bridges on the hub, the token
// into the bridge's hub section; the hub here takes only enrolled bridges' signed events.

let broker: PrivateBroker;
let hub: TestHub;
let bridge: TestBridge;
const tenant = `t${Date.now().toString(36)}`;

test.before(async () => {
  broker = await privateBroker();
  hub = await startTestHub({ mqtt: { url: broker.url, shared: false, clientId: `hub-${tenant}`, reconnectMs: 200 } });
  await hub.hub.store.ensureTenant(tenant, new Date().toISOString());
  await eventually(() => hub.hub.ingest!.state() === 'connected', 'hub subscribed');
});

test.after(async () => {
  await bridge?.stop();
  await hub?.stop();
  await broker?.dispose();
});

test('hub section written by API: the bridge enrolls and reports; broker down for 200 messages; the hub stores all 200, each once', async () => {
  bridge = await startTestBridge();
  const admin = await hub.hub.keys.create(tenant, 'fleet admin', 'admin');
  const enrolled = await hub.call('POST', '/api/bridges', { key: admin.key, body: { name: 'test bench' } });
  assert.is(enrolled.status, 201, enrolled.text);
  const { id, token } = enrolled.body as { id: string; token: string };
  const w = await bridge.call('POST', '/api/config/module', { body: { section: 'hub', settings: { enabled: true, mqtt_url: broker.url, enrollment_token: token } } });
  assert.is(w.status, 200, w.text + bridge.logs.filter((l) => l.includes('error')).join('\n'));
  await bridge.call('POST', '/api/interfaces', { body: { name: 'mesh', kind: 'sim', device: 'sim://uplink-mesh' } });
  await eventually(() => bridge.bridge.services.uplink.state() === 'connected', 'bridge uplink connected');
  assert.equal(bridge.bridge.services.uplink.identity(), { tenant, bridge_id: id, enrolled: true });
  const health = await bridge.call('GET', '/api/health', { key: null });
  assert.equal({ state: health.body.uplink.state, enrolled: health.body.uplink.enrolled }, { state: 'connected', enrolled: true });
  // The token is a secret of the configuration, the signing secret is in no configuration.
  const reader = new DatabaseSync(bridge.dbPath, { readOnly: true });
  const secret = (reader.prepare("SELECT value FROM uplink_state WHERE name = 'credentials'").get() as { value: string }).value;
  reader.close();
  const exported = await bridge.call('GET', '/api/config/export');
  const section = await bridge.call('GET', '/api/config/hub');
  for (const text of [exported.text, section.text]) {
    assert.not.ok(text.includes(token.slice(4)), 'token not shown');
    assert.not.ok(text.includes(JSON.parse(secret).secret), 'secret not shown');
  }
  assert.is(section.body.enrollment_token, '<redacted>', section.text);
  await eventually(async () => {
    const owner = await hub.hub.keys.create(tenant, 'check', 'viewer');
    const devices = (await hub.call('GET', '/api/devices', { key: owner.key })).body.items as Array<{ id: string; online: boolean }>;
    return devices.some((d) => d.online);
  }, 'the hub lists the bridge online');

  await broker.stop();
  // Ten at a time: one at a time, each would wait for its group's commit (INGEST_GROUP_MS), and
  // the uplink's reconnect backoff would grow meanwhile.
  for (let i = 0; i < 200; i += 10) {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, k) => bridge.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!00000001', text: `reading ${i + k}`, interface: 'mesh' } })));
    for (const r of answers) assert.is(r.status, 202);
  }
  assert.is(await hub.hub.store.countEvents(tenant, 'message'), 0, 'nothing reached the hub while the broker was down');
  await broker.start();
  await eventually(async () => (await hub.hub.store.countEvents(tenant, 'message')) === 200, 'the hub has 200 messages', 30_000);
  await new Promise((r) => setTimeout(r, 500));
  assert.is(await hub.hub.store.countEvents(tenant, 'message'), 200, 'each stored once');
  const stored = await hub.hub.store.listEvents(tenant, 'message', 1000);
  assert.ok(stored.every((m) => m.bridge_id === id), 'under the id the hub gave');

  // The spent token can leave the configuration (no tenant given either): the bridge keeps
  // publishing with its stored enrollment.
  const cleared = await bridge.call('POST', '/api/config/module', { body: { section: 'hub', settings: { enabled: true, mqtt_url: broker.url, enrollment_token: null } } });
  assert.is(cleared.status, 200, cleared.text);
  await eventually(() => bridge.bridge.services.uplink.state() === 'connected', 'reconnected after the change');
  assert.equal(bridge.bridge.services.uplink.identity(), { tenant, bridge_id: id, enrolled: true });
  const r = await bridge.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!00000001', text: 'after the token left', interface: 'mesh' } });
  assert.is(r.status, 202);
  await eventually(async () => (await hub.hub.store.countEvents(tenant, 'message')) === 201, 'the next message stored too');
});

test.run();
