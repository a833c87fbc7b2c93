import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BearerEvents, SendResult } from '../../../../src/bearers/bearer.ts';
import { LxmfEndpoint } from '../../../../src/bearers/rnode/lxmf/endpoint.ts';
import { CONTEXT, PACKET_TYPE } from '../../../../src/bearers/rnode/reticulum/constants.ts';
import { decodePacket } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { createPathRequest, decodePathRequest, PATH_REQUEST_DESTINATION } from '../../../../src/bearers/rnode/reticulum/path.ts';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { silentLogger } from '../../../../src/lib/log.ts';
import { equalBytes } from '../../../../src/bearers/shared/codec/bytes.ts';

// The endpoint answers path requests for its own address with its announce in context
// PATH_RESPONSE, once per request tag and within the announce cap, and asks for the path of an
// address it holds no key for (docs/reticulum.md, "Path requests").

const clock = new FakeClock(Date.parse('2026-11-24T06:00:00Z'));
const flush = () => new Promise((r) => setImmediate(r));

function endpoint(pathWaitMs = 0) {
  const air: Uint8Array[] = [];
  const map = new Map<string, string>();
  const events: BearerEvents = { receive: () => true, state: () => {}, nodes: () => {} };
  const e = new LxmfEndpoint({
    interfaceName: 'lxmf', clock, log: silentLogger, events, state: { get: (k) => map.get(k) ?? null, set: (k, v) => (v === null ? map.delete(k) : map.set(k, v)) },
    displayName: 'hut', announceIntervalS: 1800, bitrateBps: 3125, pathWaitMs,
    transmit: async (p): Promise<SendResult> => {
      air.push(p);
      return { ok: true };
    },
  });
  return { e, air };
}

const decoded = (raw: Uint8Array) => {
  const p = decodePacket(raw);
  if (!p.ok) throw new Error(p.reason);
  return p.packet;
};

test('a path request for our address is answered with a PATH_RESPONSE announce, once per tag, within the cap', async () => {
  const { e, air } = endpoint();
  e.online();
  clock.advance(0);
  await flush();
  assert.is(air.length, 1, 'the start-up announce');
  assert.is(decoded(air[0]).context, CONTEXT.NONE);
  const gap = e.announceGapMs(air[0].length);
  clock.advance(gap);
  const tag = new Uint8Array(16).fill(7);
  e.onPacket(createPathRequest(e.address, tag), {});
  clock.advance(0);
  await flush();
  assert.is(air.length, 2);
  const answer = decoded(air[1]);
  assert.equal([answer.packetType, answer.context], [PACKET_TYPE.ANNOUNCE, CONTEXT.PATH_RESPONSE]);
  assert.ok(equalBytes(answer.destinationHash, e.address));
  // The same request again (a copy heard through another node) is not answered twice.
  e.onPacket(createPathRequest(e.address, tag), {});
  clock.advance(0);
  await flush();
  assert.is(air.length, 2);
  // A new request right away waits for the cap, then goes.
  e.onPacket(createPathRequest(e.address, new Uint8Array(16).fill(8)), {});
  clock.advance(0);
  await flush();
  assert.is(air.length, 2, 'held by the cap');
  clock.advance(gap);
  await flush();
  assert.is(air.length, 3);
  assert.is(decoded(air[2]).context, CONTEXT.PATH_RESPONSE);
  // A request for someone else is heard and counted, never answered (we forward nothing).
  e.onPacket(createPathRequest(new Uint8Array(16).fill(1)), {});
  clock.advance(gap);
  await flush();
  assert.is(air.length, 3);
  const s = e.stats();
  assert.equal([s.path_requests_heard, s.path_responses_sent], [4, 2]);
  e.close();
});

test('a send to an address without a key asks for its path, waits for the answer, then goes', async () => {
  const a = endpoint(60_000);
  const b = endpoint();
  a.e.online();
  b.e.online();
  clock.advance(0);
  await flush();
  a.air.length = 0;
  b.air.length = 0;
  const text = 'hello after a path request';
  const sending = a.e.send({ deliveryId: 'd1', messageId: 'm1', to: b.e.addressHex, channel: null, kind: 'text', text, payload: new TextEncoder().encode(text) });
  await flush();
  assert.is(a.air.length, 1);
  const request = decodePathRequest(decoded(a.air[0]));
  assert.ok(request.ok && equalBytes(request.request.destinationHash, b.e.address) && equalBytes(decoded(a.air[0]).destinationHash, PATH_REQUEST_DESTINATION));
  b.e.onPacket(a.air.shift()!, {});
  clock.advance(b.e.announceGapMs(200));
  await flush();
  assert.is(b.air.length, 1, 'b answered');
  a.e.onPacket(b.air.shift()!, {});
  for (let i = 0; i < 5; i++) await flush();
  assert.is(a.air.length, 1, 'the message went once the answer came');
  b.e.onPacket(a.air.shift()!, {});
  for (let i = 0; i < 5; i++) await flush();
  a.e.onPacket(b.air.shift()!, {});
  const r = await sending;
  assert.ok(r.ok, JSON.stringify(r));
  // Nobody answers for an unknown address: after the wait it fails, retryable.
  const lost = a.e.send({ deliveryId: 'd2', messageId: 'm2', to: '00'.repeat(16), channel: null, kind: 'text', text: 'x', payload: new Uint8Array([120]) });
  await flush();
  clock.advance(60_000);
  const r2 = await lost;
  assert.ok(!r2.ok && r2.retryable && r2.error.startsWith('ERR_LXMF_UNKNOWN_DESTINATION'), JSON.stringify(r2));
  a.e.close();
  b.e.close();
});

test.run();
