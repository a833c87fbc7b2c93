import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { clampTo, storedLocal, subtract } from '../../../src/bridge/uplink/sequence.ts';
import { ackCovers, ackView, addRanges, decodeUplinkPayload, leadingSeq, type Range } from '../../../src/hubwire/topics.ts';

// Issue 15: what an ack means for the bridge's rows (wire seq = local seq + offset).

test('an ack in local numbers: up to upto, and (upto, high] outside the gaps', () => {
  const ack = { upto: 10, high: 20, missing: [[12, 13], [17, 17]] as Range[] };
  assert.equal(storedLocal(ack, 0), [[1, 10], [11, 11], [14, 16], [18, 20]]);
  // Every local number agrees with ackCovers on its wire number.
  for (const offset of [0, 5, 15]) {
    const local = storedLocal(ack, offset);
    for (let n = 1; n <= 25; n++) {
      const inLocal = local.some(([lo, hi]) => n >= lo && n <= hi);
      assert.is(inLocal, ackCovers(ack, n + offset), `local ${n}, offset ${offset}`);
    }
  }
  assert.equal(storedLocal({ upto: 0, high: 0, missing: [] }, 0), []);
  assert.equal(storedLocal({ upto: 100, high: 100, missing: [] }, 200), [], 'numbers of an older copy of the database are not ours');
});

test('subtract', () => {
  assert.equal(subtract([1, 10], [[3, 4], [8, 20]]), [[1, 2], [5, 7]]);
  assert.equal(subtract([1, 10], [[-Infinity, 5]]), [[6, 10]]);
  assert.equal(subtract([5, 6], []), [[5, 6]]);
  assert.equal(subtract([5, 6], [[1, 100]]), []);
});

// Issue 15 review items 2 and 4.
test('an ack whose gaps are out of order or outside (upto, high] is refused; acks are clamped to what was published', () => {
  const ack = (a: object) => decodeUplinkPayload('ack', new TextEncoder().encode(JSON.stringify({ ts: '2026-01-01T00:00:00Z', ...a })));
  assert.ok(ack({ upto: 3, high: 9, missing: [[4, 4], [7, 8]] }).ok);
  assert.ok(ack(ackView(addRanges({ upto: 0, ranges: [] }, [[5, 5], [9, 12]]))).ok, 'what the hub sends passes');
  for (const bad of [
    { upto: 0, high: 2000, missing: [[30, 2000], [1, 29]] },
    { upto: 5, high: 9, missing: [[3, 4]] },
    { upto: 5, high: 9, missing: [[7, 12]] },
    { upto: 5, high: 9, missing: [[6, 8], [8, 9]] },
    { upto: 9, high: 5, missing: [] },
  ]) assert.not.ok(ack(bad).ok, JSON.stringify(bad));
  assert.equal(clampTo([[1, 10], [14, 16], [18, 20]], 15), [[1, 10], [14, 15]]);
  assert.equal(clampTo([[1, 10]], 0), []);
});

test('the seq a bridge writes first is read from the head of any payload', () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  assert.is(leadingSeq(enc('{"seq":42,"event_id":')), 42);
  assert.is(leadingSeq(enc('{"seq":9007199254740991,')), 9007199254740991);
  assert.is(leadingSeq(enc('{"seq":9007199254740992,')), null);
  assert.is(leadingSeq(enc('{"seq":0,')), null);
  assert.is(leadingSeq(enc('{"event_id":"x","seq":4,')), null);
  assert.is(leadingSeq(enc('{"seq":4')), null);
});

test.run();
