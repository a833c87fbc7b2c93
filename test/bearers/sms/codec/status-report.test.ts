import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { classifyStatus } from '../../../../src/bearers/sms/codec/constants.ts';
import { decodeStatusReport, encodeStatusReport } from '../../../../src/bearers/sms/codec/status-report.ts';
import { pdu } from './helpers.ts';

// SMS-STATUS-REPORT by hand from 23.040 9.2.2.3.
const DELIVERED = pdu(`
  07 91 94 71 01 67 00 F0  // SMSC +49171076000
  06                       // first octet: MTI 10 STATUS-REPORT, MMS (04) set; SRQ 0: about a SUBMIT
  2A                       // TP-MR 42: what +CMGS answered
  0B 91 13 46 61 00 89 F6  // TP-RA: +31641600986
  42 30 50 41 03 00 40     // TP-SCTS 2024-03-05 14:30:00+01:00
  42 30 50 41 33 02 40     // TP-DT   2024-03-05 14:33:20+01:00
  00                       // TP-ST 00: short message received by the SME
`);

test('parse: delivered report', () => {
  const r = decodeStatusReport(DELIVERED);
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.is(r.value.messageReference, 42);
  assert.is(r.value.recipient.address, '+31641600986');
  assert.is(r.value.timestamp?.utc, '2024-03-05T13:30:00.000Z');
  assert.is(r.value.discharge?.local, '2024-03-05T14:33:20+01:00');
  assert.equal(r.value.status, { value: 0, class: 'delivered', name: 'short message received by the SME' });
  assert.is(r.value.aboutCommand, false);
  assert.is(r.value.userData, null);
  assert.equal(r.value.warnings, []);
});

test('generate and round trip: the fixture byte for byte', () => {
  const e = encodeStatusReport({
    messageReference: 42,
    recipient: '+31641600986',
    timestamp: new Date('2024-03-05T13:30:00Z'),
    discharge: new Date('2024-03-05T13:33:20Z'),
    offsetMinutes: 60,
    status: 0,
    smsc: '+49171076000',
  });
  assert.is(e.hex, DELIVERED);
  assert.is(e.tpduLength, 25);
  assert.throws(() => encodeStatusReport({ messageReference: 256, recipient: '1', timestamp: new Date(), discharge: new Date(), status: 0 }), RangeError);
});

test('+CDS without an SMSC prefix: the header length decides', () => {
  const tpdu = DELIVERED.slice(16);
  const r = decodeStatusReport(tpdu, { tpduLength: 25 });
  assert.ok(r.ok && r.value.smsc === null && r.value.messageReference === 42);
  const withPrefix = decodeStatusReport(DELIVERED, { tpduLength: 25 });
  assert.ok(withPrefix.ok && withPrefix.value.smsc?.address === '+49171076000');
  assert.equal(decodeStatusReport(DELIVERED, { tpduLength: 24 }), { ok: false, error: 'SMSC prefix of 8 octets leaves 25 TPDU octets, the header said 24 at octet 0' });
  assert.equal(decodeStatusReport(tpdu, { tpduLength: 26 }), { ok: false, error: 'PDU has 25 octets, the header said 26 TPDU octets at octet 25' });
  const noSmsc = decodeStatusReport(tpdu, { smsc: false });
  assert.ok(noSmsc.ok && noSmsc.value.messageReference === 42);
});

test('TP-ST classes and names over the whole octet (23.040 9.2.3.15)', () => {
  const cases: [number, string, string][] = [
    [0x00, 'delivered', 'short message received by the SME'],
    [0x01, 'delivered', 'short message forwarded by the SC to the SME but the SC is unable to confirm delivery'],
    [0x02, 'delivered', 'short message replaced by the SC'],
    [0x03, 'delivered', 'reserved'],
    [0x10, 'delivered', 'SC specific'],
    [0x20, 'pending', 'congestion'],
    [0x21, 'pending', 'SME busy'],
    [0x25, 'pending', 'error in SME'],
    [0x26, 'pending', 'reserved'],
    [0x3f, 'pending', 'SC specific'],
    [0x40, 'failed-permanent', 'remote procedure error'],
    [0x46, 'failed-permanent', 'SM validity period expired'],
    [0x49, 'failed-permanent', 'SM does not exist'],
    [0x4a, 'failed-permanent', 'reserved'],
    [0x5f, 'failed-permanent', 'SC specific'],
    [0x60, 'failed-temporary', 'congestion'],
    [0x63, 'failed-temporary', 'service rejected'],
    [0x65, 'failed-temporary', 'error in SME'],
    [0x70, 'failed-temporary', 'SC specific'],
    [0x80, 'failed-temporary', 'reserved'],
    [0xff, 'failed-temporary', 'reserved'],
  ];
  for (const [st, cls, name] of cases) assert.equal(classifyStatus(st), { class: cls, name }, `0x${st.toString(16)}`);
  for (let st = 0; st < 256; st++) {
    const r = decodeStatusReport(DELIVERED.slice(0, -2) + st.toString(16).padStart(2, '0'));
    assert.ok(r.ok && r.value.status.value === st);
  }
});

test('optional tail: TP-PI with PID, DCS and user data; a broken tail keeps the report', () => {
  // ST 46 (validity expired), PI 07: PID 00, DCS 00, UDL 04 "Test"
  const full = decodeStatusReport(DELIVERED.slice(0, -2) + pdu('46 07 00 00 04 D4F29C0E'));
  assert.ok(full.ok);
  if (full.ok) {
    assert.is(full.value.status.class, 'failed-permanent');
    assert.is(full.value.pid, 0);
    assert.is(full.value.userData?.text, 'Test');
  }
  // PI 03: PID and DCS, no user data
  const noUd = decodeStatusReport(DELIVERED + pdu('03 00 00'));
  assert.ok(noUd.ok && noUd.value.pid === 0 && noUd.value.userData === null);
  // PI 04 says user data follows but UDL 09 runs past the end
  const broken = decodeStatusReport(DELIVERED + pdu('04 09 D4'));
  assert.ok(broken.ok);
  if (broken.ok) {
    assert.is(broken.value.userData, null);
    assert.equal(broken.value.warnings, ['optional part ignored: TP-UDL 9 septets needs 8 octets but only 1 follow at octet 34']);
  }
  // PI with the extension bit and nothing after it
  const ext = decodeStatusReport(DELIVERED + pdu('80'));
  assert.ok(ext.ok && ext.value.warnings[0] === 'optional part ignored: PDU ends before TP-PI extension at octet 34');
});

test('bad input: a report cut short, wrong MTI, bad timestamps', () => {
  assert.equal(decodeStatusReport(DELIVERED.slice(0, -2)), { ok: false, error: 'PDU ends before TP-ST at octet 32' });
  assert.equal(decodeStatusReport(DELIVERED.slice(0, 40)), { ok: false, error: 'PDU ends inside TP-SCTS: 7 octets needed, 2 left at octet 18' });
  assert.equal(decodeStatusReport('0004'), { ok: false, error: 'TP-MTI 0 is not SMS-STATUS-REPORT (2) at octet 1' });
  const badDt = decodeStatusReport(DELIVERED.replace('42305041330240', '42305041332640'));
  assert.ok(badDt.ok && badDt.value.discharge === null && badDt.value.warnings[0] === 'TP-DT: second 62 at octet 30');
});

test.run();
