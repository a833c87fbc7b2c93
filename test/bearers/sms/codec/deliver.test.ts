import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeDeliver, encodeDeliver, type SmsDeliver } from '../../../../src/bearers/sms/codec/deliver.ts';
import { planMessage } from '../../../../src/bearers/sms/codec/split.ts';
import { fromHex, pdu, toHex } from './helpers.ts';

// Fixtures written by hand from 23.040 9.2.2.1 (SMS-DELIVER), 9.1.2.5 (addresses), 9.2.3.11
// (SCTS), 9.2.3.24 (UDH) and 23.038 (DCS, packing). Every octet is commented.

const ALPHA = pdu(`
  07 91 94 71 01 67 00 F0   // SMSC: 7 octets follow, international, +49171076000 (F pads 11 digits)
  04                        // first octet: MTI 00 DELIVER, MMS set (no more messages), no UDHI
  0D D0                     // TP-OA: 13 semi-octets, TON 5 alphanumeric
  49 B7 F9 3D 6D 4E 01      //   "InfoSMS" packed (worked in address.test.ts)
  00                        // TP-PID: plain short message
  00                        // TP-DCS: general group, GSM-7, no class
  42 30 50 41 03 00 40      // TP-SCTS: 24-03-05 14:30:00, TZ 40 = "04" = +4 quarters = +01:00
  04                        // TP-UDL: 4 septets
  D4 F2 9C 0E               // "Test": T 1010100|e1 = D4, e>>1 110010|s 11 = F2, s>>2 11100|t 100 = 9C, t>>3 1110 = 0E
`);

const EMOJI = pdu(`
  00                        // SMSC: none given
  04                        // DELIVER, MMS set
  0D 91 94 51 21 43 65 87 F9 // TP-OA: 13 digits, international, +4915123456789
  00                        // TP-PID
  08                        // TP-DCS: general group, UCS-2
  42 21 13 32 95 95 0A      // TP-SCTS: 24-12-31 23:59:59, TZ 0A: tens 2 with sign bit 8, units 0 = -20 quarters = -05:00
  0A                        // TP-UDL: 10 octets
  00 48 00 69 00 20         // "H" "i" " "
  D8 3D DE 00               // U+1F600 as the surrogate pair D83D DE00
`);

const CONCAT_8 = pdu(`
  00                        // SMSC: none
  44                        // DELIVER, UDHI (40) + MMS (04)
  0A 81 10 15 32 54 76      // TP-OA: 10 digits, unknown/ISDN, 0151234567
  00 00                     // TP-PID, TP-DCS GSM-7
  42 30 50 41 03 00 40      // TP-SCTS 2024-03-05 14:30:00+01:00
  09                        // TP-UDL: 9 septets = 7 for the 6-octet header (49 bits) + 2 of text
  05 00 03 42 02 02         // UDH: UDHL 5, IE 00 length 3: reference 42, 2 parts, this is part 2
  90                        // fill bit 0, then "H" 1001000 in bits 1-7: 1001000|0 = 90
  69                        // "i" 1101001 in bits 0-6
`);

const CONCAT_16 = pdu(`
  00 44                     // no SMSC; DELIVER, UDHI + MMS
  0A 81 10 15 32 54 76      // TP-OA 0151234567
  00 00                     // TP-PID, TP-DCS GSM-7
  42 30 50 41 03 00 40      // TP-SCTS
  0A                        // TP-UDL: 8 septets for the 7-octet header (56 bits, no fill) + 2
  06 08 04 12 34 03 01      // UDH: UDHL 6, IE 08 length 4: reference 1234, 3 parts, part 1
  C8                        // "H" 1001000 in bits 0-6, bit 7 = "i" bit 0 (1): C8
  34                        // "i" >> 1 = 110100
`);

const ok = (hex: string): SmsDeliver => {
  const r = decodeDeliver(hex);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};

test('parse: alphanumeric sender, GSM-7, SMSC prefix', () => {
  const d = ok(ALPHA);
  assert.equal(d.smsc, { address: '+49171076000', kind: 'international', typeOfAddress: 0x91 });
  assert.equal(d.originator, { address: 'InfoSMS', kind: 'alphanumeric', typeOfAddress: 0xd0 });
  assert.is(d.userData.text, 'Test');
  assert.is(d.userData.udl, 4);
  assert.equal(d.timestamp, { local: '2024-03-05T14:30:00+01:00', utc: '2024-03-05T13:30:00.000Z', offsetMinutes: 60 });
  assert.is(d.moreMessages, false);
  assert.is(d.coding.alphabet, 'gsm7');
  assert.equal(d.warnings, []);
});

test('parse: UCS-2 with an emoji (surrogate pair), negative time zone crossing the year', () => {
  const d = ok(EMOJI);
  assert.is(d.smsc, null);
  assert.is(d.originator.address, '+4915123456789');
  assert.is(d.userData.text, 'Hi 😀');
  assert.equal(d.timestamp, { local: '2024-12-31T23:59:59-05:00', utc: '2025-01-01T04:59:59.000Z', offsetMinutes: -300 });
});

test('parse: concatenated GSM-7 part, 8-bit reference, one fill bit', () => {
  const d = ok(CONCAT_8);
  assert.is(d.userData.text, 'Hi');
  assert.equal(d.userData.udh?.concat, { reference: 0x42, referenceBits: 8, total: 2, sequence: 2 });
  assert.is(d.userData.udh?.octets, 6);
  assert.is(d.originator.address, '0151234567');
});

test('parse: concatenated GSM-7 part, 16-bit reference, no fill bits', () => {
  const d = ok(CONCAT_16);
  assert.is(d.userData.text, 'Hi');
  assert.equal(d.userData.udh?.concat, { reference: 0x1234, referenceBits: 16, total: 3, sequence: 1 });
});

const alphaPart = () => { const p = planMessage('Test'); if (!p.ok) throw new Error(p.error); return p.plan.parts[0]; };

test('generate: the fixtures byte for byte', () => {
  const at = new Date('2024-03-05T13:30:00Z');
  assert.is(encodeDeliver(alphaPart(), { originator: 'InfoSMS', timestamp: at, offsetMinutes: 60, smsc: '+49171076000' }).hex, ALPHA);
  const emoji = planMessage('Hi 😀');
  assert.ok(emoji.ok);
  if (emoji.ok) {
    const e = encodeDeliver(emoji.plan.parts[0], { originator: '+4915123456789', timestamp: new Date('2025-01-01T04:59:59Z'), offsetMinutes: -300 });
    assert.is(e.hex, EMOJI);
    assert.is(e.tpduLength, EMOJI.length / 2 - 1);
  }
  // The concatenated fixtures' parts, assembled by hand (the splitter is checked below and in split.test.ts).
  const c8 = { dcs: 0, udhi: true, udl: 9, userData: fromHex('050003420202 9069'), text: 'Hi' };
  assert.is(encodeDeliver(c8, { originator: '0151234567', timestamp: at, offsetMinutes: 60 }).hex, CONCAT_8);
  const c16 = { dcs: 0, udhi: true, udl: 10, userData: fromHex('06080412340301 C834'), text: 'Hi' };
  assert.is(encodeDeliver(c16, { originator: '0151234567', timestamp: at, offsetMinutes: 60 }).hex, CONCAT_16);
});

test('generate: the splitter writes the same header, fill bit and septets for a last part "Hi"', () => {
  const p8 = planMessage('x'.repeat(306) + 'Hi', { reference: 0x42 });
  assert.ok(p8.ok);
  if (p8.ok) assert.equal([p8.plan.parts.length, p8.plan.parts[2].udl, toHex(p8.plan.parts[2].userData)], [3, 9, '0500034203039069']);
  const p16 = planMessage('x'.repeat(304) + 'Hi', { reference: 0x1234, referenceBits: 16 });
  assert.ok(p16.ok);
  if (p16.ok) assert.equal([p16.plan.parts.length, p16.plan.parts[2].udl, toHex(p16.plan.parts[2].userData)], [3, 10, '06080412340303C834']);
});

test('round trip: encode then decode gives the text, sender and instant back', () => {
  for (const [text, originator] of [['Grüße {aus} Köln €', 'Köln'], ['日本語 👍🏽 ok', '+12025550123'], ['', '12345']]) {
    const p = planMessage(text);
    assert.ok(p.ok);
    if (!p.ok) continue;
    const at = new Date('2031-07-04T09:15:27Z');
    const d = ok(encodeDeliver(p.plan.parts[0], { originator, timestamp: at, offsetMinutes: 345, smsc: '+4477' }).hex);
    assert.is(d.userData.text, text);
    assert.is(d.originator.address, originator);
    assert.is(d.timestamp?.utc, at.toISOString());
    assert.is(d.timestamp?.local, '2031-07-04T15:00:27+05:45');
  }
});

test('DCS by coding group: class, message waiting, 8-bit data, compression', () => {
  const withDcs = (dcs: string, udl: string, ud: string) => decodeDeliver(pdu(`00 04 04 81 2143 00 ${dcs} 42305041030040 ${udl} ${ud}`));
  // F0: data coding / class group, GSM-7, class 0 (flash)
  const flash = withDcs('F0', '04', 'D4F29C0E');
  assert.ok(flash.ok && flash.value.userData.text === 'Test' && flash.value.coding.messageClass === 0 && flash.value.coding.group === 'data-class');
  // F6: 8-bit, class 2: octets handed over as data
  const data = withDcs('F6', '03', '01FF80');
  assert.ok(data.ok && data.value.userData.text === null && toHex(data.value.userData.data!) === '01FF80' && data.value.coding.messageClass === 2);
  // 11: general group with class bit (10), GSM-7, class 1
  const cls = withDcs('11', '04', 'D4F29C0E');
  assert.ok(cls.ok && cls.value.coding.messageClass === 1 && cls.value.userData.text === 'Test');
  // C8: message waiting, discard, indication active, voicemail; GSM-7 text
  const mwi = withDcs('C8', '04', 'D4F29C0E');
  assert.ok(mwi.ok && mwi.value.coding.group === 'mwi-discard');
  if (mwi.ok) assert.equal(mwi.value.coding.waiting, { active: true, type: 'voicemail' });
  // E2: message waiting, store, UCS-2, inactive, email
  const mwiU = withDcs('E2', '02', '0041');
  assert.ok(mwiU.ok && mwiU.value.userData.text === 'A');
  if (mwiU.ok) assert.equal(mwiU.value.coding.waiting, { active: false, type: 'email' });
  // 48: automatic deletion group, UCS-2
  const autoDel = withDcs('48', '02', '0041');
  assert.ok(autoDel.ok && autoDel.value.coding.group === 'auto-delete' && autoDel.value.userData.text === 'A');
  // 20: compressed GSM-7: UDL counts octets, the octets are handed over
  const zipped = withDcs('20', '02', 'ABCD');
  assert.ok(zipped.ok && zipped.value.coding.compressed && toHex(zipped.value.userData.data!) === 'ABCD');
});

test('unknown DCS (reserved group 1000-1011, alphabet 11) decodes as 8-bit with a warning', () => {
  for (const dcs of ['80', '9F', 'B4', '0C']) {
    const r = decodeDeliver(pdu(`00 04 04 81 2143 00 ${dcs} 42305041030040 02 4142`));
    assert.ok(r.ok, dcs);
    if (!r.ok) continue;
    assert.is(toHex(r.value.userData.data!), '4142');
    assert.is(r.value.coding.known, false);
    assert.match(r.value.warnings.join(), /reserved: user data kept as octets/);
  }
});

test('UDH: port addressing noted, unknown IEs skipped, bad concatenation ignored with a reason', () => {
  // 8-bit data with UDH: UDL 11, UDHL 0E; IE 05 ports 0B84 -> 23F0 (WAP push); IE 70 unknown length 1; IE 00 with total 0.
  const r = decodeDeliver(pdu('00 44 04 81 2143 00 04 42305041030040 11 0E 05 04 0B 84 23 F0 70 01 AA 00 03 01 00 01 99 88'));
  assert.ok(r.ok);
  if (!r.ok) return;
  const udh = r.value.userData.udh!;
  assert.equal(udh.ports, { destination: 0x0b84, originator: 0x23f0, bits: 16 });
  assert.is(udh.concat, null);
  assert.equal(udh.ignored, ['IE 00: total 0']);
  assert.equal(udh.elements.map((e) => e.iei), [0x05, 0x70, 0x00]);
  assert.is(toHex(r.value.userData.data!), '9988');
  const p8 = decodeDeliver(pdu('00 44 04 81 2143 00 04 42305041030040 05 04 04 02 10 20 FF'));
  assert.ok(p8.ok && p8.value.userData.udh?.ports?.bits === 8 && p8.value.userData.udh.ports.destination === 0x10);
  // sequence past total, wrong length, and a second concatenation element
  const bad = decodeDeliver(pdu('00 44 04 81 2143 00 04 42305041030040 14 13 00 03 01 02 03 00 02 01 02 00 03 05 02 01 00 03 06 02 02'));
  assert.ok(bad.ok);
  if (bad.ok) {
    assert.equal(bad.value.userData.udh?.ignored, ['IE 00: sequence 3 of 2', 'IE 00 has length 2, expected 3', 'IE 00: a second concatenation element']);
    assert.equal(bad.value.userData.udh?.concat, { reference: 5, referenceBits: 8, total: 2, sequence: 1 });
  }
});

test('a malformed SCTS keeps the message: timestamp null and a warning naming the octet', () => {
  const r = decodeDeliver(pdu('00 04 04 81 2143 00 00 42 31 50 41 03 00 40 04 D4F29C0E')); // month 13
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.is(r.value.timestamp, null);
  assert.equal(r.value.warnings, ['TP-SCTS: month 13 at octet 9']);
  assert.is(r.value.userData.text, 'Test');
  const nonBcd = decodeDeliver(pdu('00 04 04 81 2143 00 00 4A 30 50 41 03 00 40 04 D4F29C0E'));
  assert.ok(nonBcd.ok && nonBcd.value.warnings[0] === 'TP-SCTS: octet 4A is not two decimal semi-octets at octet 8');
  const feb30 = decodeDeliver(pdu('00 04 04 81 2143 00 00 42 20 03 41 03 00 40 04 D4F29C0E'));
  assert.ok(feb30.ok && feb30.value.warnings[0] === 'TP-SCTS: day 30 of month 2 at octet 10');
  const feb29 = decodeDeliver(pdu('00 04 04 81 2143 00 00 42 20 92 41 03 00 40 04 D4F29C0E'));
  assert.ok(feb29.ok && feb29.value.timestamp?.local === '2024-02-29T14:30:00+01:00');
});

test('DELIVER flags: more messages, status report indication, reply path, loop prevention', () => {
  const r = decodeDeliver(pdu('00 A8 04 81 2143 00 00 42305041030040 00'));
  assert.ok(r.ok);
  if (r.ok) {
    assert.equal([r.value.moreMessages, r.value.statusReportIndication, r.value.replyPath, r.value.loopPrevention], [true, true, true, true]);
    assert.is(r.value.userData.text, '');
  }
});

test.run();
