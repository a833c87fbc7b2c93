import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  GSM7_DEFAULT_ALPHABET,
  GSM7_ESCAPE,
  GSM7_EXTENSION_TABLE,
  gsm7SeptetCount,
  gsm7Septets,
  isGsm7,
  toGsm7,
} from '../../../../src/bearers/shared/codec/gsm7.ts';

const hex = (s: string) => Uint8Array.from(s.trim().split(/\s+/).filter(Boolean).map((b) => parseInt(b, 16)));

// ---- moved from test/bridge/engine/transforms.test.ts (assertions unchanged) ----

test('isGsm7 accepts the whole GSM basic set and extension table', () => {
  const gsm = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà\f^{}\\[~]|€';
  assert.ok(isGsm7(gsm));
});

test('strip_non_gsm7 folds look-alikes and accents, and replaces the rest by "?"', () => {
  assert.is(toGsm7('“Hi” it’s 5–6 km… `ok`'), '"Hi" it\'s 5-6 km... \'ok\'');
  assert.is(toGsm7('á í ó ú ç Ł'), 'a i o u c ?'); // Ł has no decomposition
  assert.is(toGsm7('e\u0301'), 'é'); // decomposed é composes to the GSM é
  assert.is(toGsm7('q\u0301'), 'q'); // a stray combining mark goes
  assert.is(toGsm7('SOS 😀 火 \u0000'), 'SOS ? ? ?');
  assert.is(toGsm7('tab\there\u00a0nbsp'), 'tab here nbsp');
  assert.ok(isGsm7(toGsm7('any ☃ text ✓ at all ∑')));
  assert.not.ok(isGsm7('`'));
});

// ---- the tables against the GSM 03.38 grid (docs/protocols/sms.md), codes written by hand ----

test('default alphabet: 128 positions, each at its 23.038 code', () => {
  assert.is([...GSM7_DEFAULT_ALPHABET].length, 128);
  const grid: [number, string][] = [
    [0x00, '@'], [0x01, '£'], [0x02, '$'], [0x03, '¥'], [0x04, 'è'], [0x05, 'é'], [0x06, 'ù'], [0x07, 'ì'],
    [0x08, 'ò'], [0x09, '\u00c7'], [0x0a, '\n'], [0x0b, 'Ø'], [0x0c, 'ø'], [0x0d, '\r'], [0x0e, 'Å'], [0x0f, 'å'],
    [0x10, '\u0394'], [0x11, '_'], [0x12, '\u03a6'], [0x13, '\u0393'], [0x14, '\u039b'], [0x15, '\u03a9'],
    [0x16, '\u03a0'], [0x17, '\u03a8'], [0x18, '\u03a3'], [0x19, '\u0398'], [0x1a, '\u039e'],
    [0x1c, 'Æ'], [0x1d, 'æ'], [0x1e, 'ß'], [0x1f, 'É'], [0x20, ' '], [0x24, '¤'], [0x30, '0'], [0x3f, '?'],
    [0x40, '¡'], [0x41, 'A'], [0x5a, 'Z'], [0x5b, 'Ä'], [0x5c, 'Ö'], [0x5d, 'Ñ'], [0x5e, 'Ü'], [0x5f, '§'],
    [0x60, '¿'], [0x61, 'a'], [0x7a, 'z'], [0x7b, 'ä'], [0x7c, 'ö'], [0x7d, 'ñ'], [0x7e, 'ü'], [0x7f, 'à'],
  ];
  for (const [code, ch] of grid) assert.is(GSM7_DEFAULT_ALPHABET[code], ch, `code ${code.toString(16)}`);
  // 0x1B is the escape, not a character: text containing ESC is not GSM-7.
  assert.is(GSM7_ESCAPE, 0x1b);
  assert.not.ok(isGsm7('\x1b'));
  // ASCII characters without a GSM-7 code, and the small c cedilla (0x09 is the capital).
  for (const ch of ['`', '\t', '\x00', 'ç']) assert.not.ok(isGsm7(ch), JSON.stringify(ch));
});

test('extension table: the ten characters at their 23.038 codes', () => {
  assert.equal(GSM7_EXTENSION_TABLE, {
    '\f': 0x0a, '^': 0x14, '{': 0x28, '}': 0x29, '\\': 0x2f, '[': 0x3c, '~': 0x3d, ']': 0x3e, '|': 0x40, '€': 0x65,
  });
});

// ---- septets ----

const septetFixtures: { text: string; septets: string; count: number }[] = [
  { text: '', septets: '', count: 0 },
  { text: 'hellohello', septets: '68 65 6C 6C 6F 68 65 6C 6C 6F', count: 10 },
  { text: '@£$', septets: '00 01 02', count: 3 },
  { text: 'Δ_É', septets: '10 11 1F', count: 3 },
  { text: '¡¿§à', septets: '40 60 5F 7F', count: 4 },
  { text: 'a\r\nb', septets: '61 0D 0A 62', count: 4 },
  { text: '€', septets: '1B 65', count: 2 },
  { text: '[x]', septets: '1B 3C 78 1B 3E', count: 5 },
  { text: '{|}~^\\\f', septets: '1B 28 1B 40 1B 29 1B 3D 1B 14 1B 2F 1B 0A', count: 14 },
  { text: '5€ ok', septets: '35 1B 65 20 6F 6B', count: 6 },
];

for (const f of septetFixtures) {
  test(`septets: ${JSON.stringify(f.text)}`, () => {
    assert.is(gsm7SeptetCount(f.text), f.count);
    assert.equal(gsm7Septets(f.text), hex(f.septets));
  });
}

test('septets: a full single SMS is 160 basic or 80 extension characters', () => {
  assert.is(gsm7SeptetCount('a'.repeat(160)), 160);
  assert.is(gsm7SeptetCount('€'.repeat(80)), 160);
  assert.is(gsm7SeptetCount('a'.repeat(159) + '€'), 161); // one part no longer holds it
});

test('septets: text with a character outside GSM-7 has no septet count', () => {
  for (const text of ['á', 'naïve', '😀', '`', 'tab\there', '\x1b']) {
    assert.is(gsm7SeptetCount(text), null, text);
    assert.is(gsm7Septets(text), null, text);
  }
  // After the fold every text has one.
  assert.is(gsm7SeptetCount(toGsm7('naïve “quote” 😀')), 15);
});

test.run();
