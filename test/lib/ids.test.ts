import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newId } from '../../src/lib/ids.ts';

// Ids are the keyset pagination's order (docs/design.md section 5): prefixed, 26 Crockford
// base32 characters, strictly increasing within a process, unique. The randomness is drawn
// from a pool refilled every 256 ids, so these runs cross several refills.

const SHAPE = /^msg_[0-9A-HJKMNP-TV-Z]{26}$/;

test('ids keep their shape and sort in the order they were made, within one millisecond and across many', () => {
  const sameMs = Array.from({ length: 1000 }, () => newId('msg', 1_700_000_000_000));
  const later = Array.from({ length: 1000 }, (_, i) => newId('msg', 1_700_000_000_001 + i));
  const all = [...sameMs, ...later];
  for (const id of all) assert.match(id, SHAPE);
  for (let i = 1; i < all.length; i++) assert.ok(all[i - 1] < all[i], `${all[i - 1]} before ${all[i]}`);
  assert.is(new Set(all).size, all.length);
});

test('ids of different milliseconds carry different randomness (the pool is not reused)', () => {
  const tails = new Set(Array.from({ length: 2000 }, (_, i) => newId('dlv', 1_800_000_000_000 + i).slice(14)));
  assert.is(tails.size, 2000);
});

test('a clock that steps back never makes an id that sorts before the last one', () => {
  const a = newId('evt', 1_900_000_000_000);
  const b = newId('evt', 1_899_999_999_000);
  assert.ok(a < b);
});

test.run();
