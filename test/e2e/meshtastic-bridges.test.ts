import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MeshtasticDevice } from '../../src/bearers/meshtastic/simulator/device.ts';
import { MeshtasticMesh } from '../../src/bearers/meshtastic/simulator/mesh.ts';
import { serveMeshtasticPty, serveMeshtasticTcp, type SimTransport } from '../../src/bearers/meshtastic/simulator/serve.ts';
import type { TestBridge } from '../helpers/bridge.ts';
import {
  createMeshInterface, keepProcessAlive, nodeIdOf, startMeshBridge, waitDelivery, waitOnline, waitUntil,
} from '../helpers/meshtastic.ts';
import { createRule } from '../helpers/routing.ts';

// Two bridges on one simulated Meshtastic mesh, each bound to its own simulated board through
// the real byte streams: bridge A's board over TCP (like a WiFi node), bridge B's over a
// pseudo-terminal through the serial binding (like a USB board). What an operator sees through
// the API: both interfaces online with the board's firmware and node id, a direct message from
// A stored by B, A's delivery delivered naming B's node as the acknowledger, and routing errors
// retried or dead-lettered by name.

const mesh = new MeshtasticMesh();
const devA = new MeshtasticDevice({ name: 'e2e-bridge-a', mesh, firmwareVersion: '2.6.11.e2e-a' });
const devB = new MeshtasticDevice({ name: 'e2e-bridge-b', mesh, firmwareVersion: '2.6.11.e2e-b' });
const idA = nodeIdOf(devA);
const idB = nodeIdOf(devB);
let ptyDir: string;
let tcpA: SimTransport;
let ptyB: SimTransport;
let a: TestBridge;
let b: TestBridge;
let release: () => void;

const send = async (text: string, to = idB) => {
  const r = await a.call('POST', '/api/messages/send', { body: { to, text } });
  assert.is(r.status, 202, r.text);
  assert.is(r.body.deliveries.length, 1, r.text);
  return r.body.deliveries[0] as { id: string; state: string };
};

test.before(async () => {
  release = keepProcessAlive();
  ptyDir = mkdtempSync(join(tmpdir(), 'fb-mt-e2e-pty-'));
  tcpA = await serveMeshtasticTcp(devA, { port: 0 });
  ptyB = await serveMeshtasticPty(devB, { path: join(ptyDir, 'ttyMESH0') });
  // A's retry waits are (almost) their ceiling, so `retrying` lasts about a second.
  a = await startMeshBridge({ random: () => 0.999 });
  b = await startMeshBridge();
  await createMeshInterface(a, 'mesh', tcpA.device, { retry: { base_s: 1, cap_s: 1, max_attempts: 3 } });
  await createMeshInterface(b, 'mesh', ptyB.device);
  await createRule(a.call, 'out-to-mesh', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'mesh', to: '{to}' }] });
  await createRule(b.call, 'keep-mesh', { match: { direction: 'inbound', interfaces: ['mesh'] }, action: 'store' });
});

test.after(async () => {
  await a?.stop();
  await b?.stop();
  await tcpA?.close();
  await ptyB?.close();
  devA.close();
  devB.close();
  if (ptyDir) rmSync(ptyDir, { recursive: true, force: true });
  release?.();
});

test('both interfaces come online and show the board they found', async () => {
  assert.match(tcpA.device, /^tcp:\/\/127\.0\.0\.1:\d+$/);
  const ha = await waitOnline(a, 'mesh');
  const hb = await waitOnline(b, 'mesh');
  assert.is(ha.kind, 'meshtastic');
  assert.is(ha.last_error, null);
  assert.is(hb.last_error, null);
  assert.is(ha.device.firmware_version, '2.6.11.e2e-a');
  assert.is(ha.device.node_id, idA);
  assert.is(hb.device.firmware_version, '2.6.11.e2e-b');
  assert.is(hb.device.node_id, idB);
  assert.is(ha.device.region, 'EU_868');
  assert.is(ha.device.modem_preset, 'LONG_FAST');
  // The stats endpoint says the same.
  const s = await b.call('GET', '/api/interfaces/mesh/stats');
  assert.is(s.status, 200, s.text);
  assert.is(s.body.kind, 'meshtastic');
  assert.is(s.body.stats.node_id, idB);
  assert.is(s.body.stats.firmware_version, '2.6.11.e2e-b');
  // Each bridge learned the other's node from its board's node database.
  const nodes = await waitUntil('A to know B\'s node', async () => {
    const r = await a.call('GET', `/api/nodes/${encodeURIComponent(idB)}`);
    return r.status === 200 && r.body;
  });
  assert.is(nodes.id, idB);
  assert.is(nodes.hw_model, 'PORTDUINO', 'the board by its HardwareModel name (37 on the wire)');
});

test('a direct message from A is stored by B and delivered on B\'s acknowledgement', async () => {
  const d = await send('hello from ridge A');
  const heard = await waitUntil('B to store the message', async () => {
    const r = await b.call('GET', '/api/messages?direction=inbound');
    return r.body.items.find((m: { text: string | null }) => m.text === 'hello from ridge A');
  });
  assert.is(heard.from, idA);
  assert.is(heard.to, idB);
  assert.is(heard.kind, 'text');
  assert.is(heard.direction, 'inbound');
  const done = await waitDelivery(a, d.id, 'delivered', (x) => x.state === 'delivered');
  assert.is(done.attempts, 1);
  assert.is(done.last_error, null);
  assert.is(done.to, idB);
  assert.is(done.result.ack, 'acknowledged');
  assert.is(done.result.acked_by, idB);
  assert.type(done.result.packet_id, 'number');
  // B's own health counted one received message, A's one sent.
  const hb = await waitOnline(b, 'mesh');
  assert.is(hb.counters.received, 1);
  assert.is(hb.counters.duplicates, 0);
  const ha = await waitOnline(a, 'mesh');
  assert.is(ha.counters.sent, 1);
  assert.is(ha.counters.failed, 0);
  assert.is(ha.device.acked, 1);
});

test('NO_ROUTE from the mesh: retrying with the error named, then dead after max_attempts', async () => {
  devA.faults.refuseAcks = 'NO_ROUTE';
  try {
    const d = await send('nobody can route this');
    const retrying = await waitDelivery(a, d.id, 'retrying', (x) => x.state === 'retrying');
    assert.is(retrying.attempts, 1);
    assert.match(retrying.last_error, /ERR_MESHTASTIC_NO_ROUTE/);
    assert.type(retrying.next_attempt_at, 'string');
    const dead = await waitDelivery(a, d.id, 'dead', (x) => x.state === 'dead');
    assert.is(dead.attempts, 3);
    assert.is(dead.max_attempts, 3);
    assert.match(dead.last_error, /ERR_MESHTASTIC_NO_ROUTE/);
    assert.match(dead.last_error, /gave up after 3 attempts/);
    assert.is(dead.result, null);
    const letters = await a.call('GET', '/api/deliveries?state=dead');
    assert.ok(letters.body.items.some((x: { id: string }) => x.id === d.id), letters.text);
    const s = await a.call('GET', '/api/interfaces/mesh/stats');
    assert.is(s.body.stats.failed_by_reason.ERR_MESHTASTIC_NO_ROUTE, 3);
  } finally {
    devA.faults.refuseAcks = null;
  }
});

test('TOO_LARGE is permanent: dead at the first attempt, whether the mesh or the driver says it', async () => {
  devA.faults.refuseAcks = 'TOO_LARGE';
  try {
    const d = await send('the mesh says this is too large');
    const dead = await waitDelivery(a, d.id, 'dead', (x) => x.state === 'dead');
    assert.is(dead.attempts, 1);
    assert.match(dead.last_error, /ERR_MESHTASTIC_TOO_LARGE/);
    assert.match(dead.last_error, /not retryable/);
  } finally {
    devA.faults.refuseAcks = null;
  }
  // More than 233 bytes never reaches the board.
  const sentBefore = devA.counters.packetsFromHost;
  const d = await send('x'.repeat(234));
  const dead = await waitDelivery(a, d.id, 'dead', (x) => x.state === 'dead');
  assert.is(dead.attempts, 1);
  assert.match(dead.last_error, /ERR_MESHTASTIC_TOO_LARGE/);
  assert.match(dead.last_error, /234 bytes/);
  assert.is(devA.counters.packetsFromHost, sentBefore);
});

test('after the faults, a message gets through again', async () => {
  const d = await send('all clear');
  const done = await waitDelivery(a, d.id, 'delivered', (x) => x.state === 'delivered');
  assert.is(done.attempts, 1);
  assert.is(done.result.acked_by, idB);
  const inbound = await waitUntil('B to store "all clear"', async () => {
    const r = await b.call('GET', '/api/messages?direction=inbound');
    return r.body.items.some((m: { text: string | null }) => m.text === 'all clear') && r.body.items;
  });
  // B stored what reached it: the good messages and the ones the faults refused an ack for
  // (the board still transmitted them), but never the oversize one.
  assert.ok(!inbound.some((m: { text: string | null }) => m.text?.startsWith('xxxx')));
});

test.run();
