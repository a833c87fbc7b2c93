import { encode } from '@msgpack/msgpack';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { arrayHeader, mapHeader, readArrayHeader, readMapHeader, skipObject } from '../../../../src/bearers/rnode/reticulum/msgpack.ts';
import { hex, toHex } from './fixtures.ts';

// The structural msgpack reader LXMF parsing stands on (src/bearers/rnode/reticulum/msgpack.ts).

const values: unknown[] = [
  0, 127, 128, 255, 256, 65_535, 65_536, 2 ** 32, -1, -32, -33, -129, -32_769, -(2 ** 31) - 1, 1.5, null, true, false,
  '', 'a'.repeat(31), 'b'.repeat(32), 'c'.repeat(256), 'd'.repeat(65_536), new Uint8Array(0), new Uint8Array(300), new Uint8Array(70_000),
  [], Array.from({ length: 15 }, (_, i) => i), Array.from({ length: 16 }, (_, i) => i), Array.from({ length: 65_536 }, () => 0),
  {}, { a: 1, b: [1, { c: new Uint8Array(3) }] }, Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, i])),
];

test('skipObject finds the end of every kind of value @msgpack/msgpack writes', () => {
  for (const v of values) {
    const b = encode(v);
    assert.is(skipObject(b, 0), b.length, JSON.stringify(v)?.slice(0, 40));
    // Every proper prefix is cut short.
    for (const n of [0, 1, Math.floor(b.length / 2), b.length - 1]) if (n < b.length) assert.is(skipObject(b.subarray(0, n), 0), -1);
  }
});

test('hand-built: float 32, the ext formats, and the never-used c1', () => {
  assert.is(skipObject(hex('ca3fc00000'), 0), 5);
  assert.is(skipObject(hex('d4 01 aa'), 0), 3); // fixext 1
  assert.is(skipObject(hex('d8 01' + '00'.repeat(16)), 0), 18); // fixext 16
  assert.is(skipObject(hex('c7 02 05 aabb'), 0), 5); // ext 8 of 2 bytes
  assert.is(skipObject(hex('c9 00000001 05 aa'), 0), 7); // ext 32
  assert.is(skipObject(hex('c1'), 0), -1);
  assert.is(skipObject(hex('dd ffffffff 00'), 0), -1); // claims 4 billion elements, has one
});

test('nesting deeper than 64 is refused, not recursed into', () => {
  const deep = new Uint8Array(200).fill(0x91);
  deep[199] = 0x00;
  assert.is(skipObject(deep, 0), -1);
  const ok = Uint8Array.from([...new Uint8Array(60).fill(0x91), 0x00]);
  assert.is(skipObject(ok, 0), 61);
});

test('array and map headers: read and written in their smallest form', () => {
  assert.equal(readArrayHeader(hex('94'), 0), { count: 4, next: 1 });
  assert.equal(readArrayHeader(hex('dc0010'), 0), { count: 16, next: 3 });
  assert.equal(readArrayHeader(hex('dd00010000'), 0), { count: 65_536, next: 5 });
  assert.equal(readMapHeader(hex('de0011'), 0), { count: 17, next: 3 });
  assert.is(readArrayHeader(hex('80'), 0), null);
  assert.is(readArrayHeader(hex('dc00'), 0), null);
  assert.is(toHex(arrayHeader(5)), '95');
  assert.is(toHex(arrayHeader(16)), 'dc0010');
  assert.is(toHex(mapHeader(70_000)), 'df00011170');
  for (const n of [0, 15, 16, 65_535, 65_536]) assert.is(toHex(arrayHeader(n)), toHex(encode(new Array(n).fill(0)).subarray(0, arrayHeader(n).length)));
});

test.run();
