import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeUi, encodeUi, parseTnc2 } from '../../../src/bearers/aprs/codec/ax25.ts';
import { decodeInfo } from '../../../src/bearers/aprs/codec/info.ts';
import { decodeMessage, encodeMessage } from '../../../src/bearers/aprs/codec/message.ts';
import { decodeMicE } from '../../../src/bearers/aprs/codec/mic-e.ts';
import { decodePosition, encodeUncompressed } from '../../../src/bearers/aprs/codec/position.ts';
import { rng } from '../../helpers/rng.ts';

// Seeded fuzz of every APRS parser, 1,000,000 inputs each: mutations of real fields and frames
// plus random bytes. A parser never throws, and what it reads stays in range; encoders'
// output reads back to what went in.

const INPUTS = 1_000_000;
const SEEDS = [
  '!4903.50N/07201.75W-Test 001234', '@092345z4903.50N/07201.75W>088/036/A=001234', '!/5L!!<*e7>7P[', '=/5L!!<*e7>{?!',
  '`(_fn"O>/"4{}hi', ';LEADER   *092345z4903.50N/07201.75W>088/036', ')AID #2!4903.50N/07201.75WA', '>092345zNet Control',
  'T#005,199,000,255,073,123,01101001', ':WU2Z     :Testing{003', ':KB2ICI-14:ack003', ':KB2ICI-14:Hi{AB}CD', '}W1AW>APRS,TCPIP,N0CALL*::N0CALL-1 :hi{7',
];
const DESTS = ['APRS', 'S3RUVT', 'PPPPPP', 'ZZZZZZ', 'A0KLZ9', 'APZFBR'];

function mutate(random: () => number, s: string): string {
  const chars = [...s];
  const n = 1 + Math.floor(random() * 4);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(random() * (chars.length + 1));
    const c = String.fromCharCode(Math.floor(random() * (random() < 0.9 ? 0x80 : 0x3000)));
    const op = random();
    if (op < 0.4) chars[at] = c;
    else if (op < 0.7) chars.splice(at, 0, c);
    else chars.splice(at, 1);
  }
  return chars.join('');
}

function checkPosition(p: { latitude: number; longitude: number } | null | undefined): void {
  if (!p) return;
  if (!(Math.abs(p.latitude) <= 90 && Math.abs(p.longitude) <= 180)) assert.unreachable(`position out of range ${JSON.stringify(p)}`);
}

test('fuzz: 1,000,000 information fields (every DTI reader, Mic-E, messages, positions) never throw, stay in range', () => {
  const random = rng(0xa945);
  for (let i = 0; i < INPUTS; i++) {
    const seed = SEEDS[i % SEEDS.length];
    const info = random() < 0.85 ? mutate(random, seed) : String.fromCharCode(...Array.from({ length: Math.floor(random() * 40) }, () => Math.floor(random() * 256)));
    const dest = DESTS[Math.floor(random() * DESTS.length)];
    const r = decodeInfo(dest, info);
    if (r.type === 'position' || r.type === 'mic-e' || r.type === 'object' || r.type === 'item') checkPosition(r.position);
    if (r.type === 'message' && r.id !== null && !/^[A-Za-z0-9]{1,5}$/.test(r.id)) assert.unreachable(`bad id ${r.id}`);
    checkPosition(decodeMicE(dest, info));
    checkPosition(decodePosition(info.slice(1)));
    decodeMessage(info);
  }
});

test('fuzz: 1,000,000 AX.25 frames (mutated and random) never throw; what decodes re-encodes to the same bytes', () => {
  const random = rng(0xa925);
  const base = encodeUi({ destination: { call: 'APRS', ssid: 0 }, source: { call: 'N0CALL', ssid: 7 }, path: [{ call: 'WIDE1', ssid: 1, flag: true }, { call: 'WIDE2', ssid: 1, flag: false }], info: new TextEncoder().encode('!4903.50N/07201.75W-') });
  let decoded = 0;
  for (let i = 0; i < INPUTS; i++) {
    let bytes: Uint8Array;
    if (random() < 0.7) {
      bytes = base.slice(0, Math.max(0, base.length - Math.floor(random() * 4)));
      const flips = 1 + Math.floor(random() * 3);
      for (let f = 0; f < flips; f++) bytes[Math.floor(random() * bytes.length)] ^= 1 << Math.floor(random() * 8);
    } else bytes = Uint8Array.from({ length: Math.floor(random() * 90) }, () => Math.floor(random() * 256));
    const r = decodeUi(bytes);
    if (!r.ok) continue;
    decoded++;
    const again = encodeUi({ ...r.frame, path: r.frame.path });
    // The C bits of destination and source are normalised to a command frame and the reserved
    // bits of every SSID byte set; the rest is kept.
    if (again.length !== bytes.length) assert.unreachable('length changed');
    const addressEnd = (r.frame.path.length + 2) * 7;
    for (let k = 0; k < bytes.length; k++) {
      const ssidByte = k < addressEnd && k % 7 === 6;
      const mask = ssidByte ? (k < 14 ? 0x1f : 0x9f) : 0xff;
      if ((again[k] & mask) !== (bytes[k] & mask)) assert.unreachable(`byte ${k} changed`);
    }
  }
  assert.ok(decoded > 1000, `only ${decoded} frames decoded`);
});

test('fuzz: 1,000,000 APRS-IS lines never throw; encoded messages and positions read back', () => {
  const random = rng(0xa915);
  const lines = ['N0CALL-9>APRS,WIDE2-1,qAR,W1ABC-10::BLN1     :hello', 'W1AW>APRS,TCPIP*,qAC,T2TEST:>status', '# logresp N0CALL verified, server T2TEST'];
  for (let i = 0; i < INPUTS; i++) {
    const line = mutate(random, lines[i % lines.length]);
    const p = parseTnc2(line);
    if (p && (p.source.length > 9 || p.path.length > 10)) assert.unreachable(`accepted ${line}`);
    if (i % 8 === 0) {
      const text = Array.from({ length: Math.floor(random() * 68) }, () => String.fromCharCode(0x20 + Math.floor(random() * 0x5f))).join('').replace(/[|~{]/g, '.');
      const id = String(Math.floor(random() * 99999) + 1);
      const m = decodeMessage(encodeMessage('W1AW-15', text, id));
      if (!m || m.type !== 'message' || m.id !== id || m.text !== text) {
        // A text that itself reads as ack/rej is the one ambiguity the format has.
        if (!/^(ack|rej)[A-Za-z0-9]{1,5}/.test(text)) assert.unreachable(`message ${JSON.stringify(text)} read back as ${JSON.stringify(m)}`);
      }
      const lat = random() * 180 - 90;
      const lon = random() * 360 - 180;
      const back = decodePosition(encodeUncompressed({ latitude: lat, longitude: lon, symbolTable: '/', symbol: '>' }));
      if (!back || Math.abs(back.latitude - lat) > 1 / 6000 + 1e-9 || Math.abs(back.longitude - lon) > 1 / 6000 + 1e-9) assert.unreachable(`position ${lat},${lon} read back as ${JSON.stringify(back)}`);
    }
  }
});

test.run();
