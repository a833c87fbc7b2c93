import { connect, type MqttClient } from 'mqtt';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mqttClientOptions, parseMqttUrl } from '../../../src/hubwire/mqtt-options.ts';
import { startTestHub, type TestHub } from '../helper.ts';
import { eventually } from '../mosquitto.ts';

// Ingest against the machine's Mosquitto (TEST_MQTT_URL), with tenants unique to this run.
// The hub subscribes without a share group here, so other test files using the same broker
// cannot take our messages; its session expires when it disconnects (nothing left behind).

const MQTT_URL = process.env.TEST_MQTT_URL ?? 'mqtt://127.0.0.1:1883';
const run = Math.random().toString(36).slice(2, 10);
const tenant = `ing${run}`;
let hub: TestHub;
let client: MqttClient;

const rejected = (reason: string) => hub.hub.metrics.render().match(new RegExp(`fieldbridge_hub_ingest_rejected_total\\{reason="${reason}"\\} (\\d+)`))?.[1] ?? '0';
const publish = (topic: string, payload: string | Buffer, retain = false) => client.publishAsync(topic, payload, { qos: 1, retain });
const topic = (kind: string, bridge = 'brg-1', t = tenant) => `fieldbridge/v1/${t}/${bridge}/${kind}`;

test.before(async () => {
  hub = await startTestHub({ mqtt: { url: MQTT_URL, shared: false, acceptUnenrolled: true, clientId: `hub-ingest-${run}`, sessionExpiryS: 0 } });
  await hub.hub.store.ensureTenant(tenant, new Date().toISOString());
  await eventually(() => hub.hub.ingest!.state() === 'connected', 'hub subscribed');
  client = connect(mqttClientOptions(parseMqttUrl(MQTT_URL), { clientId: `pub-${run}`, reconnectPeriod: 0 }));
  await new Promise((r) => client.once('connect', r));
});

test.after(async () => {
  // Clear the retained messages this run left on the shared broker.
  for (const bridge of ['brg-1', 'brg-2']) for (const kind of ['hello', 'status']) await publish(topic(kind, bridge), '', true);
  await client.endAsync();
  await hub.stop();
});

test('events are stored once per event_id, whatever the broker redelivers', async () => {
  const body = JSON.stringify({ event_id: 'evt_1', ts: '2026-03-01T10:00:00+01:00', text: 'hi' });
  await publish(topic('message'), body);
  await publish(topic('message'), body);
  await publish(topic('telemetry'), JSON.stringify({ event_id: 'evt_1', ts: '2026-03-01T09:00:00Z', battery: 91 }));
  await eventually(async () => (await hub.hub.store.countEvents(tenant, 'telemetry')) === 1, 'telemetry stored');
  await eventually(() => /fieldbridge_hub_ingest_total\{kind="message",result="duplicate"\} 1/.test(hub.hub.metrics.render()), 'duplicate counted');
  const [m] = await hub.hub.store.listEvents(tenant, 'message');
  assert.is(m.ts, '2026-03-01T09:00:00.000Z', 'timestamps normalised to UTC');
  assert.is(m.bridge_id, 'brg-1');
  assert.is(await hub.hub.store.countEvents(tenant, 'message'), 1);
});

test('hello and status make a device; a late will of an older boot is ignored', async () => {
  await publish(topic('hello', 'brg-2'), JSON.stringify({ version: '1.0.0', interfaces: [{ name: 'lora0' }], ts: '2026-01-01T00:00:00Z' }), true);
  await publish(topic('status', 'brg-2'), JSON.stringify({ state: 'online', session: 5, ts: '2026-01-01T00:00:10Z' }), true);
  await publish(topic('status', 'brg-2'), JSON.stringify({ state: 'offline', session: 4, ts: '2026-01-01T00:00:01Z' }), true);
  await publish(topic('status', 'brg-2'), '', true);
  const key = (await hub.hub.keys.create(tenant, 'k', 'viewer')).key;
  await eventually(() => /fieldbridge_hub_ingest_total\{kind="status",result="ignored"\} 1/.test(hub.hub.metrics.render()), 'stale will ignored');
  const items = (await hub.call('GET', '/api/devices', { key })).body.items;
  const d = items.find((x: { bridge_id: string }) => x.bridge_id === 'brg-2');
  assert.equal({ online: d.online, session: d.session, version: d.version, interfaces: d.interfaces }, { online: true, session: 5, version: '1.0.0', interfaces: [{ name: 'lora0' }] });
});

test('bad input of every kind is dropped and counted by reason; the hub carries on', async () => {
  // Deltas: the machine's broker may carry other runs' traffic, which this hub sees too.
  const reasons = ['unknown_tenant', 'bad_json', 'bad_payload', 'too_large', 'unknown_kind', 'bad_topic'];
  const before = Object.fromEntries(reasons.map((r) => [r, Number(rejected(r))]));
  const delta = (r: string) => Number(rejected(r)) - before[r];
  await publish(topic('message'), '{not json');
  await publish(topic('message'), JSON.stringify({ ts: '2026-01-01T00:00:00Z' }));
  await publish(topic('position'), JSON.stringify({ event_id: 'evt_x', ts: 'yesterday' }));
  await publish(topic('status'), JSON.stringify({ state: 'sleeping', session: 1, ts: '2026-01-01T00:00:00Z' }));
  await publish(topic('hello'), JSON.stringify([1, 2]));
  await publish(topic('message'), Buffer.alloc(300 * 1024, 0x20));
  await publish(topic('gossip'), JSON.stringify({ event_id: 'evt_g', ts: '2026-01-01T00:00:00Z' }));
  await publish(`fieldbridge/v1/${tenant}/brg-1/message/extra`, JSON.stringify({ event_id: 'evt_e', ts: '2026-01-01T00:00:00Z' }));
  await publish(topic('message', 'brg-1', `nobody${run}`), JSON.stringify({ event_id: 'evt_n', ts: '2026-01-01T00:00:00Z' }));
  await eventually(() => delta('unknown_tenant') >= 1, 'unknown tenant counted');
  assert.is(delta('bad_json'), 1);
  assert.is(delta('bad_payload'), 4);
  assert.is(delta('too_large'), 1);
  assert.is(delta('unknown_kind'), 1);
  assert.is(delta('bad_topic'), 1);
  assert.ok(hub.logs.some((l) => l.includes('hub_ingest_rejected') && l.includes('bad_payload')));
  assert.is(await hub.hub.store.getTenant(`nobody${run}`), undefined, 'no tenant is created by publishing');
  await publish(topic('message'), JSON.stringify({ event_id: 'evt_after', ts: '2026-01-02T00:00:00Z' }));
  await eventually(async () => (await hub.hub.store.countEvents(tenant, 'message')) === 2, 'still ingesting');
  assert.is((await hub.call('GET', '/api/health', { key: null })).body.mqtt, 'connected');
});

test('a tenant marked for deletion takes no new data', async () => {
  const t = `del${run}`;
  await hub.hub.store.ensureTenant(t, new Date().toISOString());
  await hub.hub.store.markTenantDeleted(t, new Date().toISOString(), new Date(Date.now() + 1000).toISOString());
  await publish(topic('message', 'brg-1', t), JSON.stringify({ event_id: 'evt_d', ts: '2026-01-01T00:00:00Z' }));
  await eventually(() => rejected('tenant_deleted') === '1', 'counted');
  assert.is(await hub.hub.store.countEvents(t, 'message'), 0);
});

// Issue 15 review item 8: close() let go of the client before the last batch was written, so
// that batch's acks never went out (the bridge sent it all again after the timeout).
test('closing writes what has arrived and still sends its acks', async () => {
  const t = `cls${run}`;
  const closing = await startTestHub({ mqtt: { url: MQTT_URL, shared: false, acceptUnenrolled: true, clientId: `hub-close-${run}`, sessionExpiryS: 0, flushDelayMs: 400 } });
  const acks: Array<{ upto: number }> = [];
  const listener = connect(mqttClientOptions(parseMqttUrl(MQTT_URL), { clientId: `acks-${run}`, reconnectPeriod: 0 }));
  try {
    await closing.hub.store.ensureTenant(t, new Date().toISOString());
    await eventually(() => closing.hub.ingest!.state() === 'connected', 'second hub subscribed');
    // It may have connected while the hub was coming up: 'connect' is not told twice.
    if (!listener.connected) await new Promise((r) => listener.once('connect', r));
    await listener.subscribeAsync(topic('ack', 'brg-c', t), { qos: 1 });
    listener.on('message', (_t, payload) => acks.push(JSON.parse(payload.toString())));
    await publish(topic('message', 'brg-c', t), JSON.stringify({ seq: 1, event_id: 'evt_c1', ts: '2026-01-01T00:00:00Z' }));
    // Taken, and waiting the flush delay when the hub closes.
    await new Promise((r) => setTimeout(r, 100));
    await closing.hub.ingest!.close();
    assert.is(await closing.hub.store.countEvents(t, 'message'), 1, 'written before closing');
    await eventually(() => acks.some((a) => a.upto === 1), 'its ack went out');
  } finally {
    await listener.endAsync();
    await closing.stop();
  }
});

test.run();
