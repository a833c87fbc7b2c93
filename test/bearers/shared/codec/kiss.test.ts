import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeFrame, encodeFrames, KISS_MAX_PAYLOAD, KissDecoder, type KissFrame } from '../../../../src/bearers/shared/codec/kiss.ts';
import { rng } from '../../../helpers/rng.ts';

const hex = (s: string) => Uint8Array.from(s.trim().split(/\s+/).filter(Boolean).map((b) => parseInt(b, 16)));
const toHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0').toUpperCase()).join(' ');

// Fixtures: wire bytes and the frame they carry. The first three are docs/protocols/rnode.md 1.4's
// examples; the rest cover both escapes, an empty payload and a payload of nothing but
// special bytes.
const fixtures: { name: string; wire: string; frame: KissFrame }[] = [
  { name: 'frequency 869.525 MHz', wire: 'C0 01 33 D3 E6 08 C0', frame: { command: 0x01, payload: hex('33 D3 E6 08') } },
  { name: 'bandwidth 125 kHz', wire: 'C0 02 00 01 E8 48 C0', frame: { command: 0x02, payload: hex('00 01 E8 48') } },
  { name: 'ST_ALOCK 10 %', wire: 'C0 0B 03 E8 C0', frame: { command: 0x0b, payload: hex('03 E8') } },
  { name: 'leave', wire: 'C0 0A FF C0', frame: { command: 0x0a, payload: hex('FF') } },
  { name: 'data with FEND and FESC', wire: 'C0 00 41 DB DC 42 DB DD 43 C0', frame: { command: 0x00, payload: hex('41 C0 42 DB 43') } },
  { name: 'data of special bytes only', wire: 'C0 00 DB DD DB DC DB DD DB DC C0', frame: { command: 0x00, payload: hex('DB C0 DB C0') } },
  { name: 'empty payload', wire: 'C0 0F C0', frame: { command: 0x0f, payload: hex('') } },
];

for (const f of fixtures) {
  test(`parse: ${f.name}`, () => {
    const d = new KissDecoder();
    assert.equal(d.push(hex(f.wire)), [f.frame]);
  });
  test(`generate: ${f.name}`, () => {
    assert.is(toHex(encodeFrame(f.frame.command, f.frame.payload)), f.wire);
  });
  test(`round trip: ${f.name}`, () => {
    const d = new KissDecoder();
    assert.equal(d.push(encodeFrame(f.frame.command, f.frame.payload)), [f.frame]);
  });
}

const stream = Uint8Array.from(fixtures.flatMap((f) => Array.from(hex(f.wire))));
const expected = fixtures.map((f) => f.frame);

test('chunking: the fixture stream split at every byte offset gives the same frames', () => {
  for (let cut = 0; cut <= stream.length; cut++) {
    const d = new KissDecoder();
    const got = [...d.push(stream.subarray(0, cut)), ...d.push(stream.subarray(cut))];
    assert.equal(got, expected, `split at ${cut}`);
  }
});

test('chunking: the fixture stream fed one byte at a time and split in three', () => {
  const d = new KissDecoder();
  const got: KissFrame[] = [];
  for (const b of stream) got.push(...d.push(Uint8Array.of(b)));
  assert.equal(got, expected);
  for (let a = 0; a < stream.length; a += 3) {
    for (let b = a; b < stream.length; b += 5) {
      const e = new KissDecoder();
      const parts = [stream.subarray(0, a), stream.subarray(a, b), stream.subarray(b)];
      assert.equal(parts.flatMap((p) => e.push(p)), expected, `split at ${a} and ${b}`);
    }
  }
});

test('consecutive frames may share one FEND; repeated FENDs are padding', () => {
  const d = new KissDecoder();
  assert.equal(d.push(hex('C0 C0 C0 08 46 C0 50 01 56 C0 C0')), [
    { command: 0x08, payload: hex('46') },
    { command: 0x50, payload: hex('01 56') },
  ]);
});

test('encodeFrames writes the detect burst of docs/protocols/rnode.md 1.4', () => {
  const burst = encodeFrames([
    { command: 0x08, payload: hex('73') },
    { command: 0x50, payload: hex('00') },
    { command: 0x48, payload: hex('00') },
    { command: 0x49, payload: hex('00') },
  ]);
  // Each frame carries its own FENDs; a device reads the doubled FEND as padding.
  assert.is(toHex(burst), 'C0 08 73 C0 C0 50 00 C0 C0 48 00 C0 C0 49 00 C0');
});

test('bad input: garbage before the first FEND is counted and skipped', () => {
  const d = new KissDecoder();
  assert.equal(d.push(hex('01 02 FF DB C0 08 46 C0')), [{ command: 0x08, payload: hex('46') }]);
  assert.is(d.errors.unframedBytes, 4);
});

test('bad input: a FEND in the middle of a frame restarts it; the half frame is lost', () => {
  const d = new KissDecoder();
  // "C0 00 41 42" is cut short by the FEND that starts the detect response.
  const frames = d.push(hex('C0 00 41 42 C0 08 46 C0'));
  assert.equal(frames, [
    { command: 0x00, payload: hex('41 42') },
    { command: 0x08, payload: hex('46') },
  ]);
});

test('bad input: an invalid escape drops that frame only, and is counted', () => {
  const d = new KissDecoder();
  assert.equal(d.push(hex('C0 00 41 DB 41 42 C0 08 46 C0')), [{ command: 0x08, payload: hex('46') }]);
  assert.is(d.errors.badEscape, 1);
  // A FESC right before the closing FEND is unfinished: dropped too.
  assert.equal(d.push(hex('C0 00 41 DB C0')), []);
  assert.is(d.errors.badEscape, 2);
});

test('bad input: a payload of 508 bytes passes, 509 is dropped and counted, decoding goes on', () => {
  const d = new KissDecoder();
  const max = new Uint8Array(KISS_MAX_PAYLOAD).fill(0x41);
  assert.equal(d.push(encodeFrame(0, max)), [{ command: 0, payload: max }]);
  const over = new Uint8Array(KISS_MAX_PAYLOAD + 1).fill(0x42);
  assert.equal(d.push(encodeFrame(0, over)), []);
  assert.is(d.errors.oversize, 1);
  assert.ok(d.bufferedBytes <= KISS_MAX_PAYLOAD);
  assert.equal(d.push(hex('C0 08 46 C0')), [{ command: 0x08, payload: hex('46') }]);
});

test('reset() throws away a half frame, counts it, and waits for the next FEND', () => {
  const d = new KissDecoder();
  assert.equal(d.push(hex('C0 00 41 42')), []);
  assert.ok(d.midFrame);
  d.reset();
  assert.not.ok(d.midFrame);
  assert.is(d.errors.discardedPartial, 1);
  // The tail of the old frame arrives late: it is outside any frame now.
  assert.equal(d.push(hex('43 C0 08 46 C0')), [{ command: 0x08, payload: hex('46') }]);
  assert.is(d.errors.unframedBytes, 1);
  d.reset(); // nothing in progress: nothing counted
  assert.is(d.errors.discardedPartial, 1);
});

test('encodeFrame refuses a command byte that cannot be sent raw', () => {
  assert.throws(() => encodeFrame(0xc0), /C0 and DB/);
  assert.throws(() => encodeFrame(0xdb), /C0 and DB/);
  assert.throws(() => encodeFrame(256), /C0 and DB/);
});


test('fuzz: 300,000 random and mutated chunks never throw, stay bounded, and leave the decoder usable', () => {
  const random = rng(0x6b155);
  const special = [0xc0, 0xdb, 0xdc, 0xdd];
  const byte = () => (random() < 0.3 ? special[Math.floor(random() * 4)] : Math.floor(random() * 256));
  const d = new KissDecoder();
  let frames = 0;
  for (let i = 0; i < 300_000; i++) {
    let chunk: Uint8Array;
    if (random() < 0.5) {
      chunk = Uint8Array.from({ length: 1 + Math.floor(random() * 64) }, byte);
    } else {
      // A valid frame (sometimes longer than the limit) with a few bytes flipped, cut or doubled.
      const size = random() < 0.02 ? KISS_MAX_PAYLOAD + Math.floor(random() * 40) : Math.floor(random() * 80);
      const frame = Array.from(encodeFrame(Math.floor(random() * 0xc0), Uint8Array.from({ length: size }, byte)));
      for (let m = Math.floor(random() * 3); m > 0; m--) {
        const at = Math.floor(random() * frame.length);
        const op = random();
        if (op < 0.4) frame[at] = byte();
        else if (op < 0.7) frame.splice(at, 1);
        else frame.splice(at, 0, frame[at]);
      }
      chunk = Uint8Array.from(frame.slice(0, random() < 0.2 ? Math.floor(random() * frame.length) : frame.length));
    }
    for (const f of d.push(chunk)) {
      frames++;
      if (f.payload.length > KISS_MAX_PAYLOAD) assert.unreachable(`frame of ${f.payload.length} bytes`);
    }
    if (d.bufferedBytes > KISS_MAX_PAYLOAD) assert.unreachable(`buffer grew to ${d.bufferedBytes}`);
    if (random() < 0.001) d.reset();
  }
  assert.ok(frames > 1000, `only ${frames} frames decoded`);
  const total = d.errors.badEscape + d.errors.oversize + d.errors.unframedBytes;
  assert.ok(total > 0, 'fuzz input must have produced counted errors');
  // Still usable: a clean frame after all that comes out whole.
  const after = d.push(hex('C0 01 33 D3 E6 08 C0'));
  assert.equal(after[after.length - 1], { command: 0x01, payload: hex('33 D3 E6 08') });
});

test.run();
