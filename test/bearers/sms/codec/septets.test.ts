import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gsm7Septets } from '../../../../src/bearers/shared/codec/gsm7.ts';
import { packSeptets, septetsToText, textToUcs2, ucs2ToText, unpackSeptets } from '../../../../src/bearers/sms/codec/septets.ts';
import { udhSeptets } from '../../../../src/bearers/sms/codec/udh.ts';
import { fromHex, rng, toHex } from './helpers.ts';

test('pack: "hellohello" is E8 32 9B FD 46 97 D9 EC 37 (worked by hand in submit.test.ts)', () => {
  assert.is(toHex(packSeptets(gsm7Septets('hellohello')!)), 'E8329BFD4697D9EC37');
  assert.is(septetsToText(unpackSeptets(fromHex('E8329BFD4697D9EC37'), 10)), 'hellohello');
});

test('pack: eight septets fill seven octets exactly; seven leave 7 zero bits in the 7th octet (TP-UDL says 7, so they are no "@")', () => {
  assert.is(packSeptets(new Uint8Array(8).fill(0x7f)).length, 7);
  assert.is(toHex(packSeptets(new Uint8Array(8).fill(0x7f))), 'FFFFFFFFFFFFFF');
  assert.is(toHex(packSeptets(new Uint8Array(7).fill(0x7f))), 'FFFFFFFFFFFF01');
});

test('fill bits: the first septet after a 6-octet header starts at bit 1 (23.040 9.2.3.24)', () => {
  assert.equal(udhSeptets(6), { septets: 7, fillBits: 1 });
  assert.equal(udhSeptets(7), { septets: 8, fillBits: 0 });
  assert.equal(udhSeptets(1), { septets: 2, fillBits: 6 });
  // "Hi": H 1001000, i 1101001. Fill bit 0, then H in bits 1-7: 1001000|0 = 90; i in bits 0-6: 69.
  assert.is(toHex(packSeptets(gsm7Septets('Hi')!, 1)), '9069');
  assert.is(septetsToText(unpackSeptets(fromHex('9069'), 2, 1)), 'Hi');
  for (let fill = 0; fill <= 6; fill++) {
    const s = gsm7Septets('The quick brown fox {jumps} €100')!;
    assert.equal(unpackSeptets(packSeptets(s, fill), s.length, fill), s, `fill ${fill}`);
  }
  assert.throws(() => packSeptets(new Uint8Array(1), 7), RangeError);
  assert.throws(() => packSeptets(Uint8Array.of(0x80)), RangeError);
});

test('septetsToText: extension table after 1B; unknown extension code shows the default character', () => {
  assert.is(septetsToText(Uint8Array.of(0x1b, 0x65, 0x1b, 0x3c, 0x1b, 0x3e)), '€[]');
  assert.is(septetsToText(Uint8Array.of(0x1b, 0x41)), 'A'); // 1B 41 is undefined: shows A
  assert.is(septetsToText(Uint8Array.of(0x41, 0x1b)), 'A '); // lone escape at the end: space
  assert.is(septetsToText(Uint8Array.of(0x1b, 0x1b, 0x41)), ' A'); // ESC ESC: space
});

test('unpack reads bits past the end as zero (callers check lengths first)', () => {
  assert.equal(unpackSeptets(Uint8Array.of(0xff), 3), Uint8Array.of(0x7f, 0x01, 0x00));
});

test('UCS-2: big-endian code units, a character outside the BMP as its surrogate pair', () => {
  assert.is(toHex(textToUcs2('Hi 😀')), '004800690020D83DDE00');
  assert.is(ucs2ToText(fromHex('004800690020D83DDE00')), 'Hi 😀');
  assert.is(ucs2ToText(fromHex('D83D')), '\ud83d'); // a lone half is kept for reassembly
  assert.is(ucs2ToText(fromHex('D83D')) + ucs2ToText(fromHex('DE00')), '😀');
  assert.is(ucs2ToText(fromHex('00410042FF')), 'AB'); // odd last octet ignored here
});

test('UCS-2 of a long random text round-trips (chunked String.fromCharCode)', () => {
  const random = rng(7);
  const text = Array.from({ length: 20000 }, () => String.fromCharCode(Math.floor(random() * 0xd800))).join('');
  assert.is(ucs2ToText(textToUcs2(text)), text);
});

test.run();
