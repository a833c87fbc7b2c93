import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_FRAME_SIZE } from '../../../../src/bearers/meshcore/codec/constants.ts';
import { encodeFrame, FrameDecoder, type FrameEvent } from '../../../../src/bearers/meshcore/codec/frame.ts';
import { commandFixtures, hex, radioFixtures, toHex } from './fixtures.ts';

// The serial/TCP framing (docs/protocols/meshcore.md 6.1): fixtures three ways, every-offset
// chunking, resynchronisation after noise, oversize and empty headers.

const cat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const frame = (body: string): FrameEvent => ({ type: 'frame', body: hex(body) });

// Written by hand: direction byte, length low, length high, body.
const fixtures = [
  { name: 'CMD_SYNC_NEXT_MESSAGE from the host', direction: 'to-radio' as const, wire: '3C 01 00 0A', body: '0A' },
  { name: 'CMD_DEVICE_QUERY from the host', direction: 'to-radio' as const, wire: '3C 02 00 16 03', body: '16 03' },
  { name: 'PUSH_CODE_MSG_WAITING from the radio', direction: 'from-radio' as const, wire: '3E 01 00 83', body: '83' },
  { name: 'RESP_CODE_SENT from the radio', direction: 'from-radio' as const, wire: '3E 0A 00 06 01 78 56 34 12 B8 0B 00 00', body: '06 01 78 56 34 12 B8 0B 00 00' },
  { name: 'a body holding the start byte and a header', direction: 'from-radio' as const, wire: '3E 04 00 3E 01 00 83', body: '3E 01 00 83' },
];

for (const f of fixtures) {
  test(`parse: ${f.name}`, () => assert.equal(new FrameDecoder(f.direction).push(hex(f.wire)), [frame(f.body)]));
  test(`generate: ${f.name}`, () => assert.is(toHex(encodeFrame(f.direction, hex(f.body))), f.wire));
  test(`round trip: ${f.name}`, () => assert.equal(new FrameDecoder(f.direction).push(encodeFrame(f.direction, hex(f.body))), [frame(f.body)]));
}

test('the length is little-endian: a 176-byte frame is B0 00 and the largest; 177 and 0 throw', () => {
  const big = new Uint8Array(MAX_FRAME_SIZE).fill(7);
  const wire = encodeFrame('from-radio', big);
  assert.is(toHex(wire.subarray(0, 3)), '3E B0 00');
  assert.equal(new FrameDecoder('from-radio').push(wire), [{ type: 'frame', body: big }]);
  assert.throws(() => encodeFrame('from-radio', new Uint8Array(MAX_FRAME_SIZE + 1)), /1 to 176 bytes, got 177/);
  assert.throws(() => encodeFrame('to-radio', new Uint8Array(0)), /got 0/);
});

// Every fixture body of the message tests, framed, in one stream each way.
const radioStream = cat(...radioFixtures.map((f) => encodeFrame('from-radio', hex(f.wire))));
const radioFrames = radioFixtures.map((f) => frame(f.wire));
const hostStream = cat(...commandFixtures.map((f) => encodeFrame('to-radio', hex(f.wire))));
const hostFrames = commandFixtures.map((f) => frame(f.wire));

for (const [name, direction, stream, expected] of [
  ['radio', 'from-radio', radioStream, radioFrames],
  ['host', 'to-radio', hostStream, hostFrames],
] as const) {
  test(`chunking: the ${name} stream split at every offset yields the same frames`, () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const d = new FrameDecoder(direction);
      const got = [...d.push(stream.subarray(0, cut)), ...d.push(stream.subarray(cut))];
      assert.equal(got, expected, `split at ${cut}`);
      assert.is(d.bufferedBytes, 0);
    }
  });
  test(`chunking: the ${name} stream fed one byte at a time`, () => {
    const d = new FrameDecoder(direction);
    const got: FrameEvent[] = [];
    for (const b of stream) got.push(...d.push(Uint8Array.of(b)));
    assert.equal(got, expected);
    assert.is(d.counts.frames, expected.length);
  });
}

test('noise between frames is skipped and counted; the other direction\'s frames are noise', () => {
  const d = new FrameDecoder('from-radio');
  const got = d.push(cat(hex('00 FF 41 42'), hex('3E 01 00 83'), hex('3C 01 00 0A'), hex('3E 01 00 0A')));
  assert.equal(got, [frame('83'), frame('0A')]);
  assert.is(d.counts.skippedBytes, 8);
});

test('an oversize header is dropped and counted, and a frame inside it is still found', () => {
  const d = new FrameDecoder('from-radio');
  // 3E FF 3E: announces 0x3EFF bytes; the decoder rescans from FF and finds 3E 01 00 83.
  const got = d.push(hex('3E FF 3E 01 00 83 3E 01 00 0A'));
  assert.equal(got, [{ type: 'oversize', length: 0x3eff }, frame('83'), frame('0A')]);
  assert.is(d.counts.oversize, 1);
  assert.is(d.counts.frames, 2);
});

test('a length just over the maximum is oversize; maxFrame raises it', () => {
  const wire = cat(hex('3E B1 00'), new Uint8Array(177).fill(1));
  assert.is(new FrameDecoder('from-radio').push(wire)[0].type, 'oversize');
  assert.equal(new FrameDecoder('from-radio', { maxFrame: 300 }).push(wire), [{ type: 'frame', body: new Uint8Array(177).fill(1) }]);
});

test('a zero length is dropped and counted as empty', () => {
  const d = new FrameDecoder('to-radio');
  assert.equal(d.push(hex('3C 00 00 3C 01 00 0A')), [{ type: 'empty' }, frame('0A')]);
  assert.is(d.counts.empty, 1);
});

test('reset() throws away a half frame and the decoder goes on', () => {
  const d = new FrameDecoder('from-radio');
  assert.equal(d.push(hex('3E 05 00 01 02')), []);
  assert.ok(d.midFrame);
  assert.is(d.bufferedBytes, 5);
  d.reset();
  assert.is(d.counts.discardedPartial, 1);
  assert.equal(d.push(hex('3E 01 00 83')), [frame('83')]);
});

test.run();
