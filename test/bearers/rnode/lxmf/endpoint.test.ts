import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BearerEvents, DriverState, InboundFrame, NodeReport, OutboundFrame, SendResult } from '../../../../src/bearers/bearer.ts';
import { ANNOUNCE_CAP, LxmfEndpoint } from '../../../../src/bearers/rnode/lxmf/endpoint.ts';
import { toHex } from '../../../../src/bearers/shared/codec/bytes.ts';
import { LXMF_DELIVERY_NAME } from '../../../../src/bearers/rnode/reticulum/constants.ts';
import { encryptFor } from '../../../../src/bearers/rnode/reticulum/crypto.ts';
import { lxmfDeliveryHash } from '../../../../src/bearers/rnode/reticulum/destination.ts';
import { generateIdentity } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import { createAnnounce } from '../../../../src/bearers/rnode/reticulum/announce.ts';
import { encodeLxmfAppData } from '../../../../src/bearers/rnode/reticulum/lxmf-announce.ts';
import { opportunisticPlaintext, packMessage } from '../../../../src/bearers/rnode/reticulum/lxmf.ts';
import { encodePacket } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { silentLogger } from '../../../../src/lib/log.ts';

// The LXMF endpoint (bearers/rnode/lxmf/endpoint.ts) between two of its own kind, packets handed
// across by hand on a fake clock, and every kind of bad packet we could think of: each is
// dropped and counted, never stored, never thrown, and never proven (so an honest sender
// would try again). The real Reticulum and LXMF check it in test/e2e/lxmf-peer.test.ts.

class MemoryState implements DriverState {
  readonly map = new Map<string, string>();
  writes = 0;
  get(key: string): string | null {
    return this.map.get(key) ?? null;
  }
  set(key: string, value: string | null): void {
    this.writes++;
    if (value === null) this.map.delete(key);
    else this.map.set(key, value);
  }
}

interface Side {
  endpoint: LxmfEndpoint;
  state: MemoryState;
  received: InboundFrame[];
  nodes: NodeReport[];
  /** Packets it put on the air. */
  air: Uint8Array[];
  /** Answer of receive(): false = the database refused it. */
  storeOk: boolean;
}

const clock = new FakeClock(Date.parse('2026-11-24T06:00:00Z'));

function side(name: string, options: { state?: MemoryState; proofTimeoutMs?: number } = {}): Side {
  const s = { state: options.state ?? new MemoryState(), received: [], nodes: [], air: [], storeOk: true } as unknown as Side;
  const events: BearerEvents = {
    receive: (f) => {
      if (!s.storeOk) return false;
      s.received.push(f);
      return true;
    },
    state: () => {},
    nodes: (n) => s.nodes.push(...n),
  };
  s.endpoint = new LxmfEndpoint({
    interfaceName: name, clock, log: silentLogger, events, state: s.state, displayName: name, announceIntervalS: 1800,
    bitrateBps: 3125, proofTimeoutMs: options.proofTimeoutMs ?? 30_000,
    transmit: async (packet): Promise<SendResult> => {
      s.air.push(packet);
      return { ok: true };
    },
  });
  return s;
}

/** Hands what `from` put on the air since last time to `to`. */
function carry(from: Side, to: Side): number {
  const packets = from.air.splice(0);
  for (const p of packets) to.endpoint.onPacket(p, { rssi_dbm: -90 });
  return packets.length;
}

const flush = () => new Promise((r) => setImmediate(r));

function frame(to: string, text: string, deliveryId = `dlv_${text.length}_${to.slice(0, 4)}`): OutboundFrame {
  return { deliveryId, messageId: 'msg_1', to, channel: null, kind: 'text', text, payload: new TextEncoder().encode(text) };
}

/** Both online and each has heard the other's announce. */
async function pair(): Promise<[Side, Side]> {
  const alice = side('alice');
  const bob = side('bob');
  alice.endpoint.online();
  bob.endpoint.online();
  clock.advance(1);
  await flush();
  carry(alice, bob);
  carry(bob, alice);
  return [alice, bob];
}

test('announces at start; the other side lists it as an LXMF node with its name; a repeated announce writes nothing', async () => {
  const [alice, bob] = await pair();
  assert.is(alice.nodes.length, 1);
  assert.equal(alice.nodes[0], { id: bob.endpoint.addressHex, network: 'lxmf', long_name: 'bob', hops_away: 0, last_heard_at: new Date(clock.now()).toISOString() });
  assert.is(alice.endpoint.stats().announces_heard, 1);
  const writes = alice.state.writes;
  bob.endpoint.offline();
  bob.endpoint.online();
  clock.advance(200_000);
  await flush();
  assert.is(carry(bob, alice), 1);
  assert.is(alice.endpoint.stats().announces_heard, 2);
  assert.is(alice.state.writes, writes, 'the same key, name and path: nothing written');
});

test('announces stay within 2 % of the bit rate: a second one too soon waits for its turn', async () => {
  const alice = side('alice-cap');
  alice.endpoint.online();
  clock.advance(1);
  await flush();
  assert.is(alice.air.length, 1);
  const gap = alice.endpoint.announceGapMs(alice.air[0].length);
  assert.is(gap, Math.ceil(((alice.air[0].length * 8) / 3125) * 1000 / ANNOUNCE_CAP));
  await alice.endpoint.announce();
  assert.is(alice.air.length, 1, 'not sent at once');
  clock.advance(gap - 10);
  await flush();
  assert.is(alice.air.length, 1);
  clock.advance(20);
  await flush();
  assert.is(alice.air.length, 2, 'sent when the cap allows');
  alice.endpoint.close();
});

test('a message is stored signed and verified, proven, and the sender counts it delivered by the proof', async () => {
  const [alice, bob] = await pair();
  const sending = bob.endpoint.send(frame(alice.endpoint.addressHex, 'hello alice'));
  await flush();
  carry(bob, alice);
  assert.is(alice.received.length, 1);
  const m = alice.received[0];
  assert.is(m.from, bob.endpoint.addressHex);
  assert.is(m.to, alice.endpoint.addressHex);
  assert.is(m.text, 'hello alice');
  assert.is(m.meta.signature, 'valid');
  assert.is(m.meta.rssi_dbm, -90);
  assert.match(String(m.dedupeKey), /^lxmf:[0-9a-f]{64}$/);
  await flush();
  assert.is(carry(alice, bob), 1, 'one proof');
  const r = await sending;
  assert.ok(r.ok, JSON.stringify(r));
  assert.is(r.ok && r.meta?.proof, 'received');
  assert.is(bob.endpoint.stats().proofs_received, 1);
});

test('a retry of one delivery is the same LXMF message (same hash), so the recipient keeps one', async () => {
  const [alice, bob] = await pair();
  const f = frame(alice.endpoint.addressHex, 'said twice', 'dlv_same');
  void bob.endpoint.send(f);
  await flush();
  clock.advance(5_000);
  void bob.endpoint.send(f);
  await flush();
  carry(bob, alice);
  assert.is(alice.received.length, 2);
  assert.is(alice.received[0].dedupeKey, alice.received[1].dedupeKey);
  bob.endpoint.close();
});

test('after a reconnect the announce waits only for the cap, not for the next interval', async () => {
  const alice = side('alice-again');
  alice.endpoint.online();
  clock.advance(1);
  await flush();
  assert.is(alice.air.length, 1);
  const gap = alice.endpoint.announceGapMs(alice.air[0].length);
  clock.advance(5_000);
  alice.endpoint.offline();
  alice.endpoint.online();
  clock.advance(1);
  await flush();
  assert.is(alice.air.length, 1, 'too soon for the cap');
  clock.advance(gap);
  await flush();
  await flush();
  assert.is(alice.air.length, 2, 'sent once the cap allows');
  alice.endpoint.close();
});

test('a split delivery retried: every part keeps its first timestamp, so the recipient stores each part once', async () => {
  const [alice, bob] = await pair();
  const part = (text: string) => frame(alice.endpoint.addressHex, text, 'dlv_split');
  const one = bob.endpoint.send(part('part one'));
  await flush();
  carry(bob, alice);
  await flush();
  carry(alice, bob);
  assert.ok((await one).ok);
  clock.advance(1_000);
  const two = bob.endpoint.send(part('part two'));
  await flush();
  carry(bob, alice);
  await flush();
  alice.air.length = 0; // the proof of part two is lost
  clock.advance(30_001);
  assert.not.ok((await two).ok);
  clock.advance(5_000);
  void bob.endpoint.send(part('part one'));
  void bob.endpoint.send(part('part two'));
  await flush();
  carry(bob, alice);
  const keys = (text: string) => new Set(alice.received.filter((m) => m.text === text).map((m) => m.dedupeKey));
  assert.is(keys('part one').size, 1);
  assert.is(keys('part two').size, 1);
  bob.endpoint.close();
});

test('a sender\'s timestamp no date can hold is stored without sent_at, never thrown', async () => {
  const [alice] = await pair();
  const to = lxmfDeliveryHash(alice.endpoint.identity);
  for (const timestamp of [1e20, -1e17, Number.MAX_VALUE]) {
    const packed = packMessage({ source: generateIdentity(), destinationHash: to, timestamp, content: `at ${timestamp}` });
    alice.endpoint.onPacket(encodePacket({ destinationHash: to, data: encryptFor(alice.endpoint.identity, opportunisticPlaintext(packed)) }), {});
  }
  assert.is(alice.received.length, 3);
  assert.ok(alice.received.every((m) => m.meta.sent_at === undefined));
});

test('no proof within the timeout: a retryable failure that says so', async () => {
  const [alice, bob] = await pair();
  const sending = bob.endpoint.send(frame(alice.endpoint.addressHex, 'into the void'));
  await flush();
  bob.air.length = 0; // lost on the air
  clock.advance(30_001);
  const r = await sending;
  assert.equal(r, { ok: false, retryable: true, error: `ERR_LXMF_NO_PROOF: ${alice.endpoint.addressHex} did not prove delivery within 30 s` });
});

test('a message the database refuses is not proven, so the sender tries again', async () => {
  const [alice, bob] = await pair();
  alice.storeOk = false;
  void bob.endpoint.send(frame(alice.endpoint.addressHex, 'disk full'));
  await flush();
  carry(bob, alice);
  await flush();
  assert.is(alice.air.length, 0, 'no proof');
  bob.endpoint.close();
});

test('bad input is dropped and counted, never stored, never proven: garbage, truncation, another destination, flipped bits, a forged signature', async () => {
  const [alice, bob] = await pair();
  const carol = generateIdentity();
  const to = lxmfDeliveryHash(alice.endpoint.identity);
  const before = alice.endpoint.stats();
  // garbage and truncation
  alice.endpoint.onPacket(new Uint8Array([]), {});
  alice.endpoint.onPacket(new Uint8Array([0x00]), {});
  alice.endpoint.onPacket(new TextEncoder().encode('hello over raw lora'), {});
  // a real message, truncated at every length
  void bob.endpoint.send(frame(alice.endpoint.addressHex, 'cut short'));
  await flush();
  const whole = bob.air.splice(0)[0];
  for (let n = 0; n < whole.length; n++) alice.endpoint.onPacket(whole.subarray(0, n), {});
  // one bit flipped in every byte of the data
  for (let i = 19; i < whole.length; i++) {
    const bad = whole.slice();
    bad[i] ^= 0x04;
    alice.endpoint.onPacket(bad, {});
  }
  // for another destination
  alice.endpoint.onPacket(encodePacket({ destinationHash: lxmfDeliveryHash(carol), data: new Uint8Array(100) }), {});
  // forged: carol signs, but the source hash says bob
  const forged = packMessage({ source: carol, destinationHash: to, timestamp: clock.now() / 1000, content: 'I am bob' });
  forged.packed.set(lxmfDeliveryHash(bob.endpoint.identity), 16);
  alice.endpoint.onPacket(encodePacket({ destinationHash: to, data: encryptFor(alice.endpoint.identity, opportunisticPlaintext(forged)) }), {});
  // an announce whose signature does not match
  const announce = createAnnounce({ identity: carol, name: LXMF_DELIVERY_NAME, now: clock.now() / 1000, appData: encodeLxmfAppData('carol') });
  announce[announce.length - 1] ^= 0x01;
  alice.endpoint.onPacket(announce, {});
  await flush();
  assert.is(alice.received.length, 0, 'nothing stored');
  assert.is(alice.air.length, 0, 'nothing proven');
  const after = alice.endpoint.stats() as Record<string, number>;
  const grew = (k: string) => after[k] - (before as Record<string, number>)[k];
  assert.ok(grew('packets_malformed') >= 3, `malformed ${grew('packets_malformed')}`);
  assert.ok(grew('undecryptable') >= 1, `undecryptable ${grew('undecryptable')}`);
  assert.is(grew('packets_other_destination'), 1);
  assert.is(grew('bad_signatures'), 2, 'the forged message and the announce');
  assert.is(grew('announces_invalid'), 1);
  bob.endpoint.close();
});

test('a message from a sender never heard announcing is stored as unverified, never as verified', async () => {
  const [alice] = await pair();
  const dave = generateIdentity();
  const to = lxmfDeliveryHash(alice.endpoint.identity);
  const packed = packMessage({ source: dave, destinationHash: to, timestamp: clock.now() / 1000, title: 'hi', content: 'from dave' });
  alice.endpoint.onPacket(encodePacket({ destinationHash: to, data: encryptFor(alice.endpoint.identity, opportunisticPlaintext(packed)) }), {});
  await flush();
  assert.is(alice.received.length, 1);
  assert.is(alice.received[0].meta.signature, 'unverified');
  assert.is(alice.received[0].meta.title, 'hi');
  assert.is(alice.received[0].from, toHex(lxmfDeliveryHash(dave)));
  assert.is(alice.air.length, 1, 'proven: it reached us, whoever sent it');
});

test('sends that cannot go: not an address, too large, never announced, a peer that asks for stamps', async () => {
  const [alice, bob] = await pair();
  const r1 = await bob.endpoint.send(frame('!0000beef', 'x'));
  assert.ok(!r1.ok && !r1.retryable && r1.error.startsWith('ERR_LXMF_ADDRESS'), JSON.stringify(r1));
  const big = 'x'.repeat(bob.endpoint.maxContentBytes + 1);
  const r2 = await bob.endpoint.send(frame(alice.endpoint.addressHex, big));
  assert.ok(!r2.ok && !r2.retryable && r2.error.startsWith(`ERR_LXMF_TOO_LARGE: ${big.length} bytes`), JSON.stringify(r2));
  const r3 = await bob.endpoint.send(frame('00112233445566778899aabbccddeeff', 'x'));
  assert.ok(!r3.ok && r3.retryable && r3.error.startsWith('ERR_LXMF_UNKNOWN_DESTINATION'), JSON.stringify(r3));
  const erin = generateIdentity();
  bob.endpoint.onPacket(createAnnounce({ identity: erin, name: LXMF_DELIVERY_NAME, now: clock.now() / 1000, appData: encodeLxmfAppData('erin', 8) }), {});
  const r4 = await bob.endpoint.send(frame(toHex(lxmfDeliveryHash(erin)), 'x'));
  assert.ok(!r4.ok && !r4.retryable && r4.error.startsWith('ERR_LXMF_STAMP_REQUIRED'), JSON.stringify(r4));
  const fits = await Promise.race([bob.endpoint.send(frame(alice.endpoint.addressHex, 'y'.repeat(bob.endpoint.maxContentBytes))), flush().then(() => 'waiting')]);
  assert.is(fits, 'waiting', 'the largest message goes out');
  assert.ok(bob.air.at(-1)!.length <= 500, `${bob.air.at(-1)!.length} bytes`);
  bob.endpoint.close();
});

test('the identity and the peers it heard are kept: after a restart the address is the same and a known peer can be messaged at once', async () => {
  const [alice, bob] = await pair();
  const address = alice.endpoint.addressHex;
  assert.ok(![...alice.state.map.values()].some((v) => v.includes('"private')), 'stored as hex, under its own key');
  const again = side('alice', { state: alice.state });
  assert.is(again.endpoint.addressHex, address);
  const sending = again.endpoint.send(frame(bob.endpoint.addressHex, 'after a restart'));
  await flush();
  carry(again, bob);
  assert.is(bob.received.at(-1)?.text, 'after a restart');
  assert.is(bob.received.at(-1)?.meta.signature, 'valid', 'bob still knows alice');
  await flush();
  carry(bob, again);
  assert.ok((await sending).ok);
});

test.run();
