import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rng } from '../../../helpers/rng.ts';
import {
  encodeFrame, HEADER_BYTES, MAX_FRAME_PAYLOAD, MAX_TEXT_LINE, StreamDecoder, type StreamEvent, WAKE_BYTES,
} from '../../../../src/bearers/meshtastic/codec/stream.ts';

const hex = (s: string) => Uint8Array.from(s.trim().split(/\s+/).filter(Boolean).map((b) => parseInt(b, 16)));
const toHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0').toUpperCase()).join(' ');
const ascii = (s: string) => new TextEncoder().encode(s);
const cat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const frame = (payload: string): StreamEvent => ({ type: 'frame', payload: hex(payload) });

// Fixtures: wire bytes and the frame body they carry (docs/protocols/meshtastic.md 2.2, 2.5).
const fixtures = [
  { name: 'want_config_id 69420 (docs 2.2)', wire: '94 C3 00 04 18 AC 9E 04', payload: '18 AC 9E 04' },
  { name: 'heartbeat', wire: '94 C3 00 02 3A 00', payload: '3A 00' },
  {
    name: 'broadcast text "hi" (docs 2.5)',
    wire: '94 C3 00 16 0A 14 15 FF FF FF FF 22 06 08 01 12 02 68 69 35 78 56 34 12 48 03',
    payload: '0A 14 15 FF FF FF FF 22 06 08 01 12 02 68 69 35 78 56 34 12 48 03',
  },
  { name: 'empty frame (length 0 is valid)', wire: '94 C3 00 00', payload: '' },
  { name: 'payload holding 94 C3 itself', wire: '94 C3 00 03 94 C3 00', payload: '94 C3 00' },
];

for (const f of fixtures) {
  test(`parse: ${f.name}`, () => {
    assert.equal(new StreamDecoder().push(hex(f.wire)), [frame(f.payload)]);
  });
  test(`generate: ${f.name}`, () => {
    assert.is(toHex(encodeFrame(hex(f.payload))), f.wire);
  });
  test(`round trip: ${f.name}`, () => {
    assert.equal(new StreamDecoder().push(encodeFrame(hex(f.payload))), [frame(f.payload)]);
  });
}

test('a 512-byte frame is the largest: 513 throws with a clear message', () => {
  const big = new Uint8Array(MAX_FRAME_PAYLOAD).fill(7);
  const wire = encodeFrame(big);
  assert.is(toHex(wire.subarray(0, 4)), '94 C3 02 00');
  assert.equal(new StreamDecoder().push(wire), [{ type: 'frame', payload: big }]);
  assert.throws(() => encodeFrame(new Uint8Array(MAX_FRAME_PAYLOAD + 1)), /at most 512 bytes, got 513/);
});

test('WAKE_BYTES is 32 x C3 and the decoder ignores it as text noise', () => {
  assert.is(WAKE_BYTES.length, 32);
  assert.ok(WAKE_BYTES.every((b) => b === 0xc3));
  const d = new StreamDecoder();
  assert.equal(d.push(cat(WAKE_BYTES, hex('94 C3 00 02 3A 00'))), [frame('3A 00')]);
});

// A stream as a device sends it: boot log, frames, log lines between and inside chunks.
const stream = cat(
  ascii('INFO  | ??:??:?? 0 Booting\r\n'),
  ...fixtures.map((f) => hex(f.wire)),
  ascii('DEBUG | \x1b[34mradio\x1b[0m ready\n'),
  hex('94 C3 00 04 18 AC 9E 04'),
);
const expected: StreamEvent[] = [
  { type: 'text', line: 'INFO  | ??:??:?? 0 Booting' },
  ...fixtures.map((f) => frame(f.payload)),
  { type: 'text', line: 'DEBUG | radio ready' },
  frame('18 AC 9E 04'),
];

test('debug text between frames becomes lines; CR and ANSI colours are left out', () => {
  const d = new StreamDecoder();
  assert.equal(d.push(stream), expected);
  assert.is(d.counts.frames, fixtures.length + 1);
  assert.is(d.counts.textLines, 2);
  assert.is(d.bufferedBytes, 0);
});

test('chunking: every 2-way split of the stream gives the same events', () => {
  for (let cut = 0; cut <= stream.length; cut++) {
    const d = new StreamDecoder();
    const got = [...d.push(stream.subarray(0, cut)), ...d.push(stream.subarray(cut))];
    assert.equal(got, expected, `split at ${cut}`);
  }
});

test('chunking: one byte at a time, and 3-way splits', () => {
  const d = new StreamDecoder();
  const got: StreamEvent[] = [];
  for (const b of stream) got.push(...d.push(Uint8Array.of(b)));
  assert.equal(got, expected);
  for (let a = 0; a < stream.length; a += 3) {
    for (let b = a; b < stream.length; b += 7) {
      const e = new StreamDecoder();
      assert.equal([stream.subarray(0, a), stream.subarray(a, b), stream.subarray(b)].flatMap((p) => e.push(p)), expected, `${a}/${b}`);
    }
  }
});

test('a frame cut mid-way completes when the rest arrives', () => {
  const wire = hex(fixtures[2].wire);
  const d = new StreamDecoder();
  assert.equal(d.push(wire.subarray(0, 9)), []);
  assert.ok(d.midFrame);
  assert.is(d.bufferedBytes, 9);
  assert.equal(d.push(wire.subarray(9)), [frame(fixtures[2].payload)]);
  assert.not.ok(d.midFrame);
});

test('oversize header: reported, dropped, and the valid frame right behind it is not lost', () => {
  const d = new StreamDecoder();
  // 94 C3 02 01 announces 513 bytes; a real frame follows at once.
  assert.equal(d.push(hex('94 C3 02 01 94 C3 00 02 3A 00')), [{ type: 'oversize', length: 513 }, frame('3A 00')]);
  assert.is(d.counts.oversize, 1);
  // A header whose length bytes themselves start the next frame: 94 C3 | 94 C3 00 02 3A 00.
  // The bogus length is 0x94C3 = 38083; scanning resumes after the first 94, finds 94 C3 at
  // its length position and decodes the frame.
  const e = new StreamDecoder();
  assert.equal(e.push(hex('94 C3 94 C3 00 02 3A 00')), [{ type: 'oversize', length: 0x94c3 }, frame('3A 00')]);
  // Same, one byte at a time.
  const g = new StreamDecoder();
  const got = Array.from(hex('94 C3 FF FF 94 C3 00 02 3A 00')).flatMap((b) => g.push(Uint8Array.of(b)));
  assert.equal(got, [{ type: 'oversize', length: 0xffff }, frame('3A 00')]);
});

test('94 without C3 is text (an em dash is E2 80 94), and 94 94 C3 still finds the frame', () => {
  const d = new StreamDecoder();
  assert.equal(d.push(cat(ascii('a \u2014 b\n'), hex('94 94 C3 00 02 3A 00'))), [{ type: 'text', line: 'a \u2014 b' }, frame('3A 00')]);
  assert.is(d.counts.falseStarts, 2); // the 94 of the dash, and the first of 94 94
});

test('long text lines are cut at MAX_TEXT_LINE, so memory stays bounded', () => {
  const d = new StreamDecoder();
  const events = d.push(ascii('x'.repeat(MAX_TEXT_LINE * 2 + 10) + '\n'));
  assert.equal(events.map((e) => (e.type === 'text' ? e.line.length : -1)), [MAX_TEXT_LINE, MAX_TEXT_LINE, 10]);
  assert.is(d.counts.longLines, 2);
  assert.ok(d.bufferedBytes <= MAX_TEXT_LINE);
});

test('reset() drops a half frame; the next frame decodes', () => {
  const d = new StreamDecoder();
  d.push(hex('94 C3 01 00 01 02 03'));
  d.reset();
  assert.is(d.counts.discardedPartial, 1);
  assert.equal(d.push(hex('94 C3 00 02 3A 00')), [frame('3A 00')]);
});


const MAX_BUFFERED = HEADER_BYTES + MAX_FRAME_PAYLOAD + MAX_TEXT_LINE;
// Enough bytes to finish any frame in progress (header up to 4 bytes, then up to 512): after
// them the decoder is back to hunting whatever state the fuzz left it in.
const FLUSH = new Uint8Array(HEADER_BYTES + MAX_FRAME_PAYLOAD);
const PROBE = hex('94 C3 00 04 18 AC 9E 04');

test('fuzz: 1,000,000 random and mutated inputs never throw, stay bounded and leave the decoder usable', () => {
  const started = Date.now();
  const random = rng(0x3e5a7);
  const special = [0x94, 0xc3, 0x00, 0x02, 0x0a, 0x1b, 0x5b];
  const byte = () => (random() < 0.25 ? special[Math.floor(random() * special.length)] : Math.floor(random() * 256));
  const valid = [...fixtures.map((f) => hex(f.wire)), stream];
  const INPUTS = 1_000_000;
  let d = new StreamDecoder();
  let frames = 0;
  let probes = 0;
  for (let i = 0; i < INPUTS; i++) {
    let chunk: Uint8Array;
    const kind = random();
    if (kind < 0.45) {
      chunk = Uint8Array.from({ length: 1 + Math.floor(random() * 40) }, byte);
    } else if (kind < 0.9) {
      // A valid frame or stream, mutated (flip, insert, delete) and perhaps cut short.
      const base = Array.from(valid[Math.floor(random() * valid.length)]);
      for (let m = Math.floor(random() * 4); m > 0; m--) {
        const at = Math.floor(random() * base.length);
        const op = random();
        if (op < 0.4) base[at] = byte();
        else if (op < 0.7) base.splice(at, 0, byte());
        else base.splice(at, 1);
      }
      chunk = Uint8Array.from(base.slice(0, random() < 0.2 ? Math.floor(random() * base.length) : base.length));
    } else {
      // A header with a random length, some of them oversize, and a few body bytes.
      const length = Math.floor(random() * 0x10000);
      chunk = Uint8Array.from([0x94, 0xc3, length >> 8, length & 0xff, ...Array.from({ length: Math.floor(random() * 8) }, byte)]);
    }
    for (const e of d.push(chunk)) if (e.type === 'frame') frames++;
    if (d.bufferedBytes > MAX_BUFFERED) assert.unreachable(`buffer grew to ${d.bufferedBytes} at input ${i}`);
    if (i % 997 === 0) {
      // Usable afterwards: flush any half frame, then a valid frame must come out whole.
      d.push(FLUSH);
      const events = d.push(PROBE);
      const last = events.filter((e) => e.type === 'frame').at(-1);
      if (!last || toHex(last.payload) !== toHex(PROBE.subarray(4))) assert.unreachable(`probe frame lost at input ${i}`);
      probes++;
      if (i % 9970 === 0) {
        d.reset();
        assert.equal(d.push(PROBE), [frame('18 AC 9E 04')]);
      }
    }
    if (i % 200_000 === 199_999) d = new StreamDecoder();
  }
  assert.ok(frames > 10_000, `fuzz decoded only ${frames} frames`);
  assert.ok(probes > 1000);
  if (process.env.FUZZ_VERBOSE) console.log(`  fuzz took ${Date.now() - started} ms`);
});

test.run();
