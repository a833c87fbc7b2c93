import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MeshCoreDevice } from '../../src/bearers/meshcore/simulator/device.ts';
import { MeshCoreMesh } from '../../src/bearers/meshcore/simulator/mesh.ts';
import { serveMeshCoreTcp } from '../../src/bearers/meshcore/simulator/serve.ts';
import type { SimTransport } from '../../src/bearers/shared/simulators/pty.ts';
import { meshtasticSimMesh } from '../../src/bearers/meshtastic/simulator/link.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';

// MeshCore end to end (issue 21 acceptance): two bridges whose MeshCore interfaces reach two
// simulated companion radios over real TCP byte streams, all radios on one simulated MeshCore
// mesh; and one bridge that links a Meshtastic mesh to a MeshCore node with one rule each way.

const mesh = new MeshCoreMesh();
const radioA = new MeshCoreDevice({ name: 'radio-a', mesh });
const radioB = new MeshCoreDevice({ name: 'radio-b', mesh });
/** A MeshCore user's radio with no bridge behind it (its app is away: messages wait on it). */
const hiker = new MeshCoreDevice({ name: 'hiker', mesh });
const prefix = (d: MeshCoreDevice) => Buffer.from(d.publicKey.subarray(0, 6)).toString('hex');
const meshtasticChannel = `mc-bridge-${process.pid}`;
let tcpA: SimTransport;
let tcpB: SimTransport;
let a: TestBridge;
let b: TestBridge;
/** Bridge B's folder, kept across its restart. */
const dirB = mkdtempSync(join(tmpdir(), 'fb-mc-b-'));

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const online = (t: TestBridge, name: string) =>
  until(`${name} online`, async () => (await t.call('GET', '/api/interfaces/health')).body.items.find((i: { name: string; connected: boolean }) => i.name === name && i.connected));

const inbound = (t: TestBridge, text: string) =>
  until(`"${text}" stored`, async () => (await t.call('GET', '/api/messages?direction=inbound&limit=200')).body.items.find((m: { text: string | null }) => m.text === text));

async function rule(t: TestBridge, body: Record<string, unknown>): Promise<void> {
  const r = await t.call('POST', '/api/access-rules', { body: { schedule: null, action: 'forward', ...body } });
  assert.is(r.status, 201, r.text);
}

test.before(async () => {
  tcpA = await serveMeshCoreTcp(radioA, { port: 0 });
  tcpB = await serveMeshCoreTcp(radioB, { port: 0 });
  a = await startTestBridge();
  b = await startTestBridge({ dir: dirB });
  for (const [t, transport] of [[a, tcpA], [b, tcpB]] as const) {
    const r = await t.call('POST', '/api/interfaces', { body: { name: 'mc', kind: 'meshcore', device: transport.device, settings: { ack_timeout_max_s: 2 }, retry: { base_s: 0.2, cap_s: 1, max_attempts: 3 } } });
    assert.is(r.status, 201, r.text);
    await online(t, 'mc');
  }
  await rule(a, { name: 'out-mc', match: { direction: 'outbound' }, destinations: [{ interface: 'mc', to: '{to}' }] });
});

test.after(async () => {
  await a?.stop();
  await b?.stop();
  await tcpA?.close();
  await tcpB?.close();
  for (const d of [radioA, radioB, hiker]) d.powerOff();
  rmSync(dirB, { recursive: true, force: true });
});

test('the radios\' contacts are in each bridge\'s node database as MeshCore nodes', async () => {
  const node = await until('B listed on A', async () => {
    const r = await a.call('GET', `/api/nodes/${prefix(radioB)}`);
    return r.status === 200 && r.body;
  });
  assert.equal([node.network, node.long_name, node.num], ['meshcore', 'radio-b', null]);
});

test('a direct message from bridge A reaches bridge B; A\'s delivery is delivered only by the ack', async () => {
  const sent = await a.call('POST', '/api/messages/send', { body: { to: prefix(radioB), text: 'camp at the saddle' } });
  assert.is(sent.status, 202, sent.text);
  const heard = await inbound(b, 'camp at the saddle');
  assert.is(heard.from, prefix(radioA), 'the sender is A\'s public-key prefix');
  const d = await until('delivered', async () => {
    const r = await a.call('GET', `/api/deliveries/${sent.body.deliveries[0].id}`);
    return r.body.state === 'delivered' && r.body;
  });
  assert.ok(d.result && Object.keys(d.result).some((k) => /ack/.test(k)), JSON.stringify(d.result));
});

test('lost acks: retried, the path reset to flood before the last attempt, then delivered; all acks lost: dead with the reason', async () => {
  // The first two acks on their way to A are lost: attempts 1 and 2 fail, the third (flood) is acknowledged.
  radioA.loseAcks(2);
  const sent = await a.call('POST', '/api/messages/send', { body: { to: prefix(radioB), text: 'two acks lost' } });
  await inbound(b, 'two acks lost');
  const d = await until('delivered after retries', async () => {
    const r = await a.call('GET', `/api/deliveries/${sent.body.deliveries[0].id}`);
    return r.body.state === 'delivered' && r.body;
  }, 30_000);
  assert.is(d.attempts, 3, JSON.stringify(d));
  const stored = (await b.call('GET', '/api/messages?direction=inbound&limit=200')).body.items.filter((m: { text: string | null }) => m.text === 'two acks lost');
  assert.is(stored.length, 1, 'B heard it three times and stored it once');

  radioA.loseAcks(100);
  const lost = await a.call('POST', '/api/messages/send', { body: { to: prefix(radioB), text: 'never acknowledged' } });
  const dead = await until('dead', async () => {
    const r = await a.call('GET', `/api/deliveries/${lost.body.deliveries[0].id}`);
    return r.body.state === 'dead' && r.body;
  }, 30_000);
  assert.match(dead.last_error, /ERR_MESHCORE_NO_ACK/);
  assert.is(dead.attempts, 3);
  radioA.faults.lostAcks = 0;
});

test('one bridge links Meshtastic and MeshCore: a mesh node\'s text reaches a MeshCore user by one rule, the reply comes back by another', async () => {
  const far = meshtasticSimMesh(meshtasticChannel).addRemoteNode({ num: 0x0badcafe, long_name: 'Trail crew', short_name: 'TRL' });
  const mt = await b.call('POST', '/api/interfaces', { body: { name: 'mt', kind: 'meshtastic', device: `sim://${meshtasticChannel}` } });
  assert.is(mt.status, 201, mt.text);
  await online(b, 'mt');
  await rule(b, { name: 'mt-to-hiker', match: { direction: 'inbound', interfaces: ['mt'] }, destinations: [{ interface: 'mc', to: prefix(hiker) }] });
  await rule(b, { name: 'hiker-to-mt', match: { direction: 'inbound', interfaces: ['mc'], from: [prefix(hiker)] }, destinations: [{ interface: 'mt', to: '!0badcafe' }] });
  const received: string[] = [];
  hiker.on('received', (m: { text: string }) => received.push(m.text));
  far.sendText(0xffffffff, 'hiker, where are you?');
  await until('the hiker\'s radio to receive it', () => received.includes('hiker, where are you?'));
  // The hiker answers from the MeshCore app: a direct message to bridge B's radio.
  mesh.sendDirect(hiker, radioB.publicKey, { from: hiker.publicKey, text: 'at the hut', timestamp: Math.floor(Date.now() / 1000), txtType: 0, attempt: 0, flood: true }, () => false);
  await until('the trail crew to get the answer', () => far.received.some((p) => new TextDecoder().decode(p.decoded?.payload ?? new Uint8Array()) === 'at the hut'));
});

test('messages that wait on the radio while the bridge is stopped are all stored after it starts, each once', async () => {
  await b.stop();
  for (let i = 1; i <= 5; i++) await a.call('POST', '/api/messages/send', { body: { to: prefix(radioB), text: `while away ${i}` } });
  await until('the five waiting on B\'s radio', () => radioB.waiting >= 5);
  b = await startTestBridge({ dir: dirB });
  await online(b, 'mc');
  for (let i = 1; i <= 5; i++) await inbound(b, `while away ${i}`);
  await new Promise((r) => setTimeout(r, 300));
  const all = (await b.call('GET', '/api/messages?direction=inbound&limit=200')).body.items.filter((m: { text: string | null }) => m.text?.startsWith('while away'));
  assert.is(all.length, 5, 'each once');
});

test.run();
