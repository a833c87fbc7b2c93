import { encode } from '@msgpack/msgpack';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BearerEvents, SendResult } from '../../../../src/bearers/bearer.ts';
import { LxmfEndpoint } from '../../../../src/bearers/rnode/lxmf/endpoint.ts';
import { createAnnounce } from '../../../../src/bearers/rnode/reticulum/announce.ts';
import { LXMF_PROPAGATION_NAME, PACKET_TYPE } from '../../../../src/bearers/rnode/reticulum/constants.ts';
import { destinationHash, lxmfDeliveryHash } from '../../../../src/bearers/rnode/reticulum/destination.ts';
import { generateIdentity } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import { encodeLxmfAppData } from '../../../../src/bearers/rnode/reticulum/lxmf-announce.ts';
import { decodePacket } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { equalBytes, toHex } from '../../../../src/bearers/shared/codec/bytes.ts';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { silentLogger } from '../../../../src/lib/log.ts';

// Which messages go to the propagation node and when the bridge refuses (docs/reticulum.md,
// "Propagation node"): a message that gets no proof directly goes to the node, with a stamp at
// the node's cost; a node asking more than propagation_max_stamp_cost is refused, permanently.

const flush = () => new Promise((r) => setImmediate(r));

function setup(nodeCost: number) {
  const clock = new FakeClock(Date.parse('2026-11-24T06:00:00Z'));
  const air: Uint8Array[] = [];
  const map = new Map<string, string>();
  const events: BearerEvents = { receive: () => true, state: () => {}, nodes: () => {} };
  const nodeIdentity = generateIdentity();
  const node = destinationHash(LXMF_PROPAGATION_NAME, nodeIdentity);
  const e = new LxmfEndpoint({
    interfaceName: 'lxmf', clock, log: silentLogger, events, state: { get: (k) => map.get(k) ?? null, set: (k, v) => (v === null ? map.delete(k) : map.set(k, v)) },
    displayName: 'hut', announceIntervalS: 1800, bitrateBps: 3125, proofTimeoutMs: 10_000,
    propagation: { node: toHex(node), syncIntervalS: 3600, maxStampCost: 20 },
    transmit: async (p): Promise<SendResult> => {
      air.push(p);
      return { ok: true };
    },
  });
  const appData = encode([false, 1795900000, true, 256, 10240, [nodeCost, 3, 18], {}]);
  e.onPacket(createAnnounce({ identity: nodeIdentity, name: LXMF_PROPAGATION_NAME, now: 1795900000, appData }), {});
  const peer = generateIdentity();
  e.onPacket(createAnnounce({ identity: peer, name: 'lxmf.delivery', now: 1795900000, appData: encodeLxmfAppData('Bob') }), {});
  return { e, air, clock, node, peer: toHex(lxmfDeliveryHash(peer)) };
}

test('a node asking a higher stamp cost than allowed is refused, permanently, after the direct attempt', async () => {
  const { e, clock, peer } = setup(24);
  assert.is(e.stats().propagation_stamp_cost, 24);
  const sending = e.send({ deliveryId: 'd1', messageId: 'm1', to: peer, channel: null, kind: 'text', text: 'hello', payload: new TextEncoder().encode('hello') });
  await flush();
  clock.advance(10_000);
  const r = await sending;
  assert.ok(!r.ok && !r.retryable, JSON.stringify(r));
  assert.match(!r.ok ? r.error : '', /ERR_LXMF_NO_PROOF.*ERR_LXMF_PROPAGATION_COST: the propagation node asks for stamp cost 24, above this interface's propagation_max_stamp_cost 20/);
});

test('without a proof the message goes to the node: a stamp at its cost, then a link to the node', async () => {
  const { e, air, clock, node, peer } = setup(8);
  const linkRequestToNode = () => air.some((p) => {
    const d = decodePacket(p);
    return d.ok && d.packet.packetType === PACKET_TYPE.LINKREQUEST && equalBytes(d.packet.destinationHash, node);
  });
  const sending = e.send({ deliveryId: 'd2', messageId: 'm2', to: peer, channel: null, kind: 'text', text: 'hello', payload: new TextEncoder().encode('hello') });
  await flush();
  assert.not.ok(linkRequestToNode(), 'first the peer itself');
  clock.advance(10_000);
  for (let i = 0; i < 500 && !linkRequestToNode(); i++) await flush();
  assert.ok(linkRequestToNode(), 'a link request to the node');
  assert.is(e.stats().propagation_stamps, 1);
  e.close();
  const r = await sending;
  assert.ok(!r.ok && r.retryable, 'the node link closed with the interface: retried later');
});

test.run();
