import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeForIngest } from '../../../src/hub/ingest/decode.ts';
import { decodeUplinkPayload } from '../../../src/hubwire/topics.ts';

// The ingest's fast payload check must accept exactly what decodeUplinkPayload accepts, with
// the same normalised ts, and reject with the same reason and detail.

// What the ingest uses of an event: event_id, ts and the text as received (the other fields
// stay in the text; zod's copy of the object and JSON.parse's may differ in odd keys such as
// "__proto__", which nothing reads).
const view = (d: ReturnType<typeof decodeUplinkPayload>) =>
  d.ok ? { ok: true, kind: d.kind, value: 'text' in d ? { event_id: d.value.event_id, ts: d.value.ts } : d.value, text: 'text' in d ? d.text : undefined } : d;

test('the same verdict as decodeUplinkPayload on edge cases of event_id and ts', () => {
  const stamps = ['2026-01-01T00:02:03.000Z', '2026-01-01T00:02:03Z', '2026-03-01T10:00:00+01:00', '2024-02-29T23:59:59.999Z', '2023-02-29T00:00:00.000Z', '0000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z', '2026-13-01T00:00:00.000Z', '2026-01-01T24:00:00.000Z', '2026-01-01T00:00:00.1234Z', '2026-01-01T00:00:00.123+00:00', 'x', '', 7];
  const ids = ['a', '', 'x'.repeat(128), 'x'.repeat(129), 5, null, undefined];
  let compared = 0;
  for (const ts of stamps) {
    for (const event_id of ids) {
      for (const kind of ['message', 'telemetry', 'hello', 'status'] as const) {
        const payload = Buffer.from(JSON.stringify({ event_id, ts, other: [1, { a: 2 }] }));
        assert.equal(view(decodeForIngest(kind, payload)), view(decodeUplinkPayload(kind, payload)), `${kind} ${String(event_id).slice(0, 10)} ${ts}`);
        compared++;
      }
    }
  }
  for (const raw of ['[1]', 'null', '"s"', '{bad', '', ' '.repeat(300 * 1024), '{"event_id":"a","ts":"2026-01-01T00:00:00Z","__proto__":{"x":1}}']) {
    const payload = Buffer.from(raw);
    assert.equal(view(decodeForIngest('message', payload)), view(decodeUplinkPayload('message', payload)), raw.slice(0, 20));
    compared++;
  }
  // A Uint8Array that is not a Buffer works too.
  const plain = new Uint8Array(Buffer.from(JSON.stringify({ event_id: 'u', ts: '2026-01-01T00:00:00Z' })));
  assert.equal(view(decodeForIngest('position', plain)), view(decodeUplinkPayload('position', plain)));
  assert.is(compared, 14 * 7 * 4 + 7);
});

test.run();
