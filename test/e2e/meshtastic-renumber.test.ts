import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BROADCAST, encodePosition, formatNodeId, PORT_NUM } from '../../src/bearers/meshtastic/codec/messages.ts';
import { keysFromSeed, nodeNumFromKey } from '../../src/bearers/meshtastic/simulator/identity.ts';
import { meshtasticSimMesh } from '../../src/bearers/meshtastic/simulator/link.ts';
import type { RemoteNode } from '../../src/bearers/meshtastic/simulator/mesh.ts';
import { MeshtasticDevice } from '../../src/bearers/meshtastic/simulator/device.ts';
import type { TestBridge } from '../helpers/bridge.ts';
import { createMeshInterface, keepProcessAlive, startMeshBridge, waitDelivery, waitOnline, waitUntil } from '../helpers/meshtastic.ts';
import { createRule } from '../helpers/routing.ts';

// A node renumbered by a firmware upgrade (firmware 2.8 numbers a node by the CRC-32 of its
// public key; docs/protocols/meshtastic.md 2.10), as an operator meets it: a field node known
// under its 2.7 number, named by a contact, a rule, the senders policy and a delivery held
// until it is heard, upgrades on the simulated mesh and comes back under its new number with
// the same key and names. The bridge follows it by its key: the node keeps its history,
// everything that named the old number reaches the new one, and the change is logged, shown
// on the node and counted.

const meshName = `renumber-${process.pid}`;
const keys = keysFromSeed('field node 7');
const OLD = 0x0badcafe;
const NEW = nodeNumFromKey(keys.publicKey);
const oldId = formatNodeId(OLD);
const newId = formatNodeId(NEW);
const keyB64 = Buffer.from(keys.publicKey).toString('base64');

let t: TestBridge;
let field: RemoteNode;
let release: () => void;

/** The simulated board the bridge's interface is bound to (the mesh member with that id). */
function boardOf(nodeId: string): MeshtasticDevice {
  const board = meshtasticSimMesh(meshName).member(parseInt(nodeId.slice(1), 16));
  assert.ok(board instanceof MeshtasticDevice, `${nodeId} is a simulated board`);
  return board;
}

const textsAt = (node: RemoteNode) => node.received.filter((p) => p.decoded?.portnum === PORT_NUM.TEXT_MESSAGE_APP).map((p) => new TextDecoder().decode(p.decoded!.payload));

async function send(to: string, text: string): Promise<{ message: any; deliveries: any[] }> {
  const r = await t.call('POST', '/api/messages/send', { body: { to, text } });
  assert.is(r.status, 202, r.text);
  return r.body;
}

/** The message the bridge stored for a text the field node sent now. */
async function heardFromField(text: string): Promise<any> {
  field.sendText(BROADCAST, text);
  return waitUntil(`"${text}" stored`, async () => {
    const r = await t.call('GET', '/api/messages?limit=50');
    return r.body.items.find((m: any) => m.text === text);
  });
}

test.before(async () => {
  release = keepProcessAlive();
  field = meshtasticSimMesh(meshName).addRemoteNode({ num: OLD, public_key: keys.publicKey, long_name: 'Field Seven', short_name: 'FLD7' });
  t = await startMeshBridge();
  await createMeshInterface(t, 'mesh', `sim://${meshName}`);
  await waitOnline(t, 'mesh');
  for (const [name, mesh] of [['field', oldId], ['field-by-key', keyB64]]) {
    const r = await t.call('POST', '/api/contacts', { body: { name, addresses: { mesh } } });
    assert.is(r.status, 201, r.text);
  }
  await createRule(t.call, 'to-field', { match: { direction: 'outbound', to: ['to-field'] }, action: 'forward', destinations: [{ interface: 'mesh', to: '@field' }] });
  await createRule(t.call, 'to-field-by-key', { match: { direction: 'outbound', to: ['to-field-by-key'] }, action: 'forward', destinations: [{ interface: 'mesh', to: '@field-by-key' }] });
  await createRule(t.call, 'hold-for-field', { match: { direction: 'outbound', to: ['hold-for-field'] }, action: 'forward', destinations: [{ interface: 'mesh', to: oldId, until_heard: true }] });
  await createRule(t.call, 'from-field', { match: { direction: 'inbound', from: [oldId], text: { contains: 'tagged' } }, action: 'drop' });
});

test.after(async () => {
  await t?.stop();
  field?.remove();
  release?.();
});

test('before the upgrade: the node is known under its old number with its key and a position', async () => {
  const node = await waitUntil('the field node in the node table', async () => {
    const r = await t.call('GET', `/api/nodes/${oldId}`);
    return r.status === 200 && r.body;
  });
  assert.is(node.public_key, keyB64);
  assert.is(node.long_name, 'Field Seven');
  assert.equal(node.former_ids, []);
  field.send(BROADCAST, { portnum: PORT_NUM.POSITION_APP, payload: encodePosition({ latitude_i: 463_000_000, longitude_i: 74_000_000, time: 1_790_000_000 }) });
  await waitUntil('the position stored', async () => (await t.call('GET', `/api/nodes/${oldId}`)).body.position !== null);
  const before = await send('to-field', 'before the upgrade');
  await waitDelivery(t, before.deliveries[0].id, 'delivered', (d) => d.state === 'delivered');
  assert.ok(textsAt(field).includes('before the upgrade'));
});

test('the upgrade: a held delivery, the contact, a contact by key, a rule\'s from and a senders-policy entry all reach the new number; the history is kept', async () => {
  // Held until the node is heard: written for the old number.
  const held = (await send('hold-for-field', 'waiting for you')).deliveries[0];
  assert.is(held.state, 'held');
  assert.is(held.until_heard, oldId);

  const num = field.upgrade();
  assert.is(num, NEW);
  assert.ok(NEW !== OLD);

  // The node's NodeInfo from the new number: the bridge follows the key.
  const node = await waitUntil('the node under its new number', async () => {
    const r = await t.call('GET', `/api/nodes/${newId}`);
    return r.status === 200 && r.body.former_ids.length === 1 && r.body;
  });
  assert.equal(node.former_ids.map((f: any) => f.id), [oldId]);
  assert.is(node.public_key, keyB64);
  assert.is(node.num, NEW);
  assert.is(node.long_name, 'Field Seven', 'the names are kept');
  assert.is(node.position?.latitude, 46.3, 'the history is kept');
  // The old id finds the node at its new one; the table has one row for it.
  assert.is((await t.call('GET', `/api/nodes/${oldId}`)).body.id, newId);
  const all = (await t.call('GET', '/api/nodes')).body.items.filter((n: any) => n.public_key === keyB64);
  assert.equal(all.map((n: any) => n.id), [newId]);

  // The held delivery now waits for the new number; the NodeInfo frame was the node heard.
  const released = await waitDelivery(t, held.id, 'delivered to the new number', (d) => d.state === 'delivered');
  assert.is(released.to, newId);
  assert.ok(textsAt(field).includes('waiting for you'));

  // The contact that named the old number.
  const viaContact = (await send('to-field', 'after the upgrade')).deliveries[0];
  assert.is(viaContact.to, newId);
  await waitDelivery(t, viaContact.id, 'delivered', (d) => d.state === 'delivered');
  assert.ok(textsAt(field).includes('after the upgrade'));
  // A contact stored by public key.
  const viaKey = (await send('to-field-by-key', 'by key')).deliveries[0];
  assert.is(viaKey.to, newId);
  await waitDelivery(t, viaKey.id, 'delivered', (d) => d.state === 'delivered');

  // A rule whose from names the old number matches the node's messages now.
  const tagged = await heardFromField('tagged after the upgrade');
  assert.is(tagged.from, newId);
  assert.is(tagged.action, 'drop');
  assert.match(tagged.decision.reason, /from-field|from !0badcafe/);

  // A senders-policy entry naming the old number applies to the node at the new one.
  const put = await t.call('PUT', '/api/senders/policy', { body: { limits: [], blocklist: [oldId], allowlist: null } });
  assert.is(put.status, 200, put.text);
  const blocked = await heardFromField('blocked after the upgrade');
  assert.is(blocked.action, 'drop');
  assert.match(blocked.decision.reason, new RegExp(`sender ${newId} is on the blocklist \\(as ${oldId}, the id it had before\\)`));
  await t.call('PUT', '/api/senders/policy', { body: { limits: [], blocklist: [], allowlist: null } });

  // Logged and counted.
  const logged = t.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'node_renumbered' || l.event === 'node_renumbered');
  assert.ok(logged, 'the change is logged');
  assert.is(logged.former_id, oldId);
  assert.is(logged.node_id, newId);
  assert.is(logged.deliveries_readdressed, 1);
  const metrics = await t.call('GET', '/metrics');
  assert.match(metrics.text, /fieldbridge_node_identity_changes_total\{[^}]*change="renumbered"[^}]*\} 1/);
});

test('the bridge\'s own board upgrades: the interface comes back online under the new number, and sends from it', async () => {
  const before = (await waitOnline(t, 'mesh')).device.node_id as string;
  const board = boardOf(before);
  const num = board.upgrade();
  assert.ok(formatNodeId(num) !== before);
  const h = await waitUntil('online under the new number', async () => {
    const r = await t.call('GET', '/api/interfaces/health');
    const item = r.body.items.find((i: any) => i.name === 'mesh');
    return item?.phase === 'online' && item.device.node_id === formatNodeId(num) && item;
  }, 15_000);
  assert.is(h.last_error, null);
  const d = (await send('to-field', 'from the upgraded board')).deliveries[0];
  await waitDelivery(t, d.id, 'delivered', (x) => x.state === 'delivered');
  const got = field.received.find((p) => p.decoded?.portnum === PORT_NUM.TEXT_MESSAGE_APP && new TextDecoder().decode(p.decoded.payload) === 'from the upgraded board');
  assert.is(got?.from, num);
});

test.run();
