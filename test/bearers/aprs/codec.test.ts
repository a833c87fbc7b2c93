import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeUi, encodeUi, formatTnc2, parseAddress, parseTnc2, uiToTnc2 } from '../../../src/bearers/aprs/codec/ax25.ts';
import { decodeInfo, encodeObject, encodeStatus } from '../../../src/bearers/aprs/codec/info.ts';
import { decodeMessage, encodeAck, encodeMessage } from '../../../src/bearers/aprs/codec/message.ts';
import { encodePositionReport } from '../../../src/bearers/aprs/codec/position.ts';
import { encodeFrame, KissDecoder, kissCommand, kissPort } from '../../../src/bearers/shared/codec/kiss.ts';
import { direwolfDecode, direwolfLine } from './direwolf.ts';

// The AX.25 and APRS codecs (docs/protocols/aprs.md) against fixtures written byte by byte from
// AX.25 2.2 and the APRS 1.0.1 reference (its own examples where it gives them), and every
// frame the encoders build read back by Dire Wolf's decode_aprs.

const hex = (s: string) => new Uint8Array(s.trim().split(/\s+/).map((h) => parseInt(h, 16)));
const text = (s: string) => new TextEncoder().encode(s);
const near = (a: number, b: number, eps = 1e-4) => assert.ok(Math.abs(a - b) < eps, `${a} is not ${b}`);

// N0CALL>APRS,WIDE1-1:>hi by hand: each callsign character shifted left one bit, spaces (0x40)
// pad to six; SSID byte = C/H bit 0x80 | reserved 0x60 | SSID << 1 | last-address bit.
const FIXTURE = hex(`
  82 A0 A4 A6 40 40 E0
  9C 60 86 82 98 98 60
  AE 92 88 8A 62 40 63
  03 F0 3E 68 69`);

test('AX.25: a UI frame with destination C bit, source, one digipeater, control 03 and PID F0', () => {
  const bytes = encodeUi({ destination: { call: 'APRS', ssid: 0 }, source: { call: 'N0CALL', ssid: 0 }, path: [parseAddress('WIDE1-1')!], info: text('>hi') });
  assert.equal([...bytes], [...FIXTURE]);
  const d = decodeUi(FIXTURE);
  assert.ok(d.ok);
  if (!d.ok) return;
  assert.is(formatTnc2(uiToTnc2(d.frame)), 'N0CALL>APRS,WIDE1-1:>hi');
});

test('AX.25: SSIDs and the has-been-repeated bit (E3: H set, SSID 1, last)', () => {
  const bytes = FIXTURE.slice();
  bytes[20] = 0xe3;
  bytes[13] = 0x60 | (7 << 1); // source SSID 7
  const d = decodeUi(bytes);
  assert.ok(d.ok);
  if (!d.ok) return;
  assert.equal(d.frame.source, { call: 'N0CALL', ssid: 7, flag: false });
  assert.equal(d.frame.path[0], { call: 'WIDE1', ssid: 1, flag: true });
  assert.is(formatTnc2(uiToTnc2(d.frame)), 'N0CALL-7>APRS,WIDE1-1*:>hi');
  assert.ok(direwolfLine(direwolfDecode(encodeFrame(0, bytes))).startsWith('N0CALL-7>APRS,WIDE1-1*:>hi'));
});

test('AX.25: not APRS (an I frame, another PID, a cut address, a lower-case call) is refused with a reason', () => {
  const i = FIXTURE.slice();
  i[21] = 0x00;
  assert.is(decodeUi(i).ok, false);
  const pid = FIXTURE.slice();
  pid[22] = 0xcc;
  assert.is(decodeUi(pid).ok, false);
  assert.is(decodeUi(FIXTURE.slice(0, 10)).ok, false);
  const lower = FIXTURE.slice();
  lower[0] = 0x61 << 1;
  assert.is(decodeUi(lower).ok, false);
  assert.is(parseAddress('N0CALL-16'), null);
  assert.is(parseAddress('TOOLONG1'), null);
  assert.is(parseAddress('n0call'), null);
});

test('KISS: port numbers in the command byte, frames read at every chunk offset', () => {
  assert.is(kissCommand(0, 0), 0x00);
  assert.is(kissCommand(1, 0), 0x10);
  assert.equal(kissPort(0x20), { port: 2, command: 0 });
  const wire = encodeFrame(kissCommand(1, 0), FIXTURE);
  for (let cut = 0; cut <= wire.length; cut++) {
    const dec = new KissDecoder();
    const frames = [...dec.push(wire.slice(0, cut)), ...dec.push(wire.slice(cut))];
    assert.is(frames.length, 1);
    assert.is(frames[0].command, 0x10);
    assert.equal([...frames[0].payload], [...FIXTURE]);
  }
});

test('TNC2 text: APRS-IS lines with q-constructs; comments and junk are not packets', () => {
  const p = parseTnc2('N0CALL-9>APRS,WIDE2-1,qAR,W1ABC-10::BLN1     :hello');
  assert.equal(p, { source: 'N0CALL-9', destination: 'APRS', path: ['WIDE2-1', 'qAR', 'W1ABC-10'], info: ':BLN1     :hello' });
  assert.is(parseTnc2('# aprsc 2.1.14'), null);
  assert.is(parseTnc2('garbage'), null);
});

test('messages: text and id, ack and rej, the reply-ack form (APRS 1.0.1 ch. 14, 1.1 addendum)', () => {
  assert.is(encodeMessage('WU2Z', 'Testing', '003'), ':WU2Z     :Testing{003');
  assert.is(encodeAck('ack', 'KB2ICI-14', '003'), ':KB2ICI-14:ack003');
  assert.equal(decodeMessage(':WU2Z     :Testing{003'), { type: 'message', addressee: 'WU2Z', text: 'Testing', id: '003', replyAck: null });
  assert.equal(decodeMessage(':KB2ICI-14:ack003'), { type: 'ack', addressee: 'KB2ICI-14', id: '003', replyAck: null });
  assert.equal(decodeMessage(':KB2ICI-14:rej003'), { type: 'rej', addressee: 'KB2ICI-14', id: '003', replyAck: null });
  assert.equal(decodeMessage(':KB2ICI-14:Hi{AB}CD'), { type: 'message', addressee: 'KB2ICI-14', text: 'Hi', id: 'AB', replyAck: 'CD' });
  assert.equal(decodeMessage(':KB2ICI-14:Hi{AB}'), { type: 'message', addressee: 'KB2ICI-14', text: 'Hi', id: 'AB', replyAck: null });
  assert.equal(decodeMessage(':BLN1     :Net tonight'), { type: 'message', addressee: 'BLN1', text: 'Net tonight', id: null, replyAck: null });
  assert.throws(() => encodeMessage('W1AW', 'x'.repeat(68), '1'));
  assert.throws(() => encodeMessage('W1AW', 'a{b', '1'));
});

test('positions: uncompressed with and without timestamp, data extension, altitude (APRS 1.0.1 ch. 8)', () => {
  const a = decodeInfo('APRS', '!4903.50N/07201.75W-Test 001234');
  assert.is(a.type, 'position');
  if (a.type !== 'position') return;
  near(a.position.latitude, 49 + 3.5 / 60);
  near(a.position.longitude, -(72 + 1.75 / 60));
  assert.is(a.position.symbol, '-');
  assert.is(a.position.comment, 'Test 001234');
  assert.is(a.messaging, false);
  const b = decodeInfo('APRS', '@092345z4903.50N/07201.75W>088/036/A=001234');
  assert.is(b.type, 'position');
  if (b.type !== 'position') return;
  assert.equal(b.timestamp, { form: 'dhm-utc', day: 9, hour: 23, minute: 45 });
  assert.is(b.messaging, true);
  assert.is(b.position.course_deg, 88);
  near(b.position.speed_kmh!, 36 * 1.852);
  near(b.position.altitude_m!, 1234 * 0.3048);
  // Spaces for ambiguity read as zeros; 63 minutes is no position.
  const c = decodeInfo('APRS', '/092345z4903.  N/07201.75W>');
  assert.is(c.type === 'position' && c.position.latitude, 49.05);
  assert.is(decodeInfo('APRS', '/092345z4963.50N/07201.75W>').type, 'other');
});

test('positions: compressed (the reference\'s /5L!!<*e7>7P[ example: 49.5 N 72.75 W, 88 degrees, 36.2 knots)', () => {
  const a = decodeInfo('APRS', '!/5L!!<*e7>7P[');
  assert.is(a.type, 'position');
  if (a.type !== 'position') return;
  near(a.position.latitude, 49.5);
  near(a.position.longitude, -72.75);
  assert.is(a.position.course_deg, 88);
  near(a.position.speed_kmh! / 1.852, 36.2, 0.05);
  assert.is(a.position.compressed, true);
});

test('Mic-E: latitude and flags in the destination, longitude, speed, course, altitude in the field', () => {
  // 33 25.64 N, 112 07.74 W, 20 knots, 251 degrees, 100 m, In Service (bits 1 0 1), by hand:
  // destination S 3 R U V T: 3 (bit 1 std), 3 (bit 0), 2 (bit 1 std), 5 (north), 6 (+100), 4 (west).
  // Field: ` then 12+28 '(', 7+60+28 '_' (minutes under 10 are sent plus 60), 74+28 'f', SP 82+28 'n' (800 + 20 knots), DC 6+28 '"'
  // (651 = 400 + 251), SE 51+28 'O', symbol '>', table '/', altitude 10100 = 1,19,90 -> "4{ and }.
  const info = '`(_fn"O>/"4{}hi';
  const a = decodeInfo('S3RUVT', info);
  assert.is(a.type, 'mic-e');
  if (a.type !== 'mic-e') return;
  near(a.position.latitude, 33 + 25.64 / 60);
  near(a.position.longitude, -(112 + 7.74 / 60));
  near(a.position.speed_kmh! / 1.852, 20);
  assert.is(a.position.course_deg, 251);
  assert.is(a.position.altitude_m, 100);
  assert.is(a.position.status, 'In Service');
  assert.is(a.position.comment, 'hi');
  const frame = encodeUi({ destination: { call: 'S3RUVT', ssid: 0 }, source: { call: 'N0CALL', ssid: 9 }, path: [], info: text(info) });
  const dw = direwolfDecode(encodeFrame(0, frame));
  assert.match(dw, /In Service/);
  assert.match(dw, /N 33 25\.64/);
  assert.match(dw, /W 112 07\.74/);
  assert.match(dw, /alt 328 ft/);
  assert.match(dw, /251/);
  assert.match(dw, /20 knots|37 km\/h|23 MPH/);
});

test('objects, items, status, telemetry (APRS 1.0.1 ch. 11, 16, 13)', () => {
  const o = decodeInfo('APRS', ';LEADER   *092345z4903.50N/07201.75W>088/036');
  assert.is(o.type, 'object');
  if (o.type === 'object') {
    assert.is(o.name, 'LEADER');
    assert.is(o.live, true);
    assert.is(o.position.course_deg, 88);
  }
  const i = decodeInfo('APRS', ')AID #2!4903.50N/07201.75WA');
  assert.is(i.type, 'item');
  if (i.type === 'item') assert.is(i.name, 'AID #2');
  const k = decodeInfo('APRS', ';LEADER   _092345z4903.50N/07201.75W>');
  assert.is(k.type === 'object' && k.live, false);
  assert.equal(decodeInfo('APRS', '>092345zNet Control Center'), { type: 'status', text: 'Net Control Center', timestamp: { form: 'dhm-utc', day: 9, hour: 23, minute: 45 } });
  assert.equal(decodeInfo('APRS', '>Net Control Center'), { type: 'status', text: 'Net Control Center', timestamp: null });
  assert.equal(decodeInfo('APRS', 'T#005,199,000,255,073,123,01101001'), { type: 'telemetry', sequence: '005', analog: [199, 0, 255, 73, 123], digital: '01101001' });
  const t = decodeInfo('APRS', '}W1AW>APRS,TCPIP,N0CALL*::N0CALL-1 :hi{7');
  assert.is(t.type, 'third-party');
});

// Every encoder's output through Dire Wolf: it must read the same fields back.
const AT = Date.parse('2026-03-09T23:45:00Z');
const dwCases: Array<{ what: string; info: string; expect: RegExp[] }> = [
  { what: 'message', info: encodeMessage('W1AW-7', 'Meet at the hut', '42'), expect: [/APRS Message 42 for "W1AW-7"/, /Meet at the hut/] },
  { what: 'ack', info: encodeAck('ack', 'W1AW-7', '42'), expect: [/ACK message 42 for "W1AW-7"/] },
  { what: 'rej', info: encodeAck('rej', 'W1AW-7', '42'), expect: [/REJ message 42 for "W1AW-7"/] },
  { what: 'position', info: encodePositionReport({ latitude: 49.058333, longitude: -72.029167, symbolTable: '/', symbol: '-', altitude_m: 100, comment: 'fieldbridge' }, { messaging: true }), expect: [/N 49 03\.5000, W 072 01\.7500, alt 328 ft/, /fieldbridge/] },
  { what: 'timestamped position', info: encodePositionReport({ latitude: -33.8688, longitude: 151.2093, symbolTable: '/', symbol: '>' }, { messaging: false, atMs: AT }), expect: [/S 33 52\.1300, E 151 12\.5600/] },
  { what: 'object', info: encodeObject('CAMP3', { latitude: 46.5, longitude: 7.25, symbolTable: '/', symbol: ';' }, AT), expect: [/Object, "CAMP3"/, /N 46 30\.0000, E 007 15\.0000/] },
  { what: 'status', info: encodeStatus('on the air', AT), expect: [/Status Report/, /\non the air/] },
];
for (const c of dwCases) {
  test(`Dire Wolf reads our ${c.what} as intended`, () => {
    const frame = encodeUi({ destination: { call: 'APZFBR', ssid: 0 }, source: { call: 'N0CALL', ssid: 10 }, path: [parseAddress('WIDE1-1')!, parseAddress('WIDE2-1')!], info: text(c.info) });
    const dw = direwolfDecode(encodeFrame(0, frame));
    assert.is(direwolfLine(dw), `N0CALL-10>APZFBR,WIDE1-1,WIDE2-1:${c.info}`);
    for (const e of c.expect) assert.match(dw, e, `${c.what}: ${e} not in\n${dw}`);
    const back = decodeInfo('APZFBR', c.info);
    assert.is.not(back.type, 'other');
  });
}

test.run();
