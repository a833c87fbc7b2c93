import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { planMessage } from '../../../../src/bearers/sms/codec/split.ts';
import { decodeSubmit, encodeSubmit, relativeValidity, relativeValidityMinutes } from '../../../../src/bearers/sms/codec/submit.ts';
import { fromHex, pdu, toHex } from './helpers.ts';

// The classic SMS-SUBMIT, checked octet by octet against 23.040 9.2.2.2 and 23.038 6.1.2.1.1.
const HELLO = pdu(`
  00                  // SMSC length 0: use the modem's SMSC (AT+CSCA)
  11                  // first octet: MTI 01 SUBMIT, VPF 10 relative (10); RD, SRR, UDHI, RP 0
  00                  // TP-MR: 0, the modem assigns the reference
  0B 91               // TP-DA: 11 digits, international / E.164
  13 46 61 00 89 F6   //   31 64 16 00 98 6F swapped: +31641600986, F pads the 11th digit
  00                  // TP-PID: plain short message
  00                  // TP-DCS: GSM-7
  AA                  // TP-VP relative: 170 = (170-166) = 4 days
  0A                  // TP-UDL: 10 septets
  E8 32 9B FD 46 97 D9 EC 37
  // "hellohello", h 1101000 e 1100101 l 1101100 o 1101111, LSB first:
  // 1|1101000=E8  00|110010=32  100|11011=9B  1111|1101=FD  01000|110=46
  // 100101|11=97  1101100|1=D9  1|1101100=EC  110111=37
`);

// UCS-2 part 1 of 2 with a status report requested and an explicit SMSC.
const UCS2_PART = pdu(`
  07 91 94 71 01 67 00 F0  // SMSC +49171076000
  71                  // SUBMIT (01) + VPF relative (10) + SRR (20) + UDHI (40)
  00                  // TP-MR
  0B 91 13 46 61 00 89 F6 // TP-DA +31641600986
  00 08               // TP-PID, TP-DCS UCS-2
  A7                  // TP-VP: 167 = 12 h + (167-143) * 30 min = 24 h
  0E                  // TP-UDL: 14 octets = 6 header + 8 text
  05 00 03 07 02 01   // UDH: concatenation, reference 07, 2 parts, part 1
  00 4F 00 6B D8 3D DE 00 // "O" "k" U+1F600
`);

test('generate: the classic "hellohello" PDU and its AT+CMGS length', () => {
  const p = planMessage('hellohello');
  assert.ok(p.ok);
  if (!p.ok) return;
  const s = encodeSubmit(p.plan.parts[0], { destination: '+31641600986', validity: 0xaa });
  assert.is(s.hex, HELLO);
  assert.is(s.tpduLength, 23); // 1+1+8+1+1+1+1+9: everything after the 00 SMSC octet
});

test('generate: UCS-2 part with UDHI, SRR, relative VP 24 h by default, explicit SMSC', () => {
  const part = { dcs: 0x08, udhi: true, udl: 14, userData: fromHex('050003070201 004F006BD83DDE00'), text: 'Ok😀' };
  const s = encodeSubmit(part, { destination: '+31641600986', statusReport: true, smsc: '+49171076000' });
  assert.is(s.hex, UCS2_PART);
  assert.is(s.tpduLength, 28);
});

test('parse: both fixtures', () => {
  const h = decodeSubmit(HELLO);
  assert.ok(h.ok);
  if (h.ok) {
    assert.is(h.value.userData.text, 'hellohello');
    assert.is(h.value.destination.address, '+31641600986');
    assert.equal(h.value.validity, { format: 'relative', octet: 0xaa, minutes: 4 * 1440 });
    assert.is(h.value.statusReport, false);
  }
  const u = decodeSubmit(UCS2_PART);
  assert.ok(u.ok);
  if (u.ok) {
    assert.is(u.value.userData.text, 'Ok😀');
    assert.equal(u.value.userData.udh?.concat, { reference: 7, referenceBits: 8, total: 2, sequence: 1 });
    assert.is(u.value.statusReport, true);
    assert.is(u.value.smsc?.address, '+49171076000');
    assert.equal(u.value.validity, { format: 'relative', octet: 0xa7, minutes: 1440 });
  }
});

test('options: RD, no VP (VPF 00), message reference, PID, national destination', () => {
  const p = planMessage('A');
  if (!p.ok) throw new Error(p.error);
  const s = encodeSubmit(p.plan.parts[0], { destination: '0151234567', rejectDuplicates: true, validity: null, messageReference: 9, pid: 0x41 });
  // 05 = SUBMIT + RD, no VPF; MR 09; DA 0A 81 ...; PID 41; DCS 00; UDL 01; "A" = 41
  assert.is(s.hex, '0005090A811015325476410001' + '41');
  const d = decodeSubmit(s.hex);
  assert.ok(d.ok && d.value.rejectDuplicates && d.value.validity.format === 'none' && d.value.messageReference === 9 && d.value.pid === 0x41);
});

test('decodeSubmit: absolute and enhanced validity periods are read', () => {
  const abs = decodeSubmit(pdu('00 19 00 04 81 2143 00 00 42305041030040 01 41'));
  assert.ok(abs.ok && abs.value.validity.format === 'absolute' && abs.value.validity.timestamp.local === '2024-03-05T14:30:00+01:00');
  const enh = decodeSubmit(pdu('00 09 00 04 81 2143 00 00 01020304050607 01 41'));
  assert.ok(enh.ok && enh.value.validity.format === 'enhanced' && toHex(enh.value.validity.octets) === '01020304050607');
});

test('relative validity: the 23.040 9.2.3.12.1 table at its edges', () => {
  const table: [number, number][] = [[0, 5], [143, 720], [144, 750], [167, 1440], [168, 2 * 1440], [196, 30 * 1440], [197, 5 * 10080], [255, 63 * 10080]];
  for (const [vp, minutes] of table) {
    assert.is(relativeValidityMinutes(vp), minutes, `vp ${vp}`);
    assert.is(relativeValidity(minutes), vp, `minutes ${minutes}`);
  }
  assert.is(relativeValidity(1440), 0xa7);
  assert.is(relativeValidity(1), 0);
  assert.is(relativeValidity(721), 144); // rounds up to the next step
  assert.is(relativeValidity(10 ** 9), 255);
  for (let vp = 0; vp < 256; vp++) assert.is(relativeValidity(relativeValidityMinutes(vp)), vp);
  assert.throws(() => relativeValidity(-1), RangeError);
  assert.throws(() => relativeValidity(Number.NaN), RangeError);
});

test('encoder RangeErrors are for caller bugs only', () => {
  const p = planMessage('A');
  if (!p.ok) throw new Error(p.error);
  const part = p.plan.parts[0];
  assert.throws(() => encodeSubmit(part, { destination: '+31 6' }), RangeError);
  assert.throws(() => encodeSubmit(part, { destination: '+3164', validity: 256 }), RangeError);
  assert.throws(() => encodeSubmit(part, { destination: '+3164', messageReference: -1 }), RangeError);
  assert.throws(() => encodeSubmit(part, { destination: '+3164', pid: 1.5 }), RangeError);
  assert.throws(() => encodeSubmit(part, { destination: '+3164', smsc: 'SMSC' }), RangeError);
});

test.run();
