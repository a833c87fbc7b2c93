import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { startTestHub, type TestHub } from '../helper.ts';

// GET /api/positions on the hub, on events stored as the ingest stores them: any key of the
// tenant reads it, the interface's name comes from the bridge's last hello, the query is
// checked, and the GeoJSON form carries the same items.

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
let h: TestHub;
let viewer = '';
let n = 0;

async function report(bridge: string, from: string, s: number, lat: number, lon: number): Promise<void> {
  const event_id = `evt_${++n}`;
  const payload_b64 = Buffer.from(JSON.stringify({ latitude: lat, longitude: lon, time: at(s - 5) })).toString('base64');
  const body = JSON.stringify({ seq: n, id: `msg_${n}`, direction: 'inbound', interface_id: 'ifc_1', from, to: '^all', kind: 'position', payload_b64, created_at: at(s), event_id, ts: at(s) });
  assert.ok(await h.hub.store.insertEvent('position', { tenant_id: 'default', event_id, bridge_id: bridge, ts: at(s), body, received_at: at(s) }));
}

test.before(async () => {
  h = await startTestHub({ clock: new FakeClock(T0 + 3_600_000) });
  viewer = (await h.hub.keys.create('default', 'map', 'viewer')).key;
  await h.hub.store.recordHello('default', 'brg-a', { version: '1', interfaces: [{ id: 'ifc_1', name: 'mesh', kind: 'x' }], at: at(0) });
  await report('brg-a', '!00000001', 10, 46.5, 7.25);
  await report('brg-a', '!00000001', 20, 46.51, 7.26);
  await report('brg-b', '!00000001', 15, 46.52, 7.27);
});
test.after(async () => {
  await h.stop();
});

test('a viewer key reads the newest position per node and bridge, with its age from the fix and the interface\'s name', async () => {
  const r = await h.call('GET', '/api/positions', { key: viewer });
  assert.is(r.status, 200, r.text);
  assert.equal(r.body.items, [
    { bridge_id: 'brg-a', node_id: '!00000001', latitude: 46.51, longitude: 7.26, altitude_m: null, fix_time: at(15), age_s: 3585, heard_at: at(20), interface_id: 'ifc_1', interface_name: 'mesh' },
    { bridge_id: 'brg-b', node_id: '!00000001', latitude: 46.52, longitude: 7.27, altitude_m: null, fix_time: at(10), age_s: 3590, heard_at: at(15), interface_id: 'ifc_1', interface_name: null },
  ]);
});

test('GeoJSON: one Point per node and bridge, longitude first, the other fields as properties', async () => {
  const r = await h.call('GET', '/api/positions/geojson?bridge=brg-a', { key: viewer });
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, {
    type: 'FeatureCollection',
    features: [{ type: 'Feature', id: 'brg-a/!00000001', geometry: { type: 'Point', coordinates: [7.26, 46.51] }, properties: { bridge_id: 'brg-a', node_id: '!00000001', fix_time: at(15), age_s: 3585, heard_at: at(20), interface_id: 'ifc_1', interface_name: 'mesh' } }],
  });
});

test('the query is checked: an unknown parameter, a bridge id no topic can carry, a limit out of range', async () => {
  for (const q of ['?colour=red', '?bridge=a/b', '?limit=0', '?limit=5001']) {
    const r = await h.call('GET', `/api/positions${q}`, { key: viewer });
    assert.is(r.status, 400, `${q}: ${r.text}`);
  }
  assert.is((await h.call('GET', '/api/positions?limit=1', { key: viewer })).body.items.length, 1);
});

test.run();
