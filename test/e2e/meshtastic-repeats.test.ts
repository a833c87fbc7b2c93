import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BROADCAST } from '../../src/bearers/meshtastic/codec/messages.ts';
import { MeshtasticDevice } from '../../src/bearers/meshtastic/simulator/device.ts';
import { MeshtasticMesh, type RemoteNode } from '../../src/bearers/meshtastic/simulator/mesh.ts';
import { serveMeshtasticTcp, type SimTransport } from '../../src/bearers/meshtastic/simulator/serve.ts';
import type { TestBridge } from '../helpers/bridge.ts';
import { createMeshInterface, health, keepProcessAlive, startMeshBridge, waitOnline, waitUntil } from '../helpers/meshtastic.ts';
import { createRule, createSim } from '../helpers/routing.ts';

// Radios repeat packets. One bridge with a Meshtastic interface (its simulated board over TCP)
// and a rule forwarding everything heard on it to a sim interface: a text from a remote node,
// heard twice with the same sender and packet id, is stored once and forwarded once, and the
// repeat shows in the interface's health as a duplicate. The bridge is then restarted on the
// same database while the same board stays served: the same repeat is still recognised.

const mesh = new MeshtasticMesh();
const board = new MeshtasticDevice({ name: 'e2e-repeats-gw', mesh });
let remote: RemoteNode;
let tcp: SimTransport;
let dir: string;
let t: TestBridge;
let release: () => void;
const TEXT = 'water level 2.3 m at the weir';

/** What an operator sees: messages with the text, and every delivery the bridge made. */
async function seen(): Promise<{ messages: any[]; deliveries: any[] }> {
  const m = await t.call('GET', `/api/messages?q=${encodeURIComponent('weir')}`);
  assert.is(m.status, 200, m.text);
  const d = await t.call('GET', '/api/deliveries');
  assert.is(d.status, 200, d.text);
  return { messages: m.body.items, deliveries: d.body.items };
}

test.before(async () => {
  release = keepProcessAlive();
  dir = mkdtempSync(join(tmpdir(), 'fb-mt-e2e-repeats-'));
  remote = mesh.addRemoteNode({ num: 0x0000beef, long_name: 'Weir sensor' });
  tcp = await serveMeshtasticTcp(board, { port: 0 });
  t = await startMeshBridge({ dir });
  await createMeshInterface(t, 'mesh', tcp.device);
  await createSim(t.call, 'ops', { device: 'sim://e2e-repeats-ops' });
  await createRule(t.call, 'mesh-to-ops', { match: { direction: 'inbound', interfaces: ['mesh'] }, action: 'forward', destinations: [{ interface: 'ops', to: 'broadcast' }] });
  await waitOnline(t, 'mesh');
});

test.after(async () => {
  await t?.stop();
  await tcp?.close();
  board.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  release?.();
});

test('a text from a remote node is stored once and forwarded once, its repeat counted as a duplicate', async () => {
  const packet = remote.sendText(BROADCAST, TEXT);
  const stored = await waitUntil('the text to be stored', async () => (await seen()).messages[0]);
  assert.is(stored.from, '!0000beef');
  assert.is(stored.to, '^all');
  assert.is(stored.kind, 'text');
  assert.is(stored.direction, 'inbound');
  assert.is(stored.meta.packet_id, packet.id);
  const delivered = await waitUntil('the forward to be delivered', async () => {
    const d = (await seen()).deliveries;
    return d.length === 1 && d[0].state === 'delivered' && d[0];
  });
  assert.is(delivered.message_id, stored.id);

  assert.ok(board.repeatLast(), 'the board has a packet to repeat');
  const h = await waitUntil('the repeat to be counted', async () => {
    const x = await health(t, 'mesh');
    return x.counters.duplicates === 1 && x;
  });
  // received counts every frame heard, the repeat included.
  assert.is(h.counters.received, 2);
  const after = await seen();
  assert.is(after.messages.length, 1);
  assert.is(after.deliveries.length, 1);
  assert.is(after.deliveries[0].id, delivered.id);
  assert.is(after.deliveries[0].attempts, 1);
});

test('after a restart on the same database, the same repeat is still a duplicate', async () => {
  const before = await seen();
  const handshakes = board.counters.handshakes;
  await t.stop();
  t = await startMeshBridge({ dir });
  await waitOnline(t, 'mesh');
  assert.ok(board.counters.handshakes > handshakes, 'the restarted bridge handshook with the same board');
  assert.ok(board.repeatLast(), 'the board has a packet to repeat');
  const h = await waitUntil('the repeat to be counted after the restart', async () => {
    const x = await health(t, 'mesh');
    return x.counters.duplicates === 1 && x;
  });
  assert.is(h.counters.received, 1);
  const after = await seen();
  assert.is(after.messages.length, 1);
  assert.is(after.messages[0].id, before.messages[0].id);
  assert.is(after.deliveries.length, 1);
  assert.is(after.deliveries[0].id, before.deliveries[0].id);
  assert.is(after.deliveries[0].state, 'delivered');
  assert.is(after.deliveries[0].attempts, 1);
});

test('the same text sent again as a new packet is a new message, forwarded once', async () => {
  remote.sendText(BROADCAST, TEXT);
  const both = await waitUntil('the second packet to be stored and forwarded', async () => {
    const s = await seen();
    return s.messages.length === 2 && s.deliveries.length === 2 && s.deliveries.every((d: any) => d.state === 'delivered') && s;
  });
  assert.is.not(both.messages[0].meta.packet_id, both.messages[1].meta.packet_id);
  const h = await health(t, 'mesh');
  assert.is(h.counters.duplicates, 1);
  assert.is(h.counters.received, 2);
});

test.run();
