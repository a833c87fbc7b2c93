import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeDeliver } from '../../../../src/bearers/sms/codec/deliver.ts';
import { hexToOctets } from '../../../../src/bearers/sms/codec/octets.ts';
import { decodePdu } from '../../../../src/bearers/sms/codec/pdu.ts';
import { decodeStatusReport } from '../../../../src/bearers/sms/codec/status-report.ts';
import { decodeSubmit } from '../../../../src/bearers/sms/codec/submit.ts';
import { pdu } from './helpers.ts';

// Every kind of bad input thought of, and what happens. Decoders never throw: they answer
// { ok: false, error } naming the field and the octet (0-based, SMSC prefix included).

// A good DELIVER to break: no SMSC, OA "1234" (national/unknown), GSM-7 "Test".
const HEAD = '00 04 04 81 2143 00 00 42305041030040'; // octets 0-14; UDL is octet 15
const GOOD = pdu(`${HEAD} 04 D4F29C0E`);

test('the base fixture decodes', () => {
  const r = decodeDeliver(GOOD);
  assert.ok(r.ok && r.value.userData.text === 'Test');
});

test('odd number of hex digits', () => {
  assert.equal(decodeDeliver(GOOD.slice(0, -1)), { ok: false, error: 'PDU has an odd number of hex digits (39)' });
});

test('a character that is not hex, and whitespace inside', () => {
  assert.equal(decodeDeliver('0004G4'), { ok: false, error: 'PDU is not hex: "G" at character 4' });
  assert.equal(decodeDeliver('00 04'), { ok: false, error: 'PDU is not hex: " " at character 2' });
  assert.equal(hexToOctets('0x00'), { ok: false, error: 'PDU is not hex: "x" at character 1' });
});

test('lower-case hex and whitespace around (a CR LF left on the line) are accepted', () => {
  const r = decodeDeliver(`  ${GOOD.toLowerCase()}\r\n`);
  assert.ok(r.ok && r.value.userData.text === 'Test');
});

test('not a string, empty, SMSC only', () => {
  assert.equal(decodeDeliver(null as unknown as string), { ok: false, error: 'PDU must be a hex string, got object' });
  assert.equal(decodeDeliver(''), { ok: false, error: 'PDU is empty' });
  assert.equal(decodeDeliver('00'), { ok: false, error: 'PDU ends before the TPDU first octet at octet 1' });
  assert.equal(decodeDeliver('07919471016700F0'), { ok: false, error: 'PDU ends before the TPDU first octet at octet 8' });
});

test('short PDU: every truncation of the fixture fails and names where', () => {
  for (let n = 1; n < GOOD.length / 2; n++) {
    const r = decodeDeliver(GOOD.slice(0, 2 * n));
    assert.ok(!r.ok, `cut to ${n} octets`);
    if (!r.ok) assert.match(r.error, / at octet \d+$/);
  }
  assert.equal(decodeDeliver(GOOD.slice(0, 2 * 7)), { ok: false, error: 'PDU ends before TP-DCS at octet 7' });
  assert.equal(decodeDeliver(GOOD.slice(0, 2 * 10)), { ok: false, error: 'PDU ends inside TP-SCTS: 7 octets needed, 2 left at octet 8' });
});

test('UDL longer than the data', () => {
  assert.equal(decodeDeliver(pdu(`${HEAD} 05 D4F29C0E`)), { ok: false, error: 'TP-UDL 5 septets needs 5 octets but only 4 follow at octet 15' });
  assert.equal(decodeDeliver(pdu(`00 04 04 81 2143 00 08 42305041030040 04 0041`)), { ok: false, error: 'TP-UDL 4 octets but only 2 follow at octet 15' });
});

test('UDL beyond the maximum: 161 septets, 141 octets', () => {
  assert.equal(decodeDeliver(pdu(`${HEAD} A1`) + '00'.repeat(141)), { ok: false, error: 'TP-UDL 161 exceeds 160 septets at octet 15' });
  assert.equal(decodeDeliver(pdu(`00 04 04 81 2143 00 04 42305041030040 8D`) + '00'.repeat(141)), { ok: false, error: 'TP-UDL 141 exceeds 140 octets at octet 15' });
});

test('octets after the user data are ignored', () => {
  const r = decodeDeliver(GOOD + 'FFFF');
  assert.ok(r.ok && r.value.userData.text === 'Test');
});

test('UDH length past the end of the user data', () => {
  // UDHI set, UDL 4 septets = 4 octets, UDHL 05 needs 6
  assert.equal(decodeDeliver(pdu('00 44 04 81 2143 00 00 42305041030040 04 05 00 03 01')), { ok: false, error: 'UDHL 5 runs past the user data (4 octets) at octet 16' });
  // UDHI set but the user data is empty: no room for the UDHL
  assert.equal(decodeDeliver(pdu('00 44 04 81 2143 00 04 42305041030040 00')), { ok: false, error: 'PDU ends before UDHL at octet 16' });
});

test('UDHI with an empty UDL when more octets follow: UDHL 0 > 0 octets of user data', () => {
  assert.equal(decodeDeliver(pdu('00 44 04 81 2143 00 04 42305041030040 00 00')), { ok: false, error: 'UDHL 0 runs past the user data (0 octets) at octet 16' });
});

test('an IE whose length runs past the header, and an IE cut after its identifier', () => {
  assert.equal(decodeDeliver(pdu('00 44 04 81 2143 00 04 42305041030040 07 04 00 05 01 02 03 04')), { ok: false, error: 'IE 00 length 5 runs past the user data header at octet 18' });
  assert.equal(decodeDeliver(pdu('00 44 04 81 2143 00 04 42305041030040 02 01 05')), { ok: false, error: 'user data header ends inside IE 05 at octet 17' });
});

test('a GSM-7 header taking more septets than TP-UDL', () => {
  // UDL 6 septets = 6 octets; UDHL 5 fits the octets but the header is 7 septets.
  assert.equal(decodeDeliver(pdu('00 44 04 81 2143 00 00 42305041030040 06 05 00 03 01 02 01')), { ok: false, error: 'user data header takes 7 septets, TP-UDL is 6 at octet 15' });
  // UDL 7: header only, no text
  const r = decodeDeliver(pdu('00 44 04 81 2143 00 00 42305041030040 07 05 00 03 01 02 01 00'));
  assert.ok(r.ok && r.value.userData.text === '');
});

test('bad semi-octets in the originator', () => {
  assert.equal(decodeDeliver(pdu('00 04 04 81 F243 00 00 42305041030040 00')), { ok: false, error: 'TP-OA: filler semi-octet F inside the number (digit 2 of 4) at octet 4' });
});

test('address and SMSC lengths past their maximum', () => {
  assert.equal(decodeDeliver(pdu('00 04 FF 81')), { ok: false, error: 'TP-OA length 255 exceeds 20 semi-octets at octet 2' });
  assert.equal(decodeDeliver(pdu('FF 91')), { ok: false, error: 'SMSC length 255 exceeds 11 octets at octet 0' });
});

test('UCS-2 user data with an odd number of octets', () => {
  assert.equal(decodeDeliver(pdu('00 04 04 81 2143 00 08 42305041030040 03 004100')), { ok: false, error: 'UCS-2 user data has an odd number of octets (3) at octet 16' });
});

test('the wrong decoder for the message type, and the reserved MTI', () => {
  assert.equal(decodeDeliver('0011'), { ok: false, error: 'TP-MTI 1 is not SMS-DELIVER (0) at octet 1' });
  assert.equal(decodeSubmit(GOOD), { ok: false, error: 'TP-MTI 0 is not SMS-SUBMIT (1) at octet 1' });
  assert.equal(decodeStatusReport(GOOD), { ok: false, error: 'TP-MTI 0 is not SMS-STATUS-REPORT (2) at octet 1' });
  assert.equal(decodePdu('0003'), { ok: false, error: 'TP-MTI 3 is reserved at octet 1' });
});

test('decodePdu dispatches on TP-MTI', () => {
  const d = decodePdu(GOOD);
  assert.ok(d.ok && d.value.type === 'deliver');
  const s = decodePdu('0011000B911346610089F60000AA0AE8329BFD4697D9EC37');
  assert.ok(s.ok && s.value.type === 'submit');
  const r = decodePdu(pdu('00 06 01 04 81 2143 42305041030040 42305041030040 00'));
  assert.ok(r.ok && r.value.type === 'status-report');
  assert.equal(decodePdu('zz'), { ok: false, error: 'PDU is not hex: "z" at character 0' });
});

test('a negative or fractional tpduLength is a caller bug (RangeError)', () => {
  assert.throws(() => decodeDeliver(GOOD, { tpduLength: -1 }), RangeError);
  assert.throws(() => decodeDeliver(GOOD, { tpduLength: 1.5 }), RangeError);
});

test.run();
