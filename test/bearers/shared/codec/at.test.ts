import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rng } from '../../../helpers/rng.ts';
import {
  AT_MAX_LINE_BYTES,
  AtDecoder,
  atCommand,
  parseInfo,
  type AtEvent,
  type AtExpectation,
} from '../../../../src/bearers/shared/codec/at.ts';
import { sbdChecksum } from '../../../../src/bearers/iridium/sbd.ts';
import { pduSubmitBody } from '../../../../src/bearers/sms/codec/submit.ts';

// Wire bytes are written literally; a string is read as Latin-1, one character per byte.
const wire = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const hex = (s: string) => Uint8Array.from(s.trim().split(/\s+/).filter(Boolean).map((b) => parseInt(b, 16)));
const toHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0').toUpperCase()).join(' ');
const noEcho = (events: AtEvent[]) => events.filter((e) => e.type !== 'echo');

const OK: AtEvent = { type: 'final', result: 'OK', ok: true, code: null, text: null, line: 'OK' };
type Final = Extract<AtEvent, { type: 'final' }>;
const final = (result: Final['result'], extra: Partial<Final> = {}): AtEvent => ({ type: 'final', result, ok: false, code: null, text: null, line: result, ...extra });
const info = (line: string, body: string | null = null): AtEvent => ({ type: 'info', line, body });
const urc = (name: string, line: string, body: string | null = null): AtEvent => ({ type: 'urc', name, line, body });

// PDUs written by hand. DELIVER "hellohello" from +12782300901 (SMSC +27381000015): 36 octets,
// 8 of them the SMSC prefix, so TPDU length 28. SUBMIT of the same text: 24 octets, 1 SMSC
// octet (00 = use the stored SMSC), length 23. STATUS-REPORT: fo 06, mr 45, ra (8 octets),
// scts, dt, st 00: 25 octets after the 8-octet SMSC prefix.
const DELIVER = '07917283010010F5040BC87238880900F10000993092516195800AE8329BFD4697D9EC37';
const SUBMIT = '0011000B916407281553F80000AA0AE8329BFD4697D9EC37';
const STATUS_REPORT = '07911326040000F006450B911326880736F4214030411040802140304110458000';

interface Fixture {
  name: string;
  /** What the queue tells the decoder before sending; absent for URCs. */
  expect?: AtExpectation;
  /** The answer with echo off (ATE0). */
  wire: string;
  /** The answer with echo on (ATE1); default: the command and its CR, then `wire`. */
  echoWire?: string;
  events: AtEvent[];
}

// Written by hand from the answer formats in docs/protocols/sms.md (verbose results: CR LF text
// CR LF; +CREG, +CSQ, +CME/+CMS ERROR, +CMTI, +CMT, +CDS, +CDSI, +CMGL, +CMGR, +CMGS and its
// prompt) and docs/protocols/iridium-sbd.md (SBDWB READY + status, +SBDIX, SBDRB binary,
// SBDRING, +CSQF and +CIEV without a space).
const fixtures: Fixture[] = [
  { name: 'AT -> OK', expect: { command: 'AT' }, wire: '\r\nOK\r\n', events: [OK] },
  { name: 'AT+CREG? -> +CREG: 0,1', expect: { command: 'AT+CREG?' }, wire: '\r\n+CREG: 0,1\r\n\r\nOK\r\n', events: [info('+CREG: 0,1'), OK] },
  { name: 'AT+CSQ -> +CSQ: 21,99', expect: { command: 'AT+CSQ' }, wire: '\r\n+CSQ: 21,99\r\n\r\nOK\r\n', events: [info('+CSQ: 21,99'), OK] },
  { name: 'AT+CGSN -> a bare IMEI line', expect: { command: 'AT+CGSN' }, wire: '\r\n490154203237518\r\n\r\nOK\r\n', events: [info('490154203237518'), OK] },
  { name: 'AT+CMGF=1 -> ERROR', expect: { command: 'AT+CMGF=1' }, wire: '\r\nERROR\r\n', events: [final('ERROR')] },
  { name: 'AT+CPIN? -> +CME ERROR: 10', expect: { command: 'AT+CPIN?' }, wire: '\r\n+CME ERROR: 10\r\n', events: [final('+CME ERROR', { code: 10, line: '+CME ERROR: 10' })] },
  {
    name: 'AT+CPIN? -> +CME ERROR: SIM not inserted (AT+CMEE=2)',
    expect: { command: 'AT+CPIN?' },
    wire: '\r\n+CME ERROR: SIM not inserted\r\n',
    events: [final('+CME ERROR', { text: 'SIM not inserted', line: '+CME ERROR: SIM not inserted' })],
  },
  { name: 'AT+CMGD=1 -> +CMS ERROR: 321', expect: { command: 'AT+CMGD=1' }, wire: '\r\n+CMS ERROR: 321\r\n', events: [final('+CMS ERROR', { code: 321, line: '+CMS ERROR: 321' })] },
  { name: 'ATD -> NO CARRIER', expect: { command: 'ATD+4917012345678;' }, wire: '\r\nNO CARRIER\r\n', events: [final('NO CARRIER')] },
  { name: 'ATD -> BUSY', expect: { command: 'ATD+4917012345678;' }, wire: '\r\nBUSY\r\n', events: [final('BUSY')] },
  { name: 'ATD -> NO ANSWER', expect: { command: 'ATD+4917012345678;' }, wire: '\r\nNO ANSWER\r\n', events: [final('NO ANSWER')] },
  { name: 'ATD -> NO DIALTONE', expect: { command: 'ATD+4917012345678;' }, wire: '\r\nNO DIALTONE\r\n', events: [final('NO DIALTONE')] },
  { name: 'ATD -> CONNECT', expect: { command: 'ATD*99#' }, wire: '\r\nCONNECT\r\n', events: [final('CONNECT', { ok: true })] },
  { name: 'ATD -> CONNECT 9600', expect: { command: 'ATD*99#' }, wire: '\r\nCONNECT 9600\r\n', events: [final('CONNECT', { ok: true, code: 9600, line: 'CONNECT 9600' })] },
  {
    name: 'ATD -> CONNECT 9600/V.32 (text)',
    expect: { command: 'ATD*99#' },
    wire: '\r\nCONNECT 9600/V.32\r\n',
    events: [final('CONNECT', { ok: true, text: '9600/V.32', line: 'CONNECT 9600/V.32' })],
  },
  {
    name: 'AT+CMGS=23 (PDU): prompt, body, +CMGS: 5',
    expect: { command: 'AT+CMGS=23', body: SUBMIT },
    wire: '\r\n> \r\n+CMGS: 5\r\n\r\nOK\r\n',
    // With echo on, the modem echoes the command, then the body as typed, Ctrl-Z included.
    echoWire: `AT+CMGS=23\r\r\n> ${SUBMIT}\x1a\r\n+CMGS: 5\r\n\r\nOK\r\n`,
    events: [{ type: 'prompt' }, info('+CMGS: 5'), OK],
  },
  {
    name: 'AT+CMGS=23 refused: +CMS ERROR: 500 after the body',
    expect: { command: 'AT+CMGS=23', body: SUBMIT },
    wire: '\r\n> \r\n+CMS ERROR: 500\r\n',
    echoWire: `AT+CMGS=23\r\r\n> ${SUBMIT}\x1a\r\n+CMS ERROR: 500\r\n`,
    events: [{ type: 'prompt' }, final('+CMS ERROR', { code: 500, line: '+CMS ERROR: 500' })],
  },
  {
    name: 'AT+CMGR=3 (PDU): header with its PDU line',
    expect: { command: 'AT+CMGR=3' },
    wire: `\r\n+CMGR: 0,,28\r\n${DELIVER}\r\n\r\nOK\r\n`,
    events: [info('+CMGR: 0,,28', DELIVER), OK],
  },
  {
    name: 'AT+CMGR=3 (text): an SMS reading "OK" is the body, not the result',
    expect: { command: 'AT+CMGR=3' },
    wire: '\r\n+CMGR: "REC UNREAD","+4917012345678",,"24/05/01,12:00:00+08"\r\nOK\r\n\r\nOK\r\n',
    events: [info('+CMGR: "REC UNREAD","+4917012345678",,"24/05/01,12:00:00+08"', 'OK'), OK],
  },
  {
    name: 'AT+CMGL=4 (PDU): two stored messages',
    expect: { command: 'AT+CMGL=4' },
    wire: `\r\n+CMGL: 1,1,,28\r\n${DELIVER}\r\n+CMGL: 2,0,,28\r\n${DELIVER}\r\n\r\nOK\r\n`,
    events: [info('+CMGL: 1,1,,28', DELIVER), info('+CMGL: 2,0,,28', DELIVER), OK],
  },
  {
    name: 'AT+CSQ with a +CMTI arriving before the answer',
    expect: { command: 'AT+CSQ' },
    wire: '\r\n+CMTI: "SM",4\r\n\r\n+CSQ: 14,99\r\n\r\nOK\r\n',
    echoWire: 'AT+CSQ\r\r\n+CMTI: "SM",4\r\n\r\n+CSQ: 14,99\r\n\r\nOK\r\n',
    events: [urc('+CMTI', '+CMTI: "SM",4'), info('+CSQ: 14,99'), OK],
  },
  {
    name: 'AT+COPS? with an unsolicited +CREG: 1 in the middle',
    expect: { command: 'AT+COPS?' },
    wire: '\r\n+CREG: 1\r\n\r\n+COPS: 0,0,"Telekom.de"\r\n\r\nOK\r\n',
    events: [urc('+CREG', '+CREG: 1'), info('+COPS: 0,0,"Telekom.de"'), OK],
  },
  {
    name: 'AT^SYSINFO: a ^ line that answers the command is information',
    expect: { command: 'AT^SYSINFO' },
    wire: '\r\n^SYSINFO:2,3,0,5,1,,4\r\n\r\nOK\r\n',
    events: [info('^SYSINFO:2,3,0,5,1,,4'), OK],
  },
  {
    name: 'AT+CUSD=1,"*100#",15 answered inline',
    expect: { command: 'AT+CUSD=1,"*100#",15' },
    wire: '\r\n+CUSD: 0,"Guthaben: 5,00 EUR",15\r\n\r\nOK\r\n',
    events: [info('+CUSD: 0,"Guthaben: 5,00 EUR",15'), OK],
  },
  {
    name: 'Iridium AT+SBDWB=5: READY, then status 0 and OK',
    expect: { command: 'AT+SBDWB=5' },
    wire: 'READY\r\n\r\n0\r\n\r\nOK\r\n',
    events: [info('READY'), info('0'), OK],
  },
  {
    name: 'Iridium AT+SBDIX: session result',
    expect: { command: 'AT+SBDIX' },
    wire: '\r\n+SBDIX: 0, 12, 1, 5, 5, 0\r\n\r\nOK\r\n',
    events: [info('+SBDIX: 0, 12, 1, 5, 5, 0'), OK],
  },
  { name: 'Iridium AT+CSQF: no space after the colon', expect: { command: 'AT+CSQF' }, wire: '\r\n+CSQF:4\r\n\r\nOK\r\n', events: [info('+CSQF:4'), OK] },
  {
    name: 'Iridium AT+SBDRB: "hello", checksum 02 14',
    expect: { command: 'AT+SBDRB', binary: true },
    wire: '\x00\x05hello\x02\x14\r\nOK\r\n',
    events: [{ type: 'binary', payload: wire('hello'), checksum: 0x0214, checksumOk: true }, OK],
  },
  {
    name: 'Iridium AT+SBDRB: payload holding CR LF "OK" CR LF',
    expect: { command: 'AT+SBDRB', binary: true },
    // 0D+0A+4F+4B+0D+0A = 0xC8
    wire: '\x00\x06\r\nOK\r\n\x00\xc8\r\nOK\r\n',
    events: [{ type: 'binary', payload: wire('\r\nOK\r\n'), checksum: 0xc8, checksumOk: true }, OK],
  },
  {
    name: 'Iridium AT+SBDRB: empty MT buffer',
    expect: { command: 'AT+SBDRB', binary: true },
    wire: '\x00\x00\x00\x00\r\nOK\r\n',
    events: [{ type: 'binary', payload: wire(''), checksum: 0, checksumOk: true }, OK],
  },
  {
    name: 'Iridium AT+SBDRB: echo ending in CR LF, payload of 0x00 and 0xFF bytes',
    expect: { command: 'AT+SBDRB', binary: true },
    wire: '\x00\x03\x00\xff\x0a\x01\x09\r\nOK\r\n',
    echoWire: 'AT+SBDRB\r\n\x00\x03\x00\xff\x0a\x01\x09\r\nOK\r\n',
    events: [{ type: 'binary', payload: hex('00 FF 0A'), checksum: 0x0109, checksumOk: true }, OK],
  },
  {
    name: 'Iridium AT+SBDRB: wrong checksum is reported, not dropped',
    expect: { command: 'AT+SBDRB', binary: true },
    wire: '\x00\x05hello\x02\x15\r\nOK\r\n',
    events: [{ type: 'binary', payload: wire('hello'), checksum: 0x0215, checksumOk: false }, OK],
  },
  {
    name: 'Iridium AT+SBDRB: 400 bytes of FF, the sum 0x18E70 wraps to checksum 8E 70',
    expect: { command: 'AT+SBDRB', binary: true },
    wire: `\x01\x90${'\xff'.repeat(400)}\x8e\x70\r\nOK\r\n`,
    events: [{ type: 'binary', payload: new Uint8Array(400).fill(0xff), checksum: 0x8e70, checksumOk: true }, OK],
  },
  // URCs: nothing outstanding.
  { name: 'URC +CMTI', wire: '\r\n+CMTI: "SM",3\r\n', events: [urc('+CMTI', '+CMTI: "SM",3')] },
  { name: 'URC +CMT (PDU) with its PDU line', wire: `\r\n+CMT: ,28\r\n${DELIVER}\r\n`, events: [urc('+CMT', '+CMT: ,28', DELIVER)] },
  {
    name: 'URC +CMT (text) with its text line',
    wire: '\r\n+CMT: "+4917012345678",,"24/05/01,12:00:00+08"\r\nOn my way\r\n',
    events: [urc('+CMT', '+CMT: "+4917012345678",,"24/05/01,12:00:00+08"', 'On my way')],
  },
  { name: 'URC +CDS (PDU) with its PDU line', wire: `\r\n+CDS: 25\r\n${STATUS_REPORT}\r\n`, events: [urc('+CDS', '+CDS: 25', STATUS_REPORT)] },
  {
    name: 'URC +CDS (text): one line only',
    wire: '\r\n+CDS: 6,69,"+31628870634",145,"24/05/01,12:00:00+08","24/05/01,12:00:05+08",0\r\n',
    events: [urc('+CDS', '+CDS: 6,69,"+31628870634",145,"24/05/01,12:00:00+08","24/05/01,12:00:05+08",0')],
  },
  { name: 'URC +CDSI', wire: '\r\n+CDSI: "SR",5\r\n', events: [urc('+CDSI', '+CDSI: "SR",5')] },
  { name: 'URC RING', wire: '\r\nRING\r\n', events: [urc('RING', 'RING')] },
  { name: 'URC SBDRING (Iridium ring alert)', wire: '\r\nSBDRING\r\n', events: [urc('SBDRING', 'SBDRING')] },
  { name: 'URC +CREG: 5 (registered, roaming)', wire: '\r\n+CREG: 5\r\n', events: [urc('+CREG', '+CREG: 5')] },
  { name: 'URC +CIEV (Iridium service indicator)', wire: '\r\n+CIEV:1,1\r\n', events: [urc('+CIEV', '+CIEV:1,1')] },
  {
    name: 'URC +CUSD (network answer to USSD)',
    wire: '\r\n+CUSD: 0,"Balance: 5,00 EUR",15\r\n',
    events: [urc('+CUSD', '+CUSD: 0,"Balance: 5,00 EUR",15')],
  },
  { name: 'URC ^RSSI (vendor report)', wire: '\r\n^RSSI:15\r\n', events: [urc('^RSSI', '^RSSI:15')] },
];

const decode = (f: Fixture, bytes: Uint8Array, chunks: Uint8Array[] = [bytes]) => {
  const d = new AtDecoder();
  if (f.expect) d.expect(f.expect);
  return { d, events: chunks.flatMap((c) => d.push(c)) };
};
const variants = (f: Fixture): [string, Uint8Array][] =>
  f.expect ? [['echo off', wire(f.wire)], ['echo on', wire(f.echoWire ?? `${f.expect.command}\r${f.wire}`)]] : [['no command', wire(f.wire)]];

for (const f of fixtures) {
  test(`parse: ${f.name}`, () => {
    for (const [label, bytes] of variants(f)) {
      const { d, events } = decode(f, bytes);
      assert.equal(noEcho(events), f.events, label);
      if (label === 'echo on') assert.ok(events.some((e) => e.type === 'echo' && e.line === f.expect!.command), 'echo seen');
      assert.is(d.state, 'line', label);
      assert.is(d.bufferedBytes, 0, label);
      assert.equal(Object.values(d.errors).filter((n) => n > 0).length, f.events.some((e) => e.type === 'binary' && !e.checksumOk) ? 1 : 0, label);
    }
  });
  test(`chunking: ${f.name}, every 2-way split and 1-byte chunks`, () => {
    for (const [label, bytes] of variants(f)) {
      for (let cut = 0; cut <= bytes.length; cut++) {
        const { events } = decode(f, bytes, [bytes.subarray(0, cut), bytes.subarray(cut)]);
        assert.equal(noEcho(events), f.events, `${label}, split at ${cut}`);
      }
      const { events } = decode(f, bytes, Array.from(bytes, (b) => Uint8Array.of(b)));
      assert.equal(noEcho(events), f.events, `${label}, 1-byte chunks`);
    }
  });
}

test('a final result ends the command: the same +CREG line is then a URC', () => {
  const d = new AtDecoder();
  d.expect({ command: 'AT+CREG?' });
  assert.equal(d.push(wire('\r\n+CREG: 0,1\r\n\r\nOK\r\n')), [info('+CREG: 0,1'), OK]);
  assert.is(d.outstanding, null);
  assert.equal(d.push(wire('\r\n+CREG: 0,1\r\n')), [urc('+CREG', '+CREG: 0,1')]);
});

test('a URC between expect() and the echo does not hide the echo', () => {
  const d = new AtDecoder();
  d.expect({ command: 'AT+CSQ' });
  assert.equal(d.push(wire('\r\nRING\r\nAT+CSQ\r\r\n+CSQ: 9,99\r\n\r\nOK\r\n')), [
    urc('RING', 'RING'),
    { type: 'echo', line: 'AT+CSQ' },
    info('+CSQ: 9,99'),
    OK,
  ]);
});

test('commands joined with ";" claim each of their names', () => {
  const d = new AtDecoder();
  d.expect({ command: 'AT+CMEE=1;+CREG?' });
  assert.equal(noEcho(d.push(wire('\r\n+CREG: 0,1\r\n\r\nOK\r\n'))), [info('+CREG: 0,1'), OK]);
});

test('URC prefixes are configurable and match whole words', () => {
  const d = new AtDecoder({ urcPrefixes: ['+QIND', 'RING'] });
  assert.equal(d.push(wire('\r\n+QIND: "csq",20,99\r\n\r\n+CMTI: "SM",1\r\n\r\nRINGBACK\r\n\r\nRING\r\n')), [
    urc('+QIND', '+QIND: "csq",20,99'),
    info('+CMTI: "SM",1'), // not in this decoder's set
    info('RINGBACK'), // RING matches the word RING only
    urc('RING', 'RING'),
  ]);
  // The default +CMT prefix does not claim +CMTI (it would wait for a PDU line).
  const e = new AtDecoder();
  assert.equal(e.push(wire('\r\n+CMTI: "ME",7\r\n')), [urc('+CMTI', '+CMTI: "ME",7')]);
});

test('a line that is not a URC, with nothing outstanding, is information', () => {
  const d = new AtDecoder();
  assert.equal(d.push(wire('\r\nRDY\r\n\r\n+CPIN: READY\r\n\r\nSMS DONE\r\n')), [info('RDY'), info('+CPIN: READY'), info('SMS DONE')]);
});

test('an echo of another command is not dropped', () => {
  const d = new AtDecoder();
  d.expect({ command: 'AT+CREG?' });
  assert.equal(d.push(wire('AT+CSQ\r\r\nOK\r\n')), [info('AT+CSQ'), OK]);
});

test('text mode: the prompt comes again after a CR in the body', () => {
  const d = new AtDecoder();
  d.expect({ command: 'AT+CMGS="+4917012345678"' });
  assert.equal(d.push(wire('\r\n> \r\n> \r\n+CMGS: 7\r\n\r\nOK\r\n')), [{ type: 'prompt' }, { type: 'prompt' }, info('+CMGS: 7'), OK]);
});

test('expect({ prompt: false }) and commands that do not prompt read "> " as text', () => {
  const d = new AtDecoder();
  d.expect({ command: 'AT+CMGR=1' });
  assert.equal(d.push(wire('\r\n+CMGR: "REC READ","+4917012345678",,"24/05/01,12:00:00+08"\r\n> quoted\r\n\r\nOK\r\n')), [
    info('+CMGR: "REC READ","+4917012345678",,"24/05/01,12:00:00+08"', '> quoted'),
    OK,
  ]);
  const e = new AtDecoder();
  e.expect({ command: 'AT+CMGS=23', prompt: false });
  assert.equal(e.push(wire('\r\n> x\r\n')), [info('> x')]);
});

test('UTF-8 text (a +CUSD in a non-GSM charset) passes as text', () => {
  const d = new AtDecoder();
  const bytes = new Uint8Array(Buffer.from('\r\n+CUSD: 0,"Guthaben: 5,00 €",15\r\n', 'utf8'));
  assert.equal(d.push(bytes), [urc('+CUSD', '+CUSD: 0,"Guthaben: 5,00 €",15')]);
});

// ---- bad input: every kind, and what happens ----

test('bad input: NUL bytes are dropped and counted; the line around them survives', () => {
  const d = new AtDecoder();
  assert.equal(d.push(wire('\x00\x00\r\nO\x00K\r\n')), [OK]);
  assert.is(d.errors.nul, 3);
});

test('bad input: a line that is not UTF-8 is a garbage event; the next line is read normally', () => {
  const d = new AtDecoder();
  assert.equal(d.push(wire('\r\n\xff\xfe+CMTI\xc0\r\n\r\nOK\r\n')), [
    { type: 'garbage', reason: 'invalid-utf8', length: 8, sample: wire('\xff\xfe+CMTI\xc0') },
    OK,
  ]);
  assert.is(d.errors.invalidUtf8, 1);
  // Truncated sequence and an overlong encoding of "/" are not UTF-8 either.
  assert.is(d.push(wire('\xe2\x82\r\n\xc0\xaf\r\n')).filter((e) => e.type === 'garbage').length, 2);
});

test('bad input: a line of 4096 bytes passes; 4097 is dropped up to the next CR or LF', () => {
  const d = new AtDecoder();
  const max = 'A'.repeat(AT_MAX_LINE_BYTES);
  assert.equal(d.push(wire(`\r\n${max}\r\n`)), [info(max)]);
  const events = d.push(wire(`\r\n${max}BCDEFG`));
  assert.equal(events.map((e) => e.type === 'garbage' && [e.reason, e.length, e.sample.length]), [['overflow', AT_MAX_LINE_BYTES + 1, 32]]);
  assert.ok(d.bufferedBytes <= AT_MAX_LINE_BYTES);
  assert.equal(d.push(wire('tail of the long line\r\nOK\r\n')), [OK]);
  assert.is(d.errors.overflow, 1);
});

test('bad input: a megabyte without a line end raises one overflow and holds no memory', () => {
  const d = new AtDecoder();
  const junk = new Uint8Array(1 << 20).fill(0x41);
  assert.is(d.push(junk).length, 1);
  assert.is(d.bufferedBytes, 0);
  assert.equal(d.push(wire('\r\nOK\r\n')), [OK]);
});

test('bad input: a stray CR inside a line splits it in two', () => {
  const d = new AtDecoder();
  assert.equal(d.push(wire('\r\nO\rK\r\n')), [info('O'), info('K')]);
});

test('bad input: lone LFs, bare CRs and LF CR are line ends; empty lines vanish', () => {
  const d = new AtDecoder();
  assert.equal(d.push(wire('\n\n\nOK\n')), [OK]);
  assert.equal(d.push(wire('\rOK\r')), [OK]);
  assert.equal(d.push(wire('OK\n\r\n\r')), [OK]);
  assert.equal(d.push(wire('\r\r\r\n\n')), []);
});

test('bad input: leading and trailing spaces do not hide a result', () => {
  const d = new AtDecoder();
  assert.equal(d.push(wire('\r\n OK \r\n')), [{ ...OK, line: 'OK' }]);
});

test('bad input: look-alike results are information, not results', () => {
  const d = new AtDecoder();
  d.expect({ command: 'AT+X' });
  assert.equal(d.push(wire('\r\nOKAY\r\n\r\nERRORS\r\n\r\nCONNECTED\r\n\r\n+CME ERRORS\r\n')), [
    info('OKAY'),
    info('ERRORS'),
    info('CONNECTED'),
    info('+CME ERRORS'),
  ]);
  assert.is(d.outstanding, 'AT+X');
});

test('bad input: ">" without its space is not a prompt', () => {
  const d = new AtDecoder();
  d.expect({ command: 'AT+CMGS=23' });
  assert.equal(d.push(wire('\r\n>\r\n')), [info('>')]);
});

test('bad input: a PDU header whose PDU line is missing is emitted without it; the next line is read normally', () => {
  const d = new AtDecoder();
  assert.equal(d.push(wire('\r\n+CMT: ,28\r\nOK\r\n')), [urc('+CMT', '+CMT: ,28'), OK]);
  assert.equal(d.push(wire('\r\n+CDS: 25\r\n\r\nRING\r\n')), [urc('+CDS', '+CDS: 25'), urc('RING', 'RING')]);
  assert.is(d.errors.missingBody, 2);
});

test('bad input: a text-mode header takes the next line as its body, whatever it reads', () => {
  const d = new AtDecoder();
  const header = '+CMT: "+4917012345678",,"24/05/01,12:00:00+08"';
  assert.equal(d.push(wire(`\r\n${header}\r\nOK\r\n`)), [urc('+CMT', header, 'OK')]);
  // An empty SMS: the empty line right after the header is its body.
  assert.equal(d.push(wire(`\r\n${header}\r\n\r\nRING\r\n`)), [urc('+CMT', header, ''), urc('RING', 'RING')]);
});

test('bad input: a body line that overflows or is not UTF-8 leaves the header without a body', () => {
  const d = new AtDecoder();
  const events = d.push(wire(`\r\n+CMT: "+49",,"x"\r\n${'B'.repeat(AT_MAX_LINE_BYTES + 5)}\r\nOK\r\n`));
  assert.equal(events.map((e) => e.type), ['garbage', 'urc', 'final']);
  assert.equal(events[1], urc('+CMT', '+CMT: "+49",,"x"'));
  assert.equal(d.push(wire('\r\n+CMT: "+49",,"x"\r\n\xff\r\n')).map((e) => e.type), ['urc', 'garbage']);
});

test('bad input: binary mode, but the modem answers ERROR: read as lines, binary disarmed', () => {
  const d = new AtDecoder();
  d.expectBinary();
  assert.equal(noEcho(d.push(wire('AT+SBDRB\r\r\nERROR\r\n'))), [final('ERROR')]);
  // Disarmed: a NUL is a NUL again, not a length byte.
  assert.equal(d.push(wire('\x00\r\nOK\r\n')), [OK]);
  assert.is(d.errors.nul, 1);
});

test('bad input: a binary length over the limit is garbage; the rest is read as lines', () => {
  const d = new AtDecoder();
  d.expectBinary();
  // 0x07FF = 2047 > 1960.
  assert.equal(d.push(wire('\x07\xff\r\nOK\r\n')), [{ type: 'garbage', reason: 'binary-length', length: 2, sample: hex('07 FF') }, OK]);
  assert.is(d.errors.binaryLength, 1);
  // Under a smaller limit, 0x0110 = 272 is over too (a 9603 never sends more than 270).
  const e = new AtDecoder({ maxBinaryBytes: 270 });
  e.expectBinary();
  assert.equal(e.push(wire('\x01\x10')).map((x) => x.type), ['garbage']);
});

test('bad input: a binary read cut short waits for its bytes; reset() throws it away', () => {
  const d = new AtDecoder();
  d.expectBinary();
  assert.equal(d.push(wire('AT+SBDRB\r\x00\x05hel')).map((e) => e.type), ['echo']);
  assert.is(d.state, 'binary');
  assert.is(d.bufferedBytes, 3);
  d.reset();
  assert.is(d.errors.discardedPartial, 1);
  assert.is(d.state, 'line');
  assert.is(d.outstanding, null);
  assert.equal(d.push(wire('lo\x02\x14\r\nOK\r\n')), [info('lo\x02\x14'), OK]);
});

test('reset() throws away a half line and a waiting header, counts them, and keeps counting', () => {
  const d = new AtDecoder();
  d.push(wire('\r\n+CMT: ,28\r\n0791'));
  assert.is(d.state, 'body');
  d.reset();
  assert.is(d.errors.discardedPartial, 1);
  assert.equal(d.push(wire('\r\nOK\r\n')), [OK]);
  d.reset(); // nothing in progress: nothing counted
  assert.is(d.errors.discardedPartial, 1);
});

test('options outside their range are refused when the decoder is made', () => {
  assert.throws(() => new AtDecoder({ maxBinaryBytes: 2560 }), /2559/);
  assert.throws(() => new AtDecoder({ maxLineBytes: 1 }), /maxLineBytes/);
});

// ---- parseInfo ----

test('parseInfo splits name and arguments, honouring quotes', () => {
  assert.equal(parseInfo('+CMTI: "SM",3'), { name: '+CMTI', args: ['SM', 3] });
  assert.equal(parseInfo('+CMT: ,28'), { name: '+CMT', args: [null, 28] });
  assert.equal(parseInfo('+CMGR: 0,,28'), { name: '+CMGR', args: [0, null, 28] });
  assert.equal(parseInfo('+CUSD: 0,"Balance: 5,00 EUR",15'), { name: '+CUSD', args: [0, 'Balance: 5,00 EUR', 15] });
  assert.equal(parseInfo('+CMGL: 1,"REC UNREAD","+4917012345678",,"24/05/01,12:00:00+08"'), {
    name: '+CMGL',
    args: [1, 'REC UNREAD', '+4917012345678', null, '24/05/01,12:00:00+08'],
  });
  assert.equal(parseInfo('+SBDIX: 0, 12, 1, 5, 5, 0'), { name: '+SBDIX', args: [0, 12, 1, 5, 5, 0] });
  assert.equal(parseInfo('+CSQF:4'), { name: '+CSQF', args: [4] });
  assert.equal(parseInfo('^SYSINFO:2,3,0,5,1,,4'), { name: '^SYSINFO', args: [2, 3, 0, 5, 1, null, 4] });
  assert.equal(parseInfo('+CME ERROR: SIM not inserted'), { name: '+CME ERROR', args: ['SIM not inserted'] });
  assert.equal(parseInfo('+CPIN: READY'), { name: '+CPIN', args: ['READY'] });
  assert.equal(parseInfo('+CREG: -1,1.5'), { name: '+CREG', args: [-1, '1.5'] });
});

test('parseInfo: lines without arguments, huge numbers, and broken quotes', () => {
  assert.equal(parseInfo('RING'), { name: 'RING', args: [] });
  assert.equal(parseInfo('+SBDRT:'), { name: '+SBDRT', args: [] });
  assert.equal(parseInfo('+CCID: 89441000300000000001'), { name: '+CCID', args: ['89441000300000000001'] });
  assert.equal(parseInfo('+X: "unclosed,still one'), { name: '+X', args: ['unclosed,still one'] });
  assert.equal(parseInfo('+X: "a"junk,2'), { name: '+X', args: ['a', 2] });
  assert.equal(parseInfo('+X: ,,'), { name: '+X', args: [null, null, null] });
});

// ---- encoder ----

test('generate: atCommand writes the text and one CR, nothing else', () => {
  assert.is(toHex(atCommand('AT')), '41 54 0D');
  assert.is(toHex(atCommand('AT+CMGF=0')), '41 54 2B 43 4D 47 46 3D 30 0D');
  assert.is(toHex(atCommand('AT+SBDWB=5')), '41 54 2B 53 42 44 57 42 3D 35 0D');
});

test('generate: atCommand refuses empty text and control characters', () => {
  for (const bad of ['', 'AT\r', 'AT\nAT', 'AT\x1a', 'AT\x1b', 'AT\x00']) assert.throws(() => atCommand(bad), /control characters/);
});

test('generate: pduSubmitBody writes the hex digits and Ctrl-Z', () => {
  assert.is(toHex(pduSubmitBody('0011')), '30 30 31 31 1A');
  assert.is(toHex(pduSubmitBody('00aF')), '30 30 61 46 1A');
  for (const bad of ['', '0', '001', '00 11', 'GG']) assert.throws(() => pduSubmitBody(bad), /hex/);
});

test('generate: sbdChecksum of "hello" is 02 14', () => {
  assert.is(sbdChecksum(wire('hello')), 0x0214);
  assert.is(sbdChecksum(new Uint8Array(340).fill(0xff)), (340 * 255) & 0xffff);
});

test('round trip: an encoded command comes back as its echo', () => {
  const d = new AtDecoder();
  d.expect({ command: 'AT+CMGS=23', body: SUBMIT });
  const events = [...d.push(atCommand('AT+CMGS=23')), ...d.push(wire('\r\n> ')), ...d.push(pduSubmitBody(SUBMIT)), ...d.push(wire('\r\n+CMGS: 9\r\n\r\nOK\r\n'))];
  assert.equal(events, [
    { type: 'echo', line: 'AT+CMGS=23' },
    { type: 'prompt' },
    { type: 'echo', line: `${SUBMIT}\x1a` },
    info('+CMGS: 9'),
    OK,
  ]);
});

// ---- fuzz ----


test('fuzz: 1,000,000 random and mutated inputs never throw, stay bounded, and resync on OK', () => {
  const random = rng(0xa7c0de);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const special = [0x0d, 0x0a, 0x00, 0x3e, 0x20, 0x1a, 0x22, 0x2c, 0x3a, 0x2b, 0xff, 0xc3];
  const byte = () => (random() < 0.3 ? pick(special) : Math.floor(random() * 256));
  const transcripts = fixtures.flatMap((f) => variants(f).map(([, bytes]) => ({ expect: f.expect, bytes: Array.from(bytes) })));
  const d = new AtDecoder();
  let events = 0;
  let resyncs = 0;
  for (let i = 0; i < 1_000_000; i++) {
    let chunk: Uint8Array;
    if (random() < 0.0005) {
      // A run long enough to overflow the line buffer (or fill a binary read).
      chunk = new Uint8Array(AT_MAX_LINE_BYTES - 100 + Math.floor(random() * 200)).fill(0x41 + Math.floor(random() * 26));
    } else if (random() < 0.5) {
      chunk = Uint8Array.from({ length: 1 + Math.floor(random() * 24) }, byte);
    } else {
      const t = pick(transcripts);
      if (t.expect && random() < 0.7) d.expect(t.expect);
      const bytes = t.bytes.slice();
      for (let m = Math.floor(random() * 3); m > 0; m--) {
        const at = Math.floor(random() * bytes.length);
        const op = random();
        if (op < 0.4) bytes[at] = byte();
        else if (op < 0.7) bytes.splice(at, 1);
        else bytes.splice(at, 0, bytes[at]);
      }
      chunk = Uint8Array.from(bytes.slice(0, random() < 0.2 ? Math.floor(random() * bytes.length) : bytes.length));
    }
    events += d.push(chunk).length;
    if (d.bufferedBytes > AT_MAX_LINE_BYTES) assert.unreachable(`buffer grew to ${d.bufferedBytes} at input ${i}`);
    if (random() < 0.0005) d.reset();
    // Every so often: garbage then a clean "\r\nOK\r\n" must give OK. Two exceptions, both by
    // design: a binary read in progress swallows it as payload, and when the garbage ended in a
    // text-mode +CMT/+CMGR header, "OK" is that SMS's text; then the next OK resyncs.
    if (i % 97 === 0 && d.state !== 'binary') {
      const after = d.push(wire('\r\nOK\r\n'));
      const last = after[after.length - 1];
      const tookBody = after.some((e) => (e.type === 'urc' || e.type === 'info') && e.body === 'OK');
      if (tookBody) assert.equal(d.push(wire('\r\nOK\r\n')), [OK], `second OK after a text body at input ${i}`);
      else assert.equal(last, OK, `no OK after garbage at input ${i}: ${JSON.stringify(after)}`);
      resyncs++;
    }
  }
  assert.ok(events > 100_000, `only ${events} events`);
  assert.ok(resyncs > 9000, `only ${resyncs} resync checks`);
  const e = d.errors;
  assert.ok(e.invalidUtf8 > 0 && e.nul > 0 && e.overflow > 0 && e.badChecksum > 0 && e.missingBody > 0, `fuzz input must have produced every counted error: ${JSON.stringify(e)}`);
  // Still usable: a clean exchange after all that decodes exactly.
  d.reset();
  d.expect({ command: 'AT+CREG?' });
  assert.equal(d.push(wire('AT+CREG?\r\r\n+CREG: 0,1\r\n\r\nOK\r\n')), [{ type: 'echo', line: 'AT+CREG?' }, info('+CREG: 0,1'), OK]);
});

test.run();
