import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MoRecord } from '../../../../src/bearers/iridium/simulator/gateway.ts';
import type { SessionReport } from '../../../../src/bearers/iridium/simulator/modem.ts';
import { rig } from './helpers.ts';

// Sessions (AT+SBDIX), the gateway's queues, the scripted sky and ring alerts
// (docs/protocols/iridium-sbd.md 3.3-3.5), byte-exact.

const OK = '\r\nOK\r\n';
const sbdix = (...f: number[]) => `\r\n+SBDIX: ${f.join(', ')}\r\n` + OK;
const text = (b: Uint8Array) => Buffer.from(b).toString('latin1');

test('a mailbox check succeeds and moves MOMSN on; nothing is recorded without an MO message', () => {
  const { host: h, gateway } = rig();
  h.at('ATE0');
  assert.is(h.at('AT+SBDIX'), sbdix(0, 0, 0, 0, 0, 0));
  assert.is(h.at('AT+SBDIXA'), sbdix(0, 1, 0, 0, 0, 0));
  assert.is(h.at('AT+SBDIX=5212.483,-00007.350'), sbdix(0, 2, 0, 0, 0, 0), 'with a location');
  assert.is(h.at('AT+SBDIX=nowhere'), '\r\nERROR\r\n');
  assert.is(h.at('AT+SBDS'), '\r\n+SBDS: 0, 3, 0, -1\r\n' + OK, '+SBDS: the MOMSN the next session uses');
  assert.is(gateway.received.length, 0);
  assert.is(h.modem.counters.sessions, 3);
});

test('an MO message reaches the gateway with its MOMSN and IMEI; the buffer stays, so the next session sends it again', () => {
  const { host: h, gateway, clock } = rig({ modem: { momsn: 41 } });
  const events: MoRecord[] = [];
  const sessions: SessionReport[] = [];
  h.modem.on('mo', (r: MoRecord) => events.push(r));
  h.modem.on('session', (s: SessionReport) => sessions.push(s));
  h.at('ATE0');
  h.at('AT+SBDWT=first');
  assert.is(h.at('AT+SBDIX'), sbdix(0, 41, 0, 0, 0, 0));
  assert.is(gateway.received.length, 1);
  const r = gateway.received[0];
  assert.equal([text(r.payload), r.momsn, r.imei, r.serial, r.at, r.duplicate], ['first', 41, h.modem.imei, h.modem.serial, clock.now(), false]);
  assert.is(events[0], r);
  assert.equal(sessions[0], { command: 'SBDIX', mo: 0, momsn: 41, mt: 0, mtmsn: 0, mtLength: 0, mtQueued: 0, moLength: 5 });
  assert.is(h.at('AT+SBDSX'), '\r\n+SBDSX: 1, 42, 0, -1, 0, 0\r\n' + OK, 'iridium-sbd.md 3.2: still in the MO buffer');
  assert.is(h.at('AT+SBDIX'), sbdix(0, 42, 0, 0, 0, 0));
  assert.equal(gateway.received.map((x) => [text(x.payload), x.momsn, x.duplicate]), [['first', 41, false], ['first', 42, true]]);
  assert.is(h.modem.counters.duplicateMo, 1);
  assert.is(gateway.counters.duplicateMo, 1);
  h.at('AT+SBDD0');
  h.at('AT+SBDIX');
  assert.is(gateway.received.length, 2, 'cleared: a mailbox check sends nothing');
  h.at('AT+SBDWT=second');
  h.at('AT+SBDIX');
  assert.equal([text(gateway.received[2].payload), gateway.received[2].duplicate], ['second', false]);
});

test('the scripted sky: failures answer MT status 2, keep MOMSN and record nothing; then success', () => {
  const { host: h, gateway } = rig();
  h.at('ATE0');
  h.at('AT+SBDWT=retry me');
  gateway.queueMt(h.modem.imei, 'waiting');
  gateway.script(32, { mo: 18 }, 35);
  assert.is(h.at('AT+SBDIX'), sbdix(32, 0, 2, 0, 0, 0));
  assert.is(h.at('AT+SBDIX'), sbdix(18, 0, 2, 0, 0, 0));
  assert.is(h.at('AT+SBDIX'), sbdix(35, 0, 2, 0, 0, 0));
  assert.is(gateway.received.length, 0);
  assert.is(gateway.queued(h.modem.imei), 1, 'the MT message still waits');
  assert.is(h.modem.counters.failedSessions, 3);
  assert.is(h.at('AT+SBDIX'), sbdix(0, 0, 1, 1, 7, 0), 'empty script: success');
  assert.is(text(gateway.received[0].payload), 'retry me');
  gateway.script(2, 4, 5);
  assert.is(h.at('AT+SBDIX'), sbdix(2, 1, 0, 0, 0, 0), '0-4 count as success (iridium-sbd.md 3.3)');
  assert.is(h.at('AT+SBDIX'), sbdix(4, 2, 0, 0, 0, 0));
  assert.is(h.at('AT+SBDIX'), sbdix(5, 3, 2, 0, 0, 0));
  assert.is(gateway.counters.failedSessions, 4);
});

test('no signal: sessions fail with 32 unless the script says otherwise; a failed session empties the MT buffer', () => {
  const { host: h, gateway } = rig();
  h.at('ATE0');
  gateway.queueMt(h.modem.imei, 'mail');
  h.at('AT+SBDIX');
  assert.is(text(h.modem.mt!), 'mail');
  gateway.bars = 0;
  assert.is(h.at('AT+SBDIX'), sbdix(32, 1, 2, 0, 0, 0));
  assert.is(h.modem.mt, null, 'iridium-sbd.md 3.4: every session overwrites the MT buffer');
  gateway.script(0);
  assert.is(h.at('AT+SBDIX'), sbdix(0, 1, 0, 0, 0, 0));
  assert.is(h.at('AT+SBDREG'), '\r\n+SBDREG:2,32\r\n' + OK);
});

test('a session takes sessionMs (or the scripted ms); input meanwhile waits', () => {
  const { host: h, gateway, clock } = rig({ modem: { sessionMs: 3000 } });
  h.at('ATE0');
  assert.is(h.at('AT+SBDIX'), '');
  assert.is(h.at('AT'), '');
  clock.advance(2999);
  assert.is(h.take(), '');
  clock.advance(1);
  assert.is(h.take(), sbdix(0, 0, 0, 0, 0, 0) + OK);
  gateway.script({ mo: 18, ms: 5000 });
  h.at('AT+SBDIX');
  clock.advance(4999);
  assert.is(h.take(), '');
  clock.advance(1);
  assert.is(h.take(), sbdix(18, 1, 2, 0, 0, 0));
});

test('two queued MT messages: the first session says 1 more queued; MTMSN counts up', () => {
  const { host: h, gateway } = rig();
  h.at('ATE0');
  gateway.queueMt(h.modem.imei, 'one');
  gateway.queueMt(h.modem.imei, Uint8Array.of(0, 1, 2, 0xff));
  assert.is(h.at('AT+SBDIX'), sbdix(0, 0, 1, 1, 3, 1));
  assert.is(h.at('AT+SBDSX'), '\r\n+SBDSX: 0, 1, 1, 1, 0, 1\r\n' + OK);
  assert.is(h.at('AT+SBDIX'), sbdix(0, 1, 1, 2, 4, 0));
  assert.equal([...h.modem.mt!], [0, 1, 2, 0xff]);
  assert.is(h.at('AT+SBDIX'), sbdix(0, 2, 0, 0, 0, 0));
  assert.is(h.modem.mt, null);
});

test('MOMSN and MTMSN wrap at 65535 (iridium-sbd.md 3.3)', () => {
  const { host: h, gateway } = rig({ modem: { momsn: 65535 } });
  h.at('ATE0');
  gateway.mailbox(h.modem.imei).lastMtmsn = 65534;
  gateway.queueMt(h.modem.imei, 'a');
  gateway.queueMt(h.modem.imei, 'b');
  assert.is(h.at('AT+SBDIX'), sbdix(0, 65535, 1, 65535, 1, 1));
  assert.is(h.at('AT+SBDIX'), sbdix(0, 0, 1, 0, 1, 0));
  assert.is(h.at('AT+SBDIX'), sbdix(0, 1, 0, 0, 0, 0));
});

test('MT messages of more than 270 bytes (or none) are refused when queued', () => {
  const { host: h, gateway } = rig();
  assert.throws(() => gateway.queueMt(h.modem.imei, new Uint8Array(271)), (e: unknown) => e instanceof RangeError && /1 to 270 bytes, got 271/.test(e.message));
  assert.throws(() => gateway.queueMt(h.modem.imei, ''), RangeError);
  gateway.queueMt(h.modem.imei, new Uint8Array(270));
  assert.is(gateway.queued(h.modem.imei), 1);
});

test('ring alerts: SBDRING with MTA=1 once registered; none with MTA=0 (the flag is set); none before a registration', () => {
  const { host: h, gateway } = rig();
  let rings = 0;
  h.modem.on('ring', () => rings++);
  h.at('ATE0');
  h.at('AT+SBDMTA=1');
  gateway.queueMt(h.modem.imei, 'too early');
  assert.is(h.take(), '', 'iridium-sbd.md 3.5: no registration yet');
  assert.is(h.at('AT+SBDIX'), sbdix(0, 0, 1, 1, 9, 0));
  gateway.queueMt(h.modem.imei, 'now');
  assert.is(h.take(), '\r\nSBDRING\r\n');
  assert.is(h.at('AT+SBDSX'), '\r\n+SBDSX: 0, 1, 1, 1, 1, 0\r\n' + OK, 'the ring-alert flag');
  assert.is(h.at('AT+SBDIXA'), sbdix(0, 1, 1, 2, 3, 0));
  assert.is(h.at('AT+SBDSX'), '\r\n+SBDSX: 0, 2, 1, 2, 0, 0\r\n' + OK, 'answered: flag cleared');
  h.at('AT+SBDMTA=0');
  gateway.queueMt(h.modem.imei, 'quiet');
  assert.is(h.take(), '');
  assert.is(h.at('AT+SBDSX'), '\r\n+SBDSX: 0, 2, 1, 2, 1, 0\r\n' + OK);
  assert.is(rings, 1);
  assert.is(h.modem.counters.rings, 1);
});

test('a ring during an answer comes after it; AT+SBDREG registers and the gateway rings when mail waits', () => {
  const { host: h, gateway, clock } = rig({ modem: { sessionMs: 1000 } });
  h.at('ATE0');
  h.at('AT+SBDMTA=1');
  assert.is(h.at('AT+SBDREG?'), '\r\n+SBDREG:0\r\n' + OK);
  gateway.queueMt(h.modem.imei, 'mail');
  h.at('AT+SBDREG');
  clock.advance(1000);
  assert.is(h.take(), '\r\n+SBDREG:2,0\r\n' + OK + '\r\nSBDRING\r\n');
  assert.is(h.at('AT+SBDREG?'), '\r\n+SBDREG:2\r\n' + OK);
  h.at('AT+SBDIX');
  clock.advance(500);
  gateway.queueMt(h.modem.imei, 'second');
  assert.is(h.take(), '', 'not inside the session');
  clock.advance(500);
  assert.is(h.take(), sbdix(0, 0, 1, 1, 4, 1) + '\r\nSBDRING\r\n');
  assert.is(h.at('AT+SBDWB=3'), 'READY\r\n');
  gateway.queueMt(h.modem.imei, 'third');
  assert.is(h.take(), '', 'not while the SBDWB bytes are awaited');
  assert.is(h.send('abc\x01\x26'), '\r\n0\r\n' + OK + '\r\nSBDRING\r\n');
});

test('reset in the middle of a session: no answer, nothing recorded, MOMSN kept, registration and buffers gone', () => {
  const { host: h, gateway, clock } = rig({ modem: { sessionMs: 1000, momsn: 7 } });
  h.at('AT+SBDMTA=1');
  h.at('ATE0');
  h.at('AT+SBDWT=never sent');
  gateway.queueMt(h.modem.imei, 'x');
  h.at('AT+SBDIX');
  clock.advance(500);
  h.modem.reset();
  clock.advance(5000);
  assert.is(h.take(), '');
  assert.is(gateway.received.length, 0);
  assert.is(gateway.queued(h.modem.imei), 1, 'the MT message still waits at the gateway');
  assert.equal([h.modem.mo, h.modem.mt, h.modem.momsn, h.modem.registered, h.modem.settings.mta, h.modem.settings.echo], [null, null, 7, false, 0, true]);
  gateway.queueMt(h.modem.imei, 'y');
  assert.is(h.take(), '', 'not registered since power-up: no ring');
  assert.is(h.at('AT+SBDS'), 'AT+SBDS\r\r\n+SBDS: 0, 7, 0, -1\r\n' + OK);
});

test('RockBLOCK to RockBLOCK: "RB" + the serial reaches that modem, prefixed with the sender\'s serial', () => {
  const { hosts: [a, b], gateway } = rig({ modems: 2 });
  a.at('ATE0');
  b.at('ATE0');
  a.at(`AT+SBDWT=RB${b.modem.serial}hello b`);
  a.at('AT+SBDIX');
  assert.is(gateway.received[0].forwardedTo, b.modem.imei);
  assert.is(gateway.queued(b.modem.imei), 1);
  assert.is(b.at('AT+SBDIX'), sbdix(0, 0, 1, 1, 16, 0));
  assert.is(text(b.modem.mt!), `RB${a.modem.serial}hello b`);
  a.at('AT+SBDWT=RB9999999 nobody');
  a.at('AT+SBDIX');
  assert.is(gateway.received[1].forwardedTo, null, 'an unknown serial is only received');
  assert.is(gateway.counters.forwarded, 1);
});

test.run();
