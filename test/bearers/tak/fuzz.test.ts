import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readEvent } from '../../../src/bearers/tak/cot.ts';
import { MAX_EVENT_BYTES, TakStreamDecoder } from '../../../src/bearers/tak/framing.ts';
import { rng } from '../../helpers/rng.ts';
import { ATAK_CHAT_ALL, ATAK_PLI, SERVER_PONG } from './fixtures.ts';

// Seeded fuzz of the XML reader and the stream framing (docs/style.md habit 2): 1,000,000
// inputs (random bytes, fixtures cut and mutated, hostile XML: entity declarations, deep
// nesting, long runs) never throw, and the decoder never holds more than its bound plus one
// chunk, so memory stays bounded whatever a TAK end sends.

const SEED = 0x7a4c0ffe;
const PIECES = ['<event', '</event>', '<detail>', '</detail>', '<!DOCTYPE x [<!ENTITY a "&a;&a;">]>', '&a;', '&amp;', '&#x1F4A7;', '&#0;', '<![CDATA[', ']]>', '<!--', '-->', '<?xml version="1.0"?>', '="', "='", '/>', '<', '>', '&', '"', ' ', '\u0000', '\ud800', 'é'];
const FIXTURES = [ATAK_PLI, ATAK_CHAT_ALL, SERVER_PONG];

test('fuzz: 1,000,000 inputs never throw and stay within the decoder\'s bound', () => {
  const r = rng(SEED);
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)];
  const decoder = new TakStreamDecoder();
  let events = 0;
  let invalid = 0;
  let largestChunk = 0;
  for (let i = 0; i < 1_000_000; i++) {
    let text: string;
    const mode = r();
    if (mode < 0.3) {
      // A fixture with a few pieces inserted, removed or repeated.
      text = pick(FIXTURES);
      for (let k = 1 + Math.floor(r() * 4); k > 0; k--) {
        const at = Math.floor(r() * text.length);
        const what = r();
        text = what < 0.4 ? text.slice(0, at) + pick(PIECES) + text.slice(at) : what < 0.7 ? text.slice(0, at) + text.slice(at + 1 + Math.floor(r() * 20)) : text.slice(0, at) + text.slice(at, at + 8).repeat(1 + Math.floor(r() * 50)) + text.slice(at);
      }
    } else if (mode < 0.6) {
      text = Array.from({ length: 1 + Math.floor(r() * 40) }, () => pick(PIECES)).join('');
    } else if (mode < 0.65) {
      const depth = Math.floor(r() * 40);
      text = `${'<a>'.repeat(depth)}x${'</a>'.repeat(depth)}`;
    } else {
      text = String.fromCharCode(...Array.from({ length: Math.floor(r() * 64) }, () => Math.floor(r() * 256)));
    }
    const read = readEvent(text);
    if (read.type === 'invalid') invalid++;
    // Every 1000th input is a long run, fed to the stream decoder as well.
    const chunk = Buffer.from(i % 1000 === 0 ? text.repeat(2000) : text, 'utf8');
    largestChunk = Math.max(largestChunk, chunk.length);
    const out = decoder.push(chunk);
    for (const e of out.events) readEvent(e);
    events += out.events.length;
    assert.ok(decoder.pending <= MAX_EVENT_BYTES + largestChunk, `input ${i}: ${decoder.pending} bytes held`);
  }
  assert.ok(invalid > 100_000, 'most mutated inputs are refused');
  assert.ok(events > 0, 'some whole events were framed');
  // Still usable: a fresh event after all of that is read.
  const last = decoder.push(Buffer.from(`</event>${SERVER_PONG}`)).events;
  assert.is(readEvent(last[last.length - 1]).type, 'other');
});

test.run();
