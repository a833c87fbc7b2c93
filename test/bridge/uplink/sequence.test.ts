import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { storedLocal, subtract } from '../../../src/bridge/uplink/sequence.ts';
import { ackCovers, type Range } from '../../../src/lib/topics.ts';

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

test.run();
