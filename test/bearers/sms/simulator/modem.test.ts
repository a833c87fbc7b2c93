import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeDeliver } from '../../../../src/bearers/sms/codec/deliver.ts';
import { decodeStatusReport } from '../../../../src/bearers/sms/codec/status-report.ts';
import { SmsModem } from '../../../../src/bearers/sms/simulator/modem.ts';
import { Host, lab, pduAfter, submitPdu } from './helpers.ts';

test('handshake: echo on by default, ATE0 turns it off, identity commands, unknown commands answer ERROR', () => {
  const { hosts: [a] } = lab({ modems: 1 });
  assert.is(a.at('AT'), 'AT\r\r\nOK\r\n');
  assert.is(a.at('ATE0'), 'ATE0\r\r\nOK\r\n');
  assert.is(a.at('AT'), '\r\nOK\r\n');
  assert.is(a.at('AT+CGMI'), '\r\nFieldbridge\r\n\r\nOK\r\n');
  assert.is(a.at('AT+CGMM'), '\r\nSMS Simulator\r\n\r\nOK\r\n');
  assert.is(a.at('AT+CGMR'), '\r\nFBSIM-1.0\r\n\r\nOK\r\n');
  const imei = /\r\n(\d{15})\r\n/.exec(a.at('AT+CGSN'))![1];
  assert.is(imei, a.modem.identity.imei);
  assert.match(a.at('ATI'), /Fieldbridge\r\nSMS Simulator\r\nRevision: FBSIM-1.0\r\n\r\nOK/);
  assert.is(a.at('AT+NOPE'), '\r\nERROR\r\n');
  assert.is(a.modem.counters.unknownCommands, 1);
  assert.is(a.at('ATE1'), '\r\nOK\r\n', 'echo starts after the command');
  assert.is(a.at('at+cmgf=0;+CMEE=1'), 'at+cmgf=0;+CMEE=1\r\r\nOK\r\n', 'lower case and chained commands');
  assert.is(a.at('AT+CREG?'), 'AT+CREG?\r\r\n+CREG: 0,1\r\n\r\nOK\r\n');
  assert.is(a.at('AT+CSQ'), 'AT+CSQ\r\r\n+CSQ: 20,99\r\n\r\nOK\r\n');
  assert.match(a.at('AT+CSCA?'), /\+CSCA: "\+15550000000",145/);
  assert.match(a.at('AT+CPMS="SM","SM","SM"'), /\+CPMS: 0,30,0,30,0,30\r\n\r\nOK/);
  assert.match(a.at('AT+CPMS="ME"'), /\+CMS ERROR: 303/);
});

test('AT+CMEE shapes +CME ERROR: plain, numeric, verbose', () => {
  const { hosts: [a] } = lab({ modems: 1, modem: { pin: '1234' } });
  a.at('ATE0');
  assert.is(a.at('AT+CIMI'), '\r\nERROR\r\n');
  a.at('AT+CMEE=1');
  assert.is(a.at('AT+CIMI'), '\r\n+CME ERROR: 11\r\n');
  a.at('AT+CMEE=2');
  assert.is(a.at('AT+CIMI'), '\r\n+CME ERROR: SIM PIN required\r\n');
});

test('PIN: right PIN unlocks; wrong PINs count down; three wrong need the PUK; PUK and a new PIN unlock', () => {
  const { hosts: [a, b] } = lab({ modems: 2, modem: { pin: '1234' } });
  for (const h of [a, b]) h.at('ATE0'), h.at('AT+CMEE=1');
  assert.is(a.at('AT+CPIN?'), '\r\n+CPIN: SIM PIN\r\n\r\nOK\r\n');
  assert.is(a.at('AT+CREG?'), '\r\n+CREG: 0,0\r\n\r\nOK\r\n', 'not registered while locked');
  assert.is(a.at('AT+CMGL=4'), '\r\n+CMS ERROR: 311\r\n');
  assert.is(a.at('AT+CPIN="1234"'), '\r\nOK\r\n');
  assert.is(a.at('AT+CPIN?'), '\r\n+CPIN: READY\r\n\r\nOK\r\n');
  assert.is(a.at('AT+CREG?'), '\r\n+CREG: 0,1\r\n\r\nOK\r\n');

  assert.is(b.at('AT+CPIN="0000"'), '\r\n+CME ERROR: 16\r\n');
  assert.match(b.at('AT+CPINR'), /\+CPINR: SIM PIN,2,3/);
  assert.is(b.at('AT+CPIN="0001"'), '\r\n+CME ERROR: 16\r\n');
  assert.is(b.at('AT+CPIN="0002"'), '\r\n+CME ERROR: 16\r\n');
  assert.is(b.at('AT+CPIN?'), '\r\n+CPIN: SIM PUK\r\n\r\nOK\r\n');
  assert.is(b.at('AT+CPIN="1234"'), '\r\n+CME ERROR: 12\r\n', 'the right PIN is no longer enough');
  assert.is(b.at('AT+CMGS=10'), '\r\n+CMS ERROR: 316\r\n');
  assert.is(b.at('AT+CPIN="87654321","4321"'), '\r\n+CME ERROR: 16\r\n');
  assert.is(b.at('AT+CPIN="12345678","4321"'), '\r\nOK\r\n');
  assert.is(b.at('AT+CPIN?'), '\r\n+CPIN: READY\r\n\r\nOK\r\n');
  assert.is(b.modem.sim.pin, '4321');
});

test('PDU send: +CMGS answers an incrementing reference; the other modem announces +CMTI and reads the same text', () => {
  const { clock, hosts: [a, b] } = lab();
  a.at('ATE0');
  b.at('ATE0');
  b.at('AT+CNMI=2,1,0,0,0');
  for (let i = 0; i < 2; i++) {
    const [p] = submitPdu(b.modem.number, `hello ${i} @ {x}`);
    assert.is(a.at(`AT+CMGS=${p.length}`), '\r\n> ');
    assert.is(a.send(p.hex + '\x1a'), `\r\n+CMGS: ${i}\r\n\r\nOK\r\n`);
    clock.advance(1);
    assert.is(b.take(), `\r\n+CMTI: "SM",${i + 1}\r\n`);
    const out = b.at(`AT+CMGR=${i + 1}`);
    assert.match(out, /^\r\n\+CMGR: 0,,\d+\r\n/);
    const d = decodeDeliver(pduAfter(out, /^\+CMGR:/));
    assert.ok(d.ok);
    if (!d.ok) return;
    assert.is(d.value.userData.text, `hello ${i} @ {x}`);
    assert.is(d.value.originator.address, a.modem.number);
    assert.is(d.value.smsc?.address, '+15550000000');
    assert.ok(d.value.timestamp, 'SCTS present');
    assert.match(b.at(`AT+CMGR=${i + 1}`), /\+CMGR: 1,,/, 'read now');
  }
});

test('PDU send: echo of the body, ESC aborts, a wrong length answers 304', () => {
  const { hosts: [a, b] } = lab();
  const [p] = submitPdu(b.modem.number, 'x');
  assert.is(a.at(`AT+CMGS=${p.length}`), `AT+CMGS=${p.length}\r\r\n> `);
  assert.is(a.send('0011\x1b'), '0011\r\nOK\r\n', 'ESC: nothing sent');
  assert.is(a.modem.counters.sent, 0);
  a.at('ATE0');
  a.at(`AT+CMGS=${p.length + 1}`);
  assert.is(a.send(p.hex + '\x1a'), '\r\n+CMS ERROR: 304\r\n');
  a.at(`AT+CMGS=${p.length}`);
  assert.is(a.send('ZZ\x1a'), '\r\n+CMS ERROR: 304\r\n');
});

test('text mode: AT+CMGS="<number>" sends; text-mode +CMGR and +CMGL show the text', () => {
  const { clock, hosts: [a, b] } = lab();
  a.at('ATE0');
  b.at('ATE0');
  a.at('AT+CMGF=1');
  assert.is(a.at(`AT+CMGS="${b.modem.number}"`), '\r\n> ');
  assert.is(a.send('plain text\x1a'), '\r\n+CMGS: 0\r\n\r\nOK\r\n');
  clock.advance(1);
  b.at('AT+CMGF=1');
  const r = b.at('AT+CMGR=1');
  assert.match(r, new RegExp(`\\+CMGR: "REC UNREAD","\\${a.modem.number}",,"\\d\\d/\\d\\d/\\d\\d,\\d\\d:\\d\\d:\\d\\d\\+00"\\r\\nplain text\\r\\n\\r\\nOK`));
  b.at('AT+CSDH=1');
  assert.match(b.at('AT+CMGL="ALL"'), /\+CMGL: 1,"REC READ","\+1555\d+",,"[^"]+",145,10\r\nplain text\r\n/);
  assert.match(b.at('AT+CMGL=4'), /\+CMS ERROR: 305/, 'text mode wants the names');
  // UCS-2 in text mode: DCS 8 through AT+CSMP, the body in hex.
  a.at('AT+CSMP=17,167,0,8');
  a.at(`AT+CMGS="${b.modem.number}"`);
  assert.match(a.send('041F04400438\x1a'), /\+CMGS: 1/);
  clock.advance(1);
  b.at('AT+CMGF=0');
  const d = decodeDeliver(pduAfter(b.at('AT+CMGR=2'), /^\+CMGR:/));
  assert.ok(d.ok && d.value.userData.text === 'При');
});

test('status report: SRR set -> +CDS with the PDU after the delay (ds=1); stored with +CDSI for ds=2', () => {
  const { clock, hosts: [a, b] } = lab({ statusReportDelayMs: 500 });
  a.at('ATE0');
  a.at('AT+CNMI=2,1,0,1,0');
  const [p] = submitPdu(b.modem.number, 'report me', { statusReport: true });
  a.at(`AT+CMGS=${p.length}`);
  assert.match(a.send(p.hex + '\x1a'), /\+CMGS: 0/);
  clock.advance(1);
  assert.is(a.take(), '');
  clock.advance(500);
  const out = a.take();
  assert.match(out, /^\r\n\+CDS: \d+\r\n[0-9A-F]+\r\n$/);
  const r = decodeStatusReport(pduAfter(out, /^\+CDS:/));
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.is(r.value.messageReference, 0);
  assert.is(r.value.recipient.address, b.modem.number);
  assert.is(r.value.status.value, 0);
  assert.is(r.value.status.class, 'delivered');

  a.at('AT+CNMI=2,1,0,2,0');
  a.at(`AT+CMGS=${p.length}`);
  a.send(p.hex + '\x1a');
  clock.advance(501);
  assert.is(a.take(), '\r\n+CDSI: "SM",1\r\n');
  const stored = decodeStatusReport(pduAfter(a.at('AT+CMGR=1'), /^\+CMGR:/));
  assert.ok(stored.ok && stored.value.messageReference === 1);
});

test('status report failures: unreachable numbers get 0x41 (permanent) or 0x62 (temporary), nothing is delivered', () => {
  const { clock, network, hosts: [a, b] } = lab();
  a.at('ATE0');
  a.at('AT+CNMI=2,1,0,1,0');
  network.setUnreachable(b.modem.number, 'permanent');
  network.setUnreachable('+15551234567', 'temporary');
  for (const [to, st, cls] of [[b.modem.number, 0x41, 'failed-permanent'], ['+15551234567', 0x62, 'failed-temporary']] as const) {
    const [p] = submitPdu(to, 'lost', { statusReport: true });
    a.at(`AT+CMGS=${p.length}`);
    assert.match(a.send(p.hex + '\x1a'), /\+CMGS: \d+\r\n\r\nOK/, 'the SC accepts it');
    clock.advance(300);
    const r = decodeStatusReport(pduAfter(a.take(), /^\+CDS:/));
    assert.ok(r.ok);
    if (r.ok) {
      assert.is(r.value.status.value, st);
      assert.is(r.value.status.class, cls);
    }
  }
  assert.is(b.modem.storage.used, 0);
});

test('concatenated receive: a long injected text arrives as parts with one reference, announced one by one', () => {
  const { clock, network, hosts: [a] } = lab({ modems: 1 });
  a.at('ATE0');
  a.at('AT+CNMI=2,1,0,0,0');
  const text = 'Long message: ' + 'abcdefghij'.repeat(30);
  assert.is(network.inject('+15559990000', a.modem.number, text), 3);
  clock.advance(1);
  assert.is(a.take(), '\r\n+CMTI: "SM",1\r\n\r\n+CMTI: "SM",2\r\n\r\n+CMTI: "SM",3\r\n');
  const list = a.at('AT+CMGL=4').split('\r\n').filter((l) => /^[0-9A-F]{20,}$/.test(l));
  assert.is(list.length, 3);
  const parts = list.map((hex) => decodeDeliver(hex)).map((d) => (d.ok ? d.value : null));
  const ref = parts[0]!.userData.udh!.concat!.reference;
  assert.ok(parts.every((p, i) => p!.userData.udh!.concat!.reference === ref && p!.userData.udh!.concat!.sequence === i + 1 && p!.userData.udh!.concat!.total === 3));
  assert.is(parts.map((p) => p!.userData.text).join(''), text);
  // Alphanumeric senders and UCS-2.
  network.inject('Fieldbridge', a.modem.number, 'Grüße ✓');
  clock.advance(1);
  assert.is(a.take(), '\r\n+CMTI: "SM",4\r\n');
  const d = decodeDeliver(pduAfter(a.at('AT+CMGR=4'), /^\+CMGR:/));
  assert.ok(d.ok && d.value.originator.address === 'Fieldbridge' && d.value.originator.kind === 'alphanumeric' && d.value.userData.text === 'Grüße ✓');
});

test('CMGL by status, CMGD by index and by flag; +CMT with mt=2 is not stored', () => {
  const { clock, network, hosts: [a] } = lab({ modems: 1 });
  a.at('ATE0');
  for (const t of ['one', 'two', 'three']) network.inject('+15559990000', a.modem.number, t);
  clock.advance(1);
  assert.is(a.take(), '', 'CNMI 0,0,0,0,0: stored silently');
  a.at('AT+CMGR=2');
  assert.is((a.at('AT+CMGL=0').match(/\+CMGL:/g) ?? []).length, 2, 'two unread');
  assert.is((a.at('AT+CMGL=0').match(/\+CMGL:/g) ?? []).length, 0, 'listing read them');
  assert.is((a.at('AT+CMGL=1').match(/\+CMGL:/g) ?? []).length, 3);
  assert.is(a.at('AT+CMGD=?'), '\r\n+CMGD: (1,2,3),(0-4)\r\n\r\nOK\r\n');
  assert.is(a.at('AT+CMGD=2'), '\r\nOK\r\n');
  assert.is(a.at('AT+CMGR=2'), '\r\nOK\r\n', 'an empty slot');
  assert.is(a.at('AT+CMGR=99'), '\r\n+CMS ERROR: 321\r\n');
  assert.is(a.at('AT+CMGD=0,4'), '\r\nOK\r\n');
  assert.is(a.modem.storage.used, 0);
  a.at('AT+CNMI=2,2,0,0,0');
  network.inject('+15559990000', a.modem.number, 'direct');
  clock.advance(1);
  const out = a.take();
  assert.match(out, /^\r\n\+CMT: ,\d+\r\n[0-9A-F]+\r\n$/);
  const d = decodeDeliver(pduAfter(out, /^\+CMT:/));
  assert.ok(d.ok && d.value.userData.text === 'direct');
  assert.is(a.modem.storage.used, 0);
});

test('storage full: the network holds messages until a slot is freed', () => {
  const { clock, network, hosts: [a] } = lab({ modems: 1, modem: { storageCapacity: 2 } });
  a.at('ATE0');
  a.at('AT+CNMI=2,1,0,0,0');
  for (const t of ['a', 'b', 'c']) network.inject('+15559990000', a.modem.number, t);
  clock.advance(1);
  assert.is(a.take(), '\r\n+CMTI: "SM",1\r\n\r\n+CMTI: "SM",2\r\n');
  assert.is(network.heldFor(a.modem.number), 1);
  a.at('AT+CMGD=1');
  clock.advance(1);
  assert.is(a.take(), '\r\n+CMTI: "SM",1\r\n');
  assert.is(network.heldFor(a.modem.number), 0);
});

test('CNMI: the usual variants are accepted; refused variants answer 303; mode 0 holds indications until mode 2', () => {
  const { clock, network, hosts: [a] } = lab({ modems: 1, modem: { faults: { refuseCnmi: ['2,1,2,1,0'] } } });
  a.at('ATE0');
  assert.is(a.at('AT+CNMI=2,1,2,1,0'), '\r\n+CMS ERROR: 303\r\n');
  assert.is(a.at('AT+CNMI=2,1,2,2,0'), '\r\n+CMS ERROR: 303\r\n', 'bm=2 (cell broadcast) is not simulated');
  assert.is(a.at('AT+CNMI=2,1,0,0,0'), '\r\nOK\r\n');
  assert.is(a.at('AT+CNMI?'), '\r\n+CNMI: 2,1,0,0,0\r\n\r\nOK\r\n');
  a.at('AT+CNMI=0,1,0,0,0');
  network.inject('+15559990000', a.modem.number, 'held');
  clock.advance(1);
  assert.is(a.take(), '');
  assert.is(a.at('AT+CNMI=2,1,0,0,0'), '\r\nOK\r\n\r\n+CMTI: "SM",1\r\n');
});

test('fault: no network -> CREG 0 and sends answer +CMS ERROR: 331; registration back -> held messages arrive', () => {
  const { clock, network, hosts: [a, b] } = lab();
  a.at('ATE0');
  b.at('ATE0');
  b.at('AT+CNMI=2,1,0,0,0');
  a.modem.setRegistration(0);
  b.modem.setRegistration(0);
  assert.is(a.at('AT+CREG?'), '\r\n+CREG: 0,0\r\n\r\nOK\r\n');
  assert.is(a.at('AT+CSQ'), '\r\n+CSQ: 99,99\r\n\r\nOK\r\n');
  const [p] = submitPdu(b.modem.number, 'x');
  a.at(`AT+CMGS=${p.length}`);
  assert.is(a.send(p.hex + '\x1a'), '\r\n+CMS ERROR: 331\r\n');
  network.inject('+15559990000', b.modem.number, 'waiting');
  clock.advance(1);
  assert.is(network.heldFor(b.modem.number), 1);
  b.at('AT+CREG=1');
  b.modem.setRegistration(5);
  clock.advance(1);
  assert.is(b.take(), '\r\n+CREG: 5\r\n\r\n+CMTI: "SM",1\r\n');
  assert.is(b.at('AT+CFUN=4'), '\r\nOK\r\n\r\n+CREG: 0\r\n');
  assert.is(b.at('AT+CFUN=1'), '\r\nOK\r\n\r\n+CREG: 5\r\n');
});

test('fault: the next N sends answer a given +CMS ERROR, then sends go out again', () => {
  const { hosts: [a, b] } = lab();
  a.at('ATE0');
  a.modem.failNextSends(38, 2);
  const [p] = submitPdu(b.modem.number, 'x');
  for (const expected of ['\r\n+CMS ERROR: 38\r\n', '\r\n+CMS ERROR: 38\r\n', '\r\n+CMGS: 0\r\n\r\nOK\r\n']) {
    a.at(`AT+CMGS=${p.length}`);
    assert.is(a.send(p.hex + '\x1a'), expected);
  }
});

test('fault: slow answers come after the delay; input meanwhile waits; URCs wait for the answer', () => {
  const { clock, network, hosts: [a] } = lab({ modems: 1, modem: { faults: { answerDelayMs: 1000 } } });
  a.at('ATE0');
  clock.advance(1000);
  a.take();
  a.at('AT+CNMI=2,1,0,0,0');
  clock.advance(1000);
  assert.is(a.take(), '\r\nOK\r\n');
  assert.is(a.at('AT+CGMI'), '');
  network.inject('+15559990000', a.modem.number, 'meanwhile');
  assert.is(a.at('AT'), '', 'queued behind the slow answer');
  clock.advance(999);
  assert.is(a.take(), '');
  clock.advance(1);
  assert.is(a.take(), '\r\nFieldbridge\r\n\r\nOK\r\n\r\n+CMTI: "SM",1\r\n');
  clock.advance(1000);
  assert.is(a.take(), '\r\nOK\r\n');
});

test('fault: dropped URCs store without +CMTI; status reports are stored instead of +CDS', () => {
  const { clock, network, hosts: [a] } = lab({ modems: 1, modem: { faults: { dropUrcs: true } } });
  a.at('ATE0');
  a.at('AT+CNMI=2,1,0,1,0');
  network.inject('+15559990000', a.modem.number, 'silent');
  clock.advance(1);
  assert.is(a.take(), '');
  assert.is(a.modem.storage.used, 1);
  assert.is(a.modem.counters.droppedUrcs, 1);
});

test('fault: garbage bytes reach the host between answers', () => {
  const { hosts: [a] } = lab({ modems: 1 });
  a.modem.sendGarbage(8);
  const g = a.take();
  assert.is(g.length, 8);
  assert.ok([...g].some((c) => c.charCodeAt(0) >= 0x80));
  assert.is(a.at('AT'), 'AT\r\r\nOK\r\n');
});

test('fault: reset (AT+CFUN=1,1) says RDY, forgets echo, mode and CNMI, keeps messages, locks the SIM again', () => {
  const { clock, network, hosts: [a] } = lab({ modems: 1, modem: { pin: '1111' } });
  a.at('ATE0');
  a.at('AT+CPIN="1111"');
  a.at('AT+CMGF=1');
  a.at('AT+CNMI=2,1,0,0,0');
  network.inject('+15559990000', a.modem.number, 'kept');
  clock.advance(1);
  a.take();
  assert.is(a.at('AT+CFUN=1,1'), '\r\nOK\r\n');
  assert.is(a.at('AT'), '', 'quiet while it restarts');
  clock.advance(200);
  assert.is(a.take(), '\r\nRDY\r\n\r\n+CFUN: 1\r\n\r\n+CPIN: SIM PIN\r\n');
  assert.is(a.at('AT+CMGF?'), 'AT+CMGF?\r\r\n+CMGF: 0\r\n\r\nOK\r\n', 'echo on and PDU mode again');
  assert.is(a.at('AT+CNMI?'), 'AT+CNMI?\r\r\n+CNMI: 0,0,0,0,0\r\n\r\nOK\r\n');
  a.at('AT+CPIN="1111"');
  assert.match(a.at('AT+CPMS?'), /\+CPMS: "SM",1,30/);
  a.modem.reset();
  clock.advance(200);
  assert.match(a.take(), /RDY/);
  assert.is(a.modem.counters.resets, 2);
});

test('fault: an unresponsive modem neither echoes nor answers, but still stores messages', () => {
  const { clock, network, hosts: [a] } = lab({ modems: 1 });
  a.modem.faults.unresponsive = true;
  assert.is(a.at('AT'), '');
  network.inject('+15559990000', a.modem.number, 'still stored');
  clock.advance(1);
  assert.is(a.modem.storage.used, 1);
  a.modem.faults.unresponsive = false;
  assert.is(a.at('AT'), 'AT\r\r\nOK\r\n');
});

test('without a network the modem has its own; text split across writes still makes one command', () => {
  const modem = new SmsModem();
  const h = new Host(modem);
  assert.match(modem.number, /^\+15550000001$/);
  h.send('A');
  h.send('T+CG');
  assert.is(h.send('MI\r'), 'MI\r\r\nFieldbridge\r\n\r\nOK\r\n');
  modem.close();
});

test.run();
