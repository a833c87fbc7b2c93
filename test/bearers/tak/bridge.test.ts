import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CoTParser } from '@tak-ps/node-cot';
import { readFileSync, rmSync } from 'node:fs';
import { BROADCAST, encodePosition, PORT_NUM } from '../../../src/bearers/meshtastic/codec/messages.ts';
import { meshtasticSimMesh } from '../../../src/bearers/meshtastic/simulator/link.ts';
import type { MeshtasticMesh, RemoteNode } from '../../../src/bearers/meshtastic/simulator/mesh.ts';
import type { TestBridge } from '../../helpers/bridge.ts';
import { drawInLeaflet } from '../../helpers/leaflet.ts';
import { createMeshInterface, keepProcessAlive, startMeshBridge, waitOnline, waitUntil } from '../../helpers/meshtastic.ts';
import { ATAK_CHAT_ALL, ATAK_PLI } from './fixtures.ts';
import { takEnd, testPki, type TakEnd } from './tak-end.ts';

// A running bridge between a simulated Meshtastic mesh (sim://, in process) and a stand-in TAK
// server over TLS (client certificate required, certificates by openssl at test time). Two
// nodes' positions reach the server as CoT events that @tak-ps/node-cot reads, one uid per node,
// stale from the fix; a renumbered node keeps its uid. GeoChat from the server reaches a node by
// one rule and the node's reply comes back as GeoChat; the server echoing it changes nothing.

const CHANNEL = `tak-${process.pid}`;
let t: TestBridge;
let mesh: MeshtasticMesh;
let alpha: RemoteNode;
let beta: RemoteNode;
let end: TakEnd;
let pki: ReturnType<typeof testPki>;
let release: () => void;

const cot = (xml: string) => CoTParser.from_xml(xml);
const positionsOf = (uidOrCallsign: string) => end.events.map(cot).filter((c) => c.raw.event._attributes.type === 'a-f-G-U-C' && (c.raw.event._attributes.uid === uidOrCallsign || (c.raw.event.detail as any)?.contact?._attributes?.callsign === uidOrCallsign));
const chats = () => end.events.map(cot).filter((c) => c.is_chat());
const textsHeardBy = (n: RemoteNode) => n.received.filter((p) => p.decoded?.portnum === PORT_NUM.TEXT_MESSAGE_APP).map((p) => new TextDecoder().decode(p.decoded!.payload));

function sendPosition(n: RemoteNode, lat: number, lon: number, fixS: number): void {
  n.send(BROADCAST, { portnum: PORT_NUM.POSITION_APP, payload: encodePosition({ latitude_i: Math.round(lat * 1e7), longitude_i: Math.round(lon * 1e7), altitude: 420, time: fixS }) });
}

test.before(async () => {
  release = keepProcessAlive();
  mesh = meshtasticSimMesh(CHANNEL);
  alpha = mesh.addRemoteNode({ num: 0x0000a1a1, seed: 'alpha', long_name: 'Alpha team' });
  beta = mesh.addRemoteNode({ num: 0x0000b2b2, long_name: 'Beta team' });
  pki = testPki(30);
  end = await takEnd({ cert: readFileSync(pki.serverCert, 'utf8'), key: readFileSync(pki.serverKey, 'utf8'), ca: readFileSync(pki.ca, 'utf8') });
  t = await startMeshBridge();
  await createMeshInterface(t, 'mesh', `sim://${CHANNEL}`);
  const tak = await t.call('POST', '/api/interfaces', { body: { name: 'tak', kind: 'tak', device: `tls://127.0.0.1:${end.port}`, settings: { cert_file: pki.clientCert, key_file: pki.clientKey, ca_file: pki.ca, min_interval_s: 0, stale_s: 900 } } });
  assert.is(tak.status, 201, tak.text);
  for (const rule of [
    { name: 'positions-to-tak', match: { direction: 'inbound', interfaces: ['mesh'], kinds: ['position'] }, destinations: [{ interface: 'tak', to: '^all' }] },
    { name: 'mesh-chat-to-tak', match: { direction: 'inbound', interfaces: ['mesh'], kinds: ['text'] }, destinations: [{ interface: 'tak', to: '^all' }] },
    { name: 'tak-chat-to-mesh', match: { direction: 'inbound', interfaces: ['tak'], kinds: ['text'] }, destinations: [{ interface: 'mesh', to: '^all' }] },
  ]) {
    const r = await t.call('POST', '/api/access-rules', { body: { ...rule, schedule: null, action: 'forward' } });
    assert.is(r.status, 201, r.text);
  }
  await waitOnline(t, 'mesh');
  await waitOnline(t, 'tak');
  mesh.announce(alpha);
  mesh.announce(beta);
  await waitUntil('both nodes known by name', async () => (await t.call('GET', '/api/nodes')).body.items.filter((n: { long_name: string }) => /team/.test(n.long_name)).length === 2);
});

test.after(async () => {
  await t?.stop();
  await end?.close();
  if (pki) rmSync(pki.dir, { recursive: true, force: true });
  release?.();
});

let alphaUid = '';

test('two nodes\' positions reach the TAK server over TLS: one uid per node, callsign from the name, stale from the fix', async () => {
  const fixS = Math.floor(Date.now() / 1000) - 120;
  sendPosition(alpha, 46.5, 7.25, fixS);
  sendPosition(beta, 46.6, 7.35, fixS + 10);
  await waitUntil('both markers at the server', () => positionsOf('Alpha team').length === 1 && positionsOf('Beta team').length === 1, 15_000);
  const [a] = positionsOf('Alpha team');
  const [b] = positionsOf('Beta team');
  alphaUid = a.raw.event._attributes.uid;
  assert.match(alphaUid, /^fieldbridge\.key-[0-9a-f]{20}$/, 'Alpha announced its key: the uid comes from it');
  assert.is(b.raw.event._attributes.uid, 'fieldbridge.meshtastic-!0000b2b2', 'Beta has no key: network and id');
  assert.is(a.raw.event._attributes.time, new Date(fixS * 1000).toISOString());
  assert.is(a.raw.event._attributes.stale, new Date((fixS + 900) * 1000).toISOString());
  assert.equal((await CoTParser.to_geojson(a)).geometry.coordinates, [7.25, 46.5, 420]);
  assert.match(String((await CoTParser.to_geojson(b)).properties.remarks), /via mesh/);
});

test('a renumbered node (firmware 2.8 numbers by key) keeps its uid', async () => {
  const before = positionsOf(alphaUid).length;
  const num = alpha.upgrade();
  assert.is.not(num, 0x0000a1a1);
  await waitUntil('the bridge followed the node', async () => (await t.call('GET', `/api/nodes/${encodeURIComponent(`!${num.toString(16).padStart(8, '0')}`)}`)).status === 200);
  sendPosition(alpha, 46.51, 7.26, Math.floor(Date.now() / 1000) - 30);
  await waitUntil('the new fix at the server', () => positionsOf(alphaUid).length === before + 1, 15_000);
  assert.is(positionsOf(alphaUid).at(-1)!.raw.event.point._attributes.lat, 46.51);
});

test('GeoChat from a TAK user reaches the mesh by one rule; the node\'s reply comes back as GeoChat; nothing loops', async () => {
  end.write(ATAK_CHAT_ALL);
  await waitUntil('Beta hears the TAK user', () => textsHeardBy(beta).includes('Team 2 at the hut, need water \u{1F4A7}'), 15_000);
  const stored = (await t.call('GET', '/api/messages?direction=inbound')).body.items.find((m: { from: string }) => m.from === 'ANDROID-5f2c9a7e1b3d4c60');
  assert.ok(stored, 'stored as a message from the TAK user\'s uid');
  assert.is(stored.meta.tak_callsign, 'RESCUE-7');
  beta.sendText(BROADCAST, 'copy RESCUE-7, water on its way');
  await waitUntil('the reply at the server', () => chats().length === 1, 15_000);
  const reply = chats()[0];
  const d = reply.raw.event.detail as Record<string, any>;
  assert.is(d.__chat._attributes.senderCallsign, 'Beta team');
  assert.is(d.__chat._attributes.chatroom, 'All Chat Rooms');
  assert.is(d.remarks._text, 'copy RESCUE-7, water on its way');
  // A server that sends everything back to everyone: the bridge knows its own event.
  end.write(end.events[end.events.length - 1]);
  await waitUntil('the echo ignored', async () => (await t.call('GET', '/api/interfaces/tak/stats')).body.stats.echoes_ignored >= 1);
  await new Promise((r) => setTimeout(r, 500));
  assert.is(chats().length, 1, 'one GeoChat, not a loop');
  assert.equal(textsHeardBy(beta).filter((x) => x.includes('water on its way')), [], 'the reply did not come back to the mesh');
  assert.is(textsHeardBy(alpha).filter((x) => x.includes('need water')).length, 1, 'the TAK message went to the mesh once');
});

test('GET /api/positions: the last position of each node with its age and source; a TAK user\'s too; a track across renumbering', async () => {
  end.write(ATAK_PLI);
  await waitUntil('the TAK user is a node', async () => (await t.call('GET', '/api/nodes?network=tak')).body.items.length === 1);
  const r = await t.call('GET', '/api/positions');
  assert.is(r.status, 200, r.text);
  const byName = Object.fromEntries(r.body.items.map((p: { name: string }) => [p.name, p]));
  assert.equal(Object.keys(byName).sort(), ['Alpha team', 'Beta team', 'RESCUE-7']);
  assert.equal([byName['Alpha team'].latitude, byName['Alpha team'].interface_name, byName['Alpha team'].network], [46.51, 'mesh', 'meshtastic']);
  assert.ok(byName['Alpha team'].age_s >= 30 && byName['Alpha team'].age_s < 300, String(byName['Alpha team'].age_s));
  assert.equal([byName['RESCUE-7'].node_id, byName['RESCUE-7'].network, byName['RESCUE-7'].interface_name], ['ANDROID-5f2c9a7e1b3d4c60', 'tak', 'tak']);
  const node = (await t.call('GET', '/api/nodes/ANDROID-5f2c9a7e1b3d4c60'));
  assert.is(node.status, 200, node.text);
  const track = await t.call('GET', `/api/positions/${encodeURIComponent(byName['Alpha team'].node_id)}/track`);
  assert.is(track.status, 200, track.text);
  assert.equal(track.body.items.map((p: { latitude: number }) => p.latitude), [46.5, 46.51], 'both fixes, before and after the new number');
  const line = await t.call('GET', `/api/positions/${encodeURIComponent('!0000a1a1')}/track/geojson`);
  assert.equal(line.body.geometry, { type: 'LineString', coordinates: [[7.25, 46.5, 420], [7.26, 46.51, 420]] }, 'a former id names the node too');
});

test('a TAK server that is down: the mesh side does not wait; held positions go out latest-only per node when it is back', async () => {
  const rule = await t.call('POST', '/api/access-rules', { body: { name: 'status-both-ways', match: { direction: 'inbound', interfaces: ['mesh'], kinds: ['text'], text: { regex: '^status' } }, schedule: null, action: 'forward', destinations: [{ interface: 'tak', to: '^all' }, { interface: 'mesh', to: '{from}' }] } });
  assert.is(rule.status, 201, rule.text);
  const reorder = await t.call('POST', '/api/access-rules/reorder', { body: { order: ['status-both-ways', 'positions-to-tak', 'mesh-chat-to-tak', 'tak-chat-to-mesh'] } });
  assert.is(reorder.status, 200, reorder.text);
  const port = end.port;
  await end.close();
  await waitUntil('the TAK interface is down', async () => (await t.call('GET', '/api/interfaces/tak/stats')).body.connected === false);
  const fixS = Math.floor(Date.now() / 1000);
  for (const [i, lat] of [46.7, 46.71, 46.72].entries()) sendPosition(beta, lat, 7.4, fixS - 30 + i);
  alpha.sendText(BROADCAST, 'status: all well at the hut');
  await waitUntil('the answer on the mesh comes while the TAK server is down', () => textsHeardBy(alpha).includes('status: all well at the hut'), 10_000);
  const held = await waitUntil('the TAK delivery is held', async () => {
    const items = (await t.call('GET', '/api/deliveries?interface=tak&state=held')).body.items;
    return items.length >= 4 && items;
  });
  assert.ok(held.length >= 4, 'three positions and the text wait for the TAK server');

  end = await takEnd({ cert: readFileSync(pki.serverCert, 'utf8'), key: readFileSync(pki.serverKey, 'utf8'), ca: readFileSync(pki.ca, 'utf8') }, { port });
  await waitUntil('the text at the server again', () => chats().some((c) => (c.raw.event.detail as any).remarks._text === 'status: all well at the hut'), 30_000);
  await waitUntil('Beta\'s newest position', () => positionsOf('Beta team').some((c) => c.raw.event.point._attributes.lat === 46.72), 15_000);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(positionsOf('Beta team').map((c) => c.raw.event.point._attributes.lat), [46.72], 'only the newest of the held fixes went out');
});

test('the GeoJSON form opens in Leaflet in headless Chromium without errors: one marker per node, one line per track', async () => {
  const points = (await t.call('GET', '/api/positions/geojson')).body;
  const alphaId = points.features.find((f: any) => f.properties.name === 'Alpha team').id;
  const track = (await t.call('GET', `/api/positions/${encodeURIComponent(alphaId)}/track/geojson`)).body;
  const drawn = await drawInLeaflet([points, track]);
  assert.equal({ markers: drawn.markers, lines: drawn.lines }, { markers: 3, lines: 1 });
  assert.equal(drawn.errors, []);
});

test.run();
