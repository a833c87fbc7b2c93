import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createSim } from '../../helpers/routing.ts';

// /api/nodes (docs/meshtastic.md, "Node database"): paging, the interface and name filters,
// one node by id, and every kind of bad input answered with 400 or 404 naming the field.

let t: TestBridge;
let mesh: { id: string };
let other: { id: string };
test.before(async () => {
  t = await startTestBridge();
  mesh = await createSim(t.call, 'nodes-mesh');
  other = await createSim(t.call, 'nodes-other');
  const nodes = t.bridge.services.core.nodes;
  const at = '2026-03-02T12:00:00.000Z';
  for (let i = 1; i <= 5; i++) {
    const id = `!0000000${i}`;
    nodes.upsert(i === 5 ? other.id : mesh.id, { id, num: i, long_name: i === 3 ? 'Ridge Camp' : `Node ${i}`, short_name: `N${i}`, snr_db: i, hops_away: 0, position: { latitude: 47 + i / 10, longitude: 8.5 } }, at);
  }
  // An LXMF peer heard in a Reticulum announce: an address, no node number.
  nodes.upsert(other.id, { id: LXMF_ADDRESS, network: 'lxmf', long_name: 'Hut Sideband', hops_away: 2 }, at);
});
const LXMF_ADDRESS = '9a0b3c1d2e4f5a6b7c8d9e0f1a2b3c4d';
test.after(async () => {
  await t.stop();
});

test('pages through every node in id order, with next_cursor and a Link header', async () => {
  const first = await t.call('GET', '/api/nodes?limit=2');
  assert.is(first.status, 200, first.text);
  assert.equal(first.body.items.map((n: { id: string }) => n.id), ['!00000001', '!00000002']);
  assert.ok(first.body.next_cursor);
  assert.match(first.headers.get('link') ?? '', /rel="next"/);
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { items: Array<{ id: string }>; next_cursor: string | null } } = await t.call('GET', `/api/nodes?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    seen.push(...page.body.items.map((n) => n.id));
    cursor = page.body.next_cursor;
  } while (cursor);
  assert.equal(seen, ['!00000001', '!00000002', '!00000003', '!00000004', '!00000005', LXMF_ADDRESS]);
});

test('filters by interface (id or name) and by part of a name', async () => {
  const byName = await t.call('GET', '/api/nodes?interface=nodes-other');
  assert.equal(byName.body.items.map((n: { id: string }) => n.id), ['!00000005', LXMF_ADDRESS]);
  const lxmf = await t.call('GET', '/api/nodes?network=lxmf');
  assert.equal(lxmf.body.items.map((n: { id: string; network: string; num: number | null }) => [n.id, n.network, n.num]), [[LXMF_ADDRESS, 'lxmf', null]]);
  const meshtastic = await t.call('GET', '/api/nodes?network=meshtastic&limit=10');
  assert.is(meshtastic.body.items.length, 5);
  const q = await t.call('GET', '/api/nodes?q=ridge');
  assert.equal(q.body.items.map((n: { long_name: string }) => n.long_name), ['Ridge Camp']);
  const byHex = await t.call('GET', '/api/nodes?q=00000004');
  assert.equal(byHex.body.items.map((n: { id: string }) => n.id), ['!00000004']);
});

test('one node by id, with what the radio reported', async () => {
  const r = await t.call('GET', '/api/nodes/!00000003');
  assert.is(r.status, 200, r.text);
  assert.is(r.body.long_name, 'Ridge Camp');
  assert.equal(r.body.position, { latitude: 47.3, longitude: 8.5 });
  assert.is(r.body.interface_id, mesh.id);
  assert.is(r.body.via_mqtt, false);
  assert.is(r.body.network, 'meshtastic');
  assert.is(r.body.num, 3);
  const peer = await t.call('GET', `/api/nodes/${LXMF_ADDRESS}`);
  assert.is(peer.status, 200, peer.text);
  assert.is(peer.body.long_name, 'Hut Sideband');
});

test('bad input: malformed ids, cursors, limits and unknown interfaces are 400; an unknown node is 404; no key is 401', async () => {
  assertProblem(await t.call('GET', '/api/nodes/a1b2c3d4'), 400, ['path.id']);
  assertProblem(await t.call('GET', '/api/nodes/!A1B2C3D4'), 400, ['path.id']);
  assertProblem(await t.call('GET', '/api/nodes/!ffffffff'), 404);
  assertProblem(await t.call('GET', '/api/nodes?cursor=bm9wZQ'), 400, ['query.cursor']);
  assertProblem(await t.call('GET', '/api/nodes?limit=0'), 400, ['query.limit']);
  assertProblem(await t.call('GET', '/api/nodes?interface=ghost'), 400, ['query.interface']);
  assertProblem(await t.call('GET', '/api/nodes?colour=red'), 400, ['query']);
  assertProblem(await t.call('GET', '/api/nodes?network=pigeon'), 400, ['query.network']);
  assertProblem(await t.call('GET', `/api/nodes/${LXMF_ADDRESS.toUpperCase()}`), 400, ['path.id']);
  assertProblem(await t.call('GET', '/api/nodes/abc'), 400, ['path.id']);
  assertProblem(await t.call('GET', '/api/nodes', { key: null }), 401);
});

test.run();
