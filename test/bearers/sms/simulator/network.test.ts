import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { octetsToHex } from '../../../../src/bearers/sms/codec/octets.ts';
import { decodeDeliver } from '../../../../src/bearers/sms/codec/deliver.ts';
import { decodeStatusReport } from '../../../../src/bearers/sms/codec/status-report.ts';
import { encodeDeliver, encodeStatusReport, splitText, toPart } from '../../../../src/bearers/sms/simulator/pdu-encode.ts';
import { readSubmitPdu } from '../../../../src/bearers/sms/simulator/messages.ts';
import { SmsNetwork, type NetworkMessage, type SmsSubscriber } from '../../../../src/bearers/sms/simulator/network.ts';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { submitPdu } from './helpers.ts';

const at = Date.parse('2026-03-04T05:06:07Z');

class Phone implements SmsSubscriber {
  reachable = true;
  got: NetworkMessage[] = [];
  receive(m: NetworkMessage): boolean {
    this.got.push(m);
    return true;
  }
}

test('the network numbers modems +1555000000N and refuses a taken or malformed number', () => {
  const n = new SmsNetwork();
  assert.is(n.attach(new Phone()), '+15550000001');
  assert.is(n.attach(new Phone(), '+15550000002'), '+15550000002');
  assert.is(n.attach(new Phone()), '+15550000003', 'skips a number given by hand');
  assert.throws(() => n.attach(new Phone(), '+15550000001'), /already attached/);
  assert.throws(() => n.attach(new Phone(), '5550001'), /E\.164/);
});

test('DELIVER and STATUS-REPORT written by the simulator decode with the codec', () => {
  for (const text of ['short', 'é ü {€}', 'Ω ✓ emoji 😀']) {
    const [part] = splitText(text, 1);
    const hex = '00' + octetsToHex(encodeDeliver({ originator: '+4915123456789', sctsMs: at, tzQuarters: 4, part, statusReportIndication: true }));
    const d = decodeDeliver(hex);
    assert.ok(d.ok);
    if (!d.ok) continue;
    assert.is(d.value.userData.text, text);
    assert.is(d.value.originator.address, '+4915123456789');
    assert.is(d.value.timestamp?.utc, '2026-03-04T05:06:07.000Z');
    assert.is(d.value.timestamp?.offsetMinutes, 60);
    assert.ok(d.value.statusReportIndication);
  }
  const r = decodeStatusReport('00' + octetsToHex(encodeStatusReport({ messageReference: 300, recipient: '+15550000002', sctsMs: at, dischargeMs: at + 5000, status: 0x41 })));
  assert.ok(r.ok && r.value.messageReference === 44 && r.value.recipient.address === '+15550000002' && r.value.status.class === 'failed-permanent');
});

test('a submitted part is copied into the DELIVER unchanged: header, DCS and text', () => {
  const parts = submitPdu('+15550000002', 'x'.repeat(200), { reference: 99 });
  assert.is(parts.length, 2);
  const read = readSubmitPdu(parts[1].hex, { tpduLength: parts[1].length });
  assert.ok(read.ok);
  if (!read.ok) return;
  const deliver = decodeDeliver('00' + octetsToHex(encodeDeliver({ originator: '+15550000001', sctsMs: at, part: toPart(read.message.userData, read.message.text) })));
  assert.ok(deliver.ok);
  if (!deliver.ok) return;
  assert.equal(deliver.value.userData.udh?.concat, { reference: 99, referenceBits: 8, total: 2, sequence: 2 });
  assert.is(deliver.value.userData.text, 'x'.repeat(47));
});

test('submit: delivered after the delay with the sender number; a status report follows; outside numbers are kept', () => {
  const clock = new FakeClock(at);
  const n = new SmsNetwork({ clock, deliveryDelayMs: 100, statusReportDelayMs: 1000 });
  const a = new Phone();
  const b = new Phone();
  const na = n.attach(a);
  const nb = n.attach(b);
  const read = readSubmitPdu(submitPdu(nb, 'hi', { statusReport: true })[0].hex);
  assert.ok(read.ok);
  if (!read.ok) return;
  n.submit(na, 5, read.message);
  clock.advance(99);
  assert.is(b.got.length, 0);
  clock.advance(1);
  assert.is(b.got.length, 1);
  const d = decodeDeliver('00' + octetsToHex(b.got[0].tpdu));
  assert.ok(d.ok && d.value.originator.address === na && d.value.userData.text === 'hi');
  clock.advance(1000);
  assert.is(a.got.length, 1);
  assert.is(a.got[0].kind, 'status-report');
  const r = decodeStatusReport('00' + octetsToHex(a.got[0].tpdu));
  assert.ok(r.ok && r.value.messageReference === 5 && r.value.status.value === 0);
  const outside = readSubmitPdu(submitPdu('+447700900123', 'to the world')[0].hex);
  if (outside.ok) n.submit(na, 6, outside.message);
  clock.advance(100);
  assert.equal(n.textsTo('+447700900123'), ['to the world']);
  assert.is(n.log.at(-1)?.outcome, 'outside');
});

test('unreachable phones hold their messages until flush; marked numbers fail with the chosen TP-ST', () => {
  const clock = new FakeClock(at);
  const n = new SmsNetwork({ clock, statusReportDelayMs: 10 });
  const a = new Phone();
  const b = new Phone();
  const na = n.attach(a);
  const nb = n.attach(b);
  b.reachable = false;
  n.inject('+15559990000', nb, 'later');
  clock.advance(1);
  assert.is(n.heldFor(nb), 1);
  b.reachable = true;
  n.flush(nb);
  assert.is(b.got.length, 1);
  n.setUnreachable(nb, 0x45);
  const read = readSubmitPdu(submitPdu(nb, 'no', { statusReport: true })[0].hex);
  if (read.ok) n.submit(na, 1, read.message);
  clock.advance(20);
  assert.is(b.got.length, 1);
  const r = decodeStatusReport('00' + octetsToHex(a.got[0].tpdu));
  assert.ok(r.ok && r.value.status.value === 0x45);
  n.setUnreachable(nb, false);
  assert.throws(() => n.inject('x', nb, ['ZZ']), /inject/);
});

test.run();
