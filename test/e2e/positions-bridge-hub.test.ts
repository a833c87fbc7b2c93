import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BROADCAST, encodePosition, PORT_NUM } from '../../src/bearers/meshtastic/codec/messages.ts';
import { meshtasticSimMesh } from '../../src/bearers/meshtastic/simulator/link.ts';
import type { MeshtasticMesh, RemoteNode } from '../../src/bearers/meshtastic/simulator/mesh.ts';
import type { TestBridge } from '../helpers/bridge.ts';
import { drawInLeaflet } from '../helpers/leaflet.ts';
import { createMeshInterface, keepProcessAlive, startMeshBridge, waitOnline, waitUntil } from '../helpers/meshtastic.ts';
import { startTestHub, type TestHub } from '../hub/helper.ts';
import { eventually, type PrivateBroker, privateBroker } from '../hub/mosquitto.ts';

// Positions on one map for the fleet: a bridge with a simulated Meshtastic mesh (sim://, in
// process) reports to a hub over a real Mosquitto, enrolled as an operator does it. The nodes'
// positions reach the hub over the uplink, and the hub's GET /api/positions answers the same
// last positions as the bridge's (nodes, coordinates, fix times, interface); its GeoJSON opens
// in Leaflet in headless Chromium without errors. Another tenant sees none of them.

const CHANNEL = `hubpos-${process.pid}`;
const tenant = `t${Date.now().toString(36)}`;
let broker: PrivateBroker;
let hub: TestHub;
let t: TestBridge;
let mesh: MeshtasticMesh;
let alpha: RemoteNode;
let beta: RemoteNode;
let bridgeId = '';
let viewer = '';
let release: () => void;

function sendPosition(n: RemoteNode, lat: number, lon: number, fixS: number): void {
  n.send(BROADCAST, { portnum: PORT_NUM.POSITION_APP, payload: encodePosition({ latitude_i: Math.round(lat * 1e7), longitude_i: Math.round(lon * 1e7), altitude: 420, time: fixS }) });
}

/** What both answers must agree on, by node id. */
const same = (items: Array<Record<string, unknown>>) =>
  Object.fromEntries(items.map((p) => [p.node_id, [p.latitude, p.longitude, p.altitude_m, p.fix_time, p.interface_id, p.interface_name]]));

test.before(async () => {
  release = keepProcessAlive();
  broker = await privateBroker();
  hub = await startTestHub({ mqtt: { url: broker.url, shared: false, clientId: `hub-${tenant}`, reconnectMs: 200 } });
  await hub.hub.store.ensureTenant(tenant, new Date().toISOString());
  await eventually(() => hub.hub.ingest!.state() === 'connected', 'hub subscribed');
  mesh = meshtasticSimMesh(CHANNEL);
  alpha = mesh.addRemoteNode({ num: 0x0000a1a1, long_name: 'Alpha team' });
  beta = mesh.addRemoteNode({ num: 0x0000b2b2, long_name: 'Beta team' });
  t = await startMeshBridge();
  await createMeshInterface(t, 'mesh', `sim://${CHANNEL}`);
  await waitOnline(t, 'mesh');
  const admin = await hub.hub.keys.create(tenant, 'fleet admin', 'admin');
  viewer = (await hub.hub.keys.create(tenant, 'map', 'viewer')).key;
  const enrolled = await hub.call('POST', '/api/bridges', { key: admin.key, body: { name: 'field kit' } });
  assert.is(enrolled.status, 201, enrolled.text);
  bridgeId = enrolled.body.id;
  const w = await t.call('POST', '/api/config/module', { body: { section: 'hub', settings: { enabled: true, mqtt_url: broker.url, enrollment_token: enrolled.body.token } } });
  assert.is(w.status, 200, w.text);
  await eventually(() => t.bridge.services.uplink.state() === 'connected', 'bridge uplink connected');
  mesh.announce(alpha);
  mesh.announce(beta);
  await waitUntil('both nodes known by name', async () => (await t.call('GET', '/api/nodes')).body.items.filter((n: { long_name: string }) => /team/.test(n.long_name)).length === 2);
});

test.after(async () => {
  await t?.stop();
  await hub?.stop();
  await broker?.dispose();
  release?.();
});

test('the bridge\'s and the hub\'s GET /api/positions answer the same last positions once the uplink delivered them', async () => {
  const fixS = Math.floor(Date.now() / 1000) - 120;
  sendPosition(alpha, 46.5, 7.25, fixS);
  sendPosition(beta, 46.6, 7.35, fixS + 10);
  // Alpha moves: the newer fix is the one both answer.
  await waitUntil('the first fixes at the bridge', async () => (await t.call('GET', '/api/positions')).body.items.length === 2);
  sendPosition(alpha, 46.51, 7.26, fixS + 60);
  await waitUntil('alpha\'s newest fix at the bridge', async () => (await t.call('GET', '/api/positions')).body.items.some((p: { latitude: number }) => p.latitude === 46.51));
  const atHub = await waitUntil('the newest fixes at the hub', async () => {
    const r = await hub.call('GET', '/api/positions', { key: viewer });
    assert.is(r.status, 200, r.text);
    return r.body.items.length === 2 && r.body.items.some((p: { latitude: number }) => p.latitude === 46.51) && r.body.items;
  }, 20_000);
  const atBridge = (await t.call('GET', '/api/positions')).body.items;
  assert.equal(same(atHub), same(atBridge));
  assert.equal(same(atHub)['!0000a1a1'], [46.51, 7.26, 420, new Date((fixS + 60) * 1000).toISOString(), atBridge[0].interface_id, 'mesh']);
  assert.ok(atHub.every((p: { bridge_id: string }) => p.bridge_id === bridgeId), 'under the id the hub gave the bridge');
  for (const p of atHub) assert.ok(p.age_s >= 50 && p.age_s < 600, `age ${p.age_s} s from the fix`);

  const one = await hub.call('GET', `/api/positions?bridge=${bridgeId}&node=${encodeURIComponent('!0000b2b2')}`, { key: viewer });
  assert.equal(one.body.items.map((p: { latitude: number }) => p.latitude), [46.6]);
  assert.equal((await hub.call('GET', '/api/positions?bridge=elsewhere', { key: viewer })).body.items, []);
  const stranger = await hub.hub.keys.create(`${tenant}x`, 'other customer', 'owner');
  assert.equal((await hub.call('GET', '/api/positions', { key: stranger.key })).body.items, [], 'another tenant sees none');
  assert.is((await hub.call('GET', '/api/positions', { key: null })).status, 401);
});

test('the hub\'s GeoJSON opens in Leaflet in headless Chromium without errors: one marker per node, where the bridge puts it', async () => {
  const fc = await hub.call('GET', '/api/positions/geojson', { key: viewer });
  assert.is(fc.status, 200, fc.text);
  const bridgeFc = (await t.call('GET', '/api/positions/geojson')).body;
  const coords = (f: { features: Array<{ geometry: { coordinates: number[] }; properties: { node_id: string } }> }) => Object.fromEntries(f.features.map((x) => [x.properties.node_id, x.geometry.coordinates]));
  assert.equal(coords(fc.body), coords(bridgeFc));
  assert.equal(fc.body.features.map((f: { id: string }) => f.id).sort(), [`${bridgeId}/!0000a1a1`, `${bridgeId}/!0000b2b2`]);
  const drawn = await drawInLeaflet([fc.body]);
  assert.equal({ markers: drawn.markers, lines: drawn.lines }, { markers: 2, lines: 0 });
  assert.equal(drawn.errors, []);
});

test.run();
