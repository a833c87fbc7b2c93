import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BITFIELD, BROADCAST, type MeshPacket, type ToRadio } from '../../src/bearers/meshtastic/codec/messages.ts';
import { MeshtasticDevice } from '../../src/bearers/meshtastic/simulator/device.ts';
import { MeshtasticMesh, type RemoteNode } from '../../src/bearers/meshtastic/simulator/mesh.ts';
import { serveMeshtasticTcp, type SimTransport } from '../../src/bearers/meshtastic/simulator/serve.ts';
import { REPLY_CHAIN_LIMIT } from '../../src/bridge/engine/reply-guard.ts';
import type { TestBridge } from '../helpers/bridge.ts';
import { createMeshInterface, keepProcessAlive, nodeIdOf, startMeshBridge, waitOnline, waitUntil } from '../helpers/meshtastic.ts';
import { createRule } from '../helpers/routing.ts';

// Two bridges on one simulated mesh, each with a `{from}` auto-reply for texts heard on its
// Meshtastic interface (bridge A on a 2.8 board, bridge B on a 2.7 one), and a person's node
// that marks nothing. What an operator sees: every packet a bridge sends carries the automation
// mark (Data.bitfield bit 2); a person's "ping" is answered, a bridge's is not; a marked text
// can be picked out by a rule; and when the marks are lost on the way, the loop guard still
// stops the two bridges answering each other after a bounded number of messages.

const mesh = new MeshtasticMesh();
const devA = new MeshtasticDevice({ name: 'e2e-auto-a', mesh, firmware: '2.8' });
const devB = new MeshtasticDevice({ name: 'e2e-auto-b', mesh });
const idA = nodeIdOf(devA);
const idB = nodeIdOf(devB);
let person: RemoteNode;
let tcpA: SimTransport;
let tcpB: SimTransport;
let a: TestBridge;
let b: TestBridge;
let botsRule: any;
let release: () => void;
const written: MeshPacket[] = [];

const marked = (p: MeshPacket) => ((p.decoded?.bitfield ?? 0) & BITFIELD.IS_AUTOMATION) !== 0;

async function inbound(t: TestBridge): Promise<any[]> {
  const r = await t.call('GET', '/api/messages?interface=mesh');
  assert.is(r.status, 200, r.text);
  return r.body.items.filter((m: any) => m.direction === 'inbound');
}

async function deliveries(t: TestBridge): Promise<any[]> {
  const r = await t.call('GET', '/api/deliveries');
  assert.is(r.status, 200, r.text);
  return r.body.items;
}

/** Waits until `count` has not changed for `quietMs`; returns it. */
async function settled(count: () => Promise<number>, quietMs = 1500, ms = 20_000): Promise<number> {
  let last = await count();
  let since = Date.now();
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = await count();
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return now;
  }
  throw new Error(`still changing after ${ms} ms (at ${last})`);
}

const autoReply = { match: { direction: 'inbound', interfaces: ['mesh'], kinds: ['text'] }, action: 'forward', destinations: [{ interface: 'mesh', to: '{from}' }] };

test.before(async () => {
  release = keepProcessAlive();
  person = mesh.addRemoteNode({ num: 0x0000abcd, long_name: 'Hiker' });
  devA.on('host-frame', (m: ToRadio) => m.packet && written.push(m.packet));
  tcpA = await serveMeshtasticTcp(devA, { port: 0 });
  tcpB = await serveMeshtasticTcp(devB, { port: 0 });
  a = await startMeshBridge();
  b = await startMeshBridge();
  await createMeshInterface(a, 'mesh', tcpA.device);
  await createMeshInterface(b, 'mesh', tcpB.device);
  botsRule = await createRule(a.call, 'bots', { match: { direction: 'inbound', interfaces: ['mesh'], automated: true }, action: 'store' });
  await createRule(a.call, 'auto-reply', { ...autoReply });
  await createRule(a.call, 'out', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'mesh', to: '{to}' }] });
  await createRule(b.call, 'auto-reply', { ...autoReply });
  await createRule(b.call, 'out', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'mesh', to: '{to}' }] });
  await waitOnline(a, 'mesh');
  await waitOnline(b, 'mesh');
});

test.after(async () => {
  await a?.stop();
  await b?.stop();
  await tcpA?.close();
  await tcpB?.close();
  devA.close();
  devB.close();
  release?.();
});

test('an unmarked text from a person is answered by both bridges, with marked answers', async () => {
  const ping = person.sendText(BROADCAST, 'ping');
  assert.not.ok(marked(ping));
  const answers = await waitUntil('both answers', () => {
    const texts = person.received.filter((p) => p.decoded?.portnum === 1);
    return texts.length === 2 && texts;
  });
  assert.equal(new Set(answers.map((p) => p.from)), new Set([devA.num, devB.num]));
  for (const p of answers) assert.ok(marked(p), 'the answer carries the automation mark');
  for (const t of [a, b]) {
    const [m] = await inbound(t);
    assert.is(m.text, 'ping');
    assert.is(m.meta.is_automation, undefined, 'a person\'s text is not marked');
  }
});

test('a bridge\'s text is marked: the other bridge does not answer it, and a rule can pick marked texts out', async () => {
  const before = (await deliveries(b)).length;
  const sent = await a.call('POST', '/api/messages/send', { body: { to: idB, text: 'ping from A' } });
  assert.is(sent.status, 202, sent.text);
  const got = await waitUntil('B to store it', async () => (await inbound(b)).find((m) => m.text === 'ping from A'));
  assert.is(got.meta.is_automation, true);
  assert.match(got.decision.reason, /marked the message as sent by an automated sender/);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.is((await deliveries(b)).length, before, 'B answered nothing');

  const back = await b.call('POST', '/api/messages/send', { body: { to: idA, text: 'status from B' } });
  assert.is(back.status, 202, back.text);
  const atA = await waitUntil('A to store it', async () => (await inbound(a)).find((m) => m.text === 'status from B'));
  assert.is(atA.meta.is_automation, true);
  assert.is(atA.rule_id, botsRule.id, 'the rule matching automated texts decided');
});

test('every packet bridge A wrote to its board carries the automation mark', () => {
  assert.ok(written.length >= 2, `A wrote ${written.length} packets`);
  for (const p of written) assert.ok(marked(p), `packet ${p.id} to ${p.to} is marked`);
});

test('with the marks lost on the way, the loop guard stops the two bridges after a bounded number of messages', async () => {
  devA.faults.dropAutomationMark = true;
  devB.faults.dropAutomationMark = true;
  const start = (await inbound(a)).length + (await inbound(b)).length;
  const sent = await a.call('POST', '/api/messages/send', { body: { to: idB, text: 'loop?' } });
  assert.is(sent.status, 202, sent.text);
  const total = await settled(async () => (await inbound(a)).length + (await inbound(b)).length);
  const exchanged = total - start;
  // The first text, then at most REPLY_CHAIN_LIMIT answers from each side.
  assert.ok(exchanged >= 2, `they did answer each other (${exchanged})`);
  assert.ok(exchanged <= 1 + 2 * REPLY_CHAIN_LIMIT, `bounded: ${exchanged} messages`);
  const last = (await inbound(a)).concat(await inbound(b)).find((m) => /loop guard/.test(m.decision.reason));
  assert.ok(last, 'a message says the loop guard held its answer');
});

test.run();
