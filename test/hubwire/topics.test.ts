import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeUplinkPayload, ingestSubscription, MAX_PAYLOAD_BYTES, parseUplinkTopic, uplinkTopic } from '../../src/hubwire/topics.ts';

const bytes = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));

test('topics round trip and malformed ones are named', () => {
  assert.equal(parseUplinkTopic(uplinkTopic('acme', 'brg-1', 'status')), { ok: true, tenant: 'acme', bridgeId: 'brg-1', kind: 'status' });
  assert.equal(parseUplinkTopic('fieldbridge/v1/acme/brg-1/gossip'), { ok: false, reason: 'unknown_kind' });
  for (const t of ['fieldbridge/v1/acme/brg-1', 'fieldbridge/v2/acme/b/message', 'fieldbridge/v1/acme/b/message/x', 'fieldbridge/v1//b/message', 'fieldbridge/v1/-x/b/message']) {
    assert.equal(parseUplinkTopic(t), { ok: false, reason: 'bad_topic' }, t);
  }
  assert.is(ingestSubscription(false), 'fieldbridge/v1/+/+/#');
  assert.is(ingestSubscription(true), '$share/hub/fieldbridge/v1/+/+/#');
});

test('payloads: good ones normalise ts; every bad kind has its reason', () => {
  const ok = decodeUplinkPayload('message', bytes({ event_id: 'e', ts: '2026-01-01T01:00:00+01:00', text: 'x' }));
  assert.ok(ok.ok && ok.value.ts === '2026-01-01T00:00:00.000Z');
  assert.equal(decodeUplinkPayload('status', new Uint8Array()), { ok: false, reason: 'empty' });
  assert.equal(decodeUplinkPayload('message', Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 32)), { ok: false, reason: 'too_large' });
  assert.equal(decodeUplinkPayload('message', bytes('{')), { ok: false, reason: 'bad_json' });
  for (const [kind, v] of [
    ['message', { ts: '2026-01-01T00:00:00Z' }],
    ['message', { event_id: '', ts: '2026-01-01T00:00:00Z' }],
    ['message', 'null'],
    ['status', { state: 'online', session: -1, ts: '2026-01-01T00:00:00Z' }],
    ['status', { state: 'online', session: 1.5, ts: '2026-01-01T00:00:00Z' }],
    ['hello', { version: '1', interfaces: 'mesh0', ts: '2026-01-01T00:00:00Z' }],
  ] as const) {
    const r = decodeUplinkPayload(kind, bytes(v));
    assert.is(r.ok ? 'ok' : r.reason, 'bad_payload', JSON.stringify(v));
  }
});

test('random bytes never throw', () => {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 2000; i++) {
    const buf = Buffer.from(Array.from({ length: Math.floor(rnd() * 64) }, () => Math.floor(rnd() * 256)));
    for (const kind of ['hello', 'status', 'message'] as const) decodeUplinkPayload(kind, buf);
  }
});

test.run();
