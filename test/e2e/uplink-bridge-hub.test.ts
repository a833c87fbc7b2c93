import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';
import { startTestHub, type TestHub } from '../hub/helper.ts';
import { eventually, type PrivateBroker, privateBroker } from '../hub/mosquitto.ts';

// Issue 7 acceptance, through the whole bridge: messages that enter the bridge's router while
// the broker is down wait in the outbox, and reach the hub once each when it is back.

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

test('hub section written by API: the bridge reports; broker down for 200 messages; the hub stores all 200, each once', async () => {
  bridge = await startTestBridge();
  const w = await bridge.call('POST', '/api/config/module', { body: { section: 'hub', settings: { enabled: true, mqtt_url: broker.url, tenant } } });
  assert.is(w.status, 200, w.text);
  await bridge.call('POST', '/api/interfaces', { body: { name: 'mesh', kind: 'sim', device: 'sim://uplink-mesh' } });
  await eventually(() => bridge.bridge.services.uplink.state() === 'connected', 'bridge uplink connected');
  const bridgeId = bridge.bridge.services.uplink.bridgeId();
  await eventually(async () => {
    const owner = await hub.hub.keys.create(tenant, 'check', 'viewer');
    const devices = (await hub.call('GET', '/api/devices', { key: owner.key })).body.items as Array<{ id: string; online: boolean }>;
    return devices.some((d) => d.online);
  }, 'the hub lists the bridge online');

  await broker.stop();
  for (let i = 0; i < 200; i++) {
    const r = await bridge.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!00000001', text: `reading ${i}`, interface: 'mesh' } });
    assert.is(r.status, 202);
  }
  assert.is(await hub.hub.store.countEvents(tenant, 'message'), 0, 'nothing reached the hub while the broker was down');
  await broker.start();
  await eventually(async () => (await hub.hub.store.countEvents(tenant, 'message')) === 200, 'the hub has 200 messages', 30_000);
  await new Promise((r) => setTimeout(r, 500));
  assert.is(await hub.hub.store.countEvents(tenant, 'message'), 200, 'each stored once');
  assert.match(bridgeId, /^brg_/);
});

test.run();
