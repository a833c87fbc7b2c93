import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BearerEvents, InboundFrame, SendResult } from '../../../../src/bearers/bearer.ts';
import { LxmfEndpoint } from '../../../../src/bearers/rnode/lxmf/endpoint.ts';
import { CONTEXT, DESTINATION_TYPE } from '../../../../src/bearers/rnode/reticulum/constants.ts';
import { decodePacket } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { silentLogger } from '../../../../src/lib/log.ts';

// Links and resources between two endpoints of ours on a fake clock, with packets lost on the
// way (docs/reticulum.md, "Links" and "Large messages"): missing parts are asked for again and
// sent again; a link whose peer goes silent goes stale and is torn down; a resource that cannot
// complete fails retryable and a retry delivers the message once. The real Reticulum checks the
// same in test/e2e/lxmf-link.test.ts and lxmf-resource.test.ts.

const clock = new FakeClock(Date.parse('2026-11-24T06:00:00Z'));
const flush = async () => {
  for (let i = 0; i < 4; i++) await new Promise((r) => setImmediate(r));
};

interface Side { e: LxmfEndpoint; air: Uint8Array[]; received: InboundFrame[] }

function side(name: string): Side {
  const s = { air: [], received: [] } as unknown as Side;
  const map = new Map<string, string>();
  const events: BearerEvents = { receive: (f) => (s.received.push(f), true), state: () => {}, nodes: () => {} };
  s.e = new LxmfEndpoint({
    interfaceName: name, clock, log: silentLogger, events, state: { get: (k) => map.get(k) ?? null, set: (k, v) => (v === null ? map.delete(k) : map.set(k, v)) },
    displayName: name, announceIntervalS: 1800, bitrateBps: 5468, proofTimeoutMs: 30_000,
    transmit: async (p): Promise<SendResult> => (s.air.push(p), { ok: true }),
  });
  return s;
}

/** Moves packets both ways until `done` settles, advancing the clock when the air is quiet. `drop`
 *  decides per packet whether it is lost. */
async function pump(a: Side, b: Side, done: Promise<unknown>, drop: (raw: Uint8Array, from: Side) => boolean = () => false, maxMs = 600_000): Promise<void> {
  let settled = false;
  void done.then(() => (settled = true));
  for (let spent = 0; !settled && spent < maxMs;) {
    await flush();
    let moved = 0;
    for (const [from, to] of [[a, b], [b, a]] as const) {
      for (const raw of from.air.splice(0)) {
        moved++;
        if (!drop(raw, from)) to.e.onPacket(raw, { rssi_dbm: -90 });
      }
    }
    if (!moved) {
      clock.advance(250);
      spent += 250;
    }
  }
  await flush();
}

function frame(to: string, text: string, id = 'd1') {
  return { deliveryId: id, messageId: 'm1', to, channel: null, kind: 'text' as const, text, payload: new TextEncoder().encode(text) };
}

async function pair(): Promise<[Side, Side]> {
  const a = side('alice');
  const b = side('bob');
  a.e.online();
  b.e.online();
  clock.advance(0);
  await flush();
  for (const raw of a.air.splice(0)) b.e.onPacket(raw, {});
  for (const raw of b.air.splice(0)) a.e.onPacket(raw, {});
  return [a, b];
}

const contextOf = (raw: Uint8Array) => {
  const p = decodePacket(raw);
  return p.ok && p.packet.destinationType === DESTINATION_TYPE.LINK ? p.packet.context : -1;
};

test('a resource with parts lost on the way: the missing parts are asked for again, and it arrives whole, once', async () => {
  const [a, b] = await pair();
  const text = 'R'.repeat(3000);
  let parts = 0;
  const sending = a.e.send(frame(b.e.addressHex, text));
  await pump(a, b, sending, (raw) => contextOf(raw) === CONTEXT.RESOURCE && ++parts % 3 === 2);
  const r = await sending;
  assert.ok(r.ok && r.meta?.method === 'resource', JSON.stringify(r));
  assert.is(b.received.filter((f) => f.text === text).length, 1);
  assert.equal([b.received[0].meta.lxmf_method, b.received[0].meta.signature], ['resource', 'valid']);
  const s = a.e.stats();
  assert.ok((s.resource_parts_resent as number) >= 1, JSON.stringify(s));
  a.e.close();
  b.e.close();
});

test('a link whose peer goes silent turns stale and is torn down; a resource on it fails retryable, and the retry delivers once', async () => {
  const [a, b] = await pair();
  const text = 'S'.repeat(2000);
  // Everything from b is lost once the first part has gone out: the resource cannot complete.
  let cut = false;
  const first = a.e.send(frame(b.e.addressHex, text));
  await pump(a, b, first, (raw, from) => {
    if (from === a && contextOf(raw) === CONTEXT.RESOURCE) cut = true;
    return cut && from === b;
  }, 3_600_000);
  const r1 = await first;
  assert.ok(!r1.ok && r1.retryable && /ERR_LXMF_LINK/.test(r1.error), JSON.stringify(r1));
  assert.is(b.received.length, 0, 'nothing stored from an incomplete resource');
  // The dispatcher tries again later: a new link, and the message arrives once.
  const second = a.e.send(frame(b.e.addressHex, text));
  await pump(a, b, second);
  const r2 = await second;
  assert.ok(r2.ok, JSON.stringify(r2));
  assert.is(b.received.filter((f) => f.text === text).length, 1);
  a.e.close();
  b.e.close();
});

test('keep-alives hold an idle link open; when the peer vanishes the link goes stale and closes', async () => {
  const [a, b] = await pair();
  const sending = a.e.send(frame(b.e.addressHex, 'K'.repeat(300)));
  await pump(a, b, sending);
  assert.ok((await sending).ok);
  const links = () => a.e.stats().links as Array<{ state: string; direction: string }>;
  assert.equal(links().map((l) => [l.direction, l.state]), [['out', 'active']]);
  // Twenty idle minutes with both sides answering: the keep-alives hold it (LXMF closes its own
  // links after ten minutes without data, so this one closes, politely).
  const idle = new Promise((r) => setTimeout(r, 0));
  await pump(a, b, idle.then(() => new Promise(() => {})), () => false, 20 * 60_000);
  assert.is(links().length, 0, 'closed after 10 minutes without data');
  assert.is((b.e.stats().links as unknown[]).length, 0, 'the peer saw LINKCLOSE');
  // Another link, then b vanishes: a's link goes stale and is torn down.
  const again = a.e.send(frame(b.e.addressHex, 'K'.repeat(301), 'd2'));
  await pump(a, b, again);
  assert.ok((await again).ok);
  await pump(a, b, new Promise(() => {}), (_raw, from) => from === b, 15 * 60_000);
  assert.is(links().length, 0);
  assert.ok((a.e.stats().links_timed_out as number) >= 1, JSON.stringify(a.e.stats()));
  a.e.close();
  b.e.close();
});

test.run();
