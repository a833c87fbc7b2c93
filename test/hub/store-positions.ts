import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EventRow, HubStore } from '../../src/hub/store/store.ts';

// Part of the store conformance suite (store-conformance.ts): the last position per node and
// bridge, read from position events as the bridges' uplinks report them (the body is the
// bridge's message view, its payload_b64 the bridge's position JSON).

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

interface Fix {
  tenant?: string;
  bridge?: string;
  from: string;
  s: number;
  lat: number;
  lon: number;
  alt?: number;
  fix?: string;
  direction?: 'inbound' | 'outbound';
  id?: string;
}

let n = 0;
function positionEvent(f: Fix): EventRow {
  const event_id = f.id ?? `evt_${String(++n).padStart(4, '0')}`;
  const payload = { latitude: f.lat, longitude: f.lon, ...(f.alt !== undefined ? { altitude_m: f.alt } : {}), ...(f.fix ? { time: f.fix } : {}) };
  const view = {
    seq: n, id: `msg_${n}`, direction: f.direction ?? 'inbound', interface_id: 'ifc_mesh', from: f.from, to: '^all', channel: 0, kind: 'position', text: null,
    payload_b64: Buffer.from(JSON.stringify(payload)).toString('base64'), size: 20, rule_id: null, action: null, decision: null, meta: {}, created_at: at(f.s), event_id, ts: at(f.s),
  };
  return { tenant_id: f.tenant ?? 'pos', event_id, bridge_id: f.bridge ?? 'brg-a', ts: at(f.s), body: JSON.stringify(view), received_at: at(f.s + 1) };
}

export function registerPositionConformance(test: Test, name: string, fresh: () => Promise<HubStore>): void {
  test(`[${name}] last positions: the newest inbound fix of each node per bridge, within the tenant, with filters and a limit`, async () => {
    const store = await fresh();
    for (const t of ['pos', 'other']) await store.ensureTenant(t, at(0));
    const fixes: Fix[] = [
      // Stored out of order: the bridge's time decides, not the arrival.
      { from: '!0000a1a1', s: 20, lat: 46.51, lon: 7.26, alt: 420, fix: at(15) },
      { from: '!0000a1a1', s: 10, lat: 46.5, lon: 7.25, alt: 420, fix: at(5) },
      { from: '!0000b2b2', s: 12, lat: 46.6, lon: 7.35 },
      // What the bridge sent is not a node's position.
      { from: '!0000b2b2', s: 30, lat: 1, lon: 1, direction: 'outbound' },
      // The same node heard by a second bridge: one position per bridge.
      { bridge: 'brg-b', from: '!0000a1a1', s: 25, lat: 46.52, lon: 7.27 },
      // Another tenant's node is not seen.
      { tenant: 'other', from: '!0000c3c3', s: 40, lat: 10, lon: 10 },
    ];
    for (const f of fixes) assert.ok(await store.insertEvent('position', positionEvent(f)));
    // An event without a readable position is skipped, the rest answered.
    await store.insertEvent('position', { ...positionEvent({ from: '!0000d4d4', s: 5, lat: 0, lon: 0 }), body: JSON.stringify({ event_id: 'x', direction: 'inbound', from: '!0000d4d4', payload_b64: null }) });

    const all = await store.lastPositions('pos', {}, 100);
    assert.equal(all, [
      { bridge_id: 'brg-a', node_id: '!0000a1a1', interface_id: 'ifc_mesh', heard_at: at(20), latitude: 46.51, longitude: 7.26, altitude_m: 420, fix_time: at(15) },
      { bridge_id: 'brg-a', node_id: '!0000b2b2', interface_id: 'ifc_mesh', heard_at: at(12), latitude: 46.6, longitude: 7.35, altitude_m: null, fix_time: null },
      { bridge_id: 'brg-b', node_id: '!0000a1a1', interface_id: 'ifc_mesh', heard_at: at(25), latitude: 46.52, longitude: 7.27, altitude_m: null, fix_time: null },
    ]);
    assert.equal((await store.lastPositions('pos', { bridgeId: 'brg-b' }, 100)).map((p) => p.latitude), [46.52]);
    assert.equal((await store.lastPositions('pos', { nodeId: '!0000a1a1' }, 100)).map((p) => [p.bridge_id, p.latitude]), [['brg-a', 46.51], ['brg-b', 46.52]]);
    assert.equal((await store.lastPositions('pos', {}, 1)).map((p) => p.node_id), ['!0000a1a1']);
    assert.equal((await store.lastPositions('other', {}, 100)).map((p) => p.node_id), ['!0000c3c3']);
    assert.equal(await store.lastPositions('nobody', {}, 100), []);
  });

  test(`[${name}] last positions: two fixes with the same time are told apart by event id; an event whose body holds an escaped NUL is not read and does not break the answer`, async () => {
    const store = await fresh();
    await store.ensureTenant('pos', at(0));
    await store.insertEvent('position', positionEvent({ from: '!0000a1a1', s: 10, lat: 1, lon: 1, id: 'evt_b' }));
    await store.insertEvent('position', positionEvent({ from: '!0000a1a1', s: 10, lat: 2, lon: 2, id: 'evt_a' }));
    const odd = positionEvent({ from: '!0000e5e5', s: 11, lat: 3, lon: 3 });
    await store.insertEvent('position', { ...odd, body: odd.body.replace('"to":"^all"', '"to":"\\u0000"') });
    assert.equal((await store.lastPositions('pos', {}, 10)).map((p) => [p.node_id, p.latitude]), [['!0000a1a1', 1]]);
  });
}
