import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AtDecoder, type AtEvent } from '../../../src/bearers/shared/codec/at.ts';
import {
  IRIDIUM_ERAS, holdsForMinutes, moStatus, msstmTime, parseMsstm, parseSbdix, parseSignal, rockblockPrefix, sbdWriteData, sessionCredits,
  splitRockblockSender,
} from '../../../src/bearers/iridium/sbd.ts';

// The SBD codec (src/bearers/iridium/sbd.ts) with fixtures written from
// docs/protocols/iridium-sbd.md byte by byte, never from our encoder: the SBDWB data with its
// checksum, the +SBDIX fields, the signal answers, the MO status table, the credit rule and
// RockBLOCK addressing. The AT+SBDRB binary answer is the AT decoder's (test/bearers/shared/codec/
// at.test.ts has its fixtures); the chunked test here feeds a whole SBD exchange through it.

const hex = (s: string) => Uint8Array.from(s.trim().split(/\s+/).filter(Boolean).map((b) => parseInt(b, 16)));
const toHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0').toUpperCase()).join(' ');
const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

// ---- SBDWB data: payload then the low 16 bits of the sum, high byte first (3.2) ----

const writes: { name: string; payload: Uint8Array; wire: string }[] = [
  // iridium-sbd.md 3.2's example: 0x68+0x65+0x6C+0x6C+0x6F = 0x214.
  { name: '"hello" (the reference example)', payload: ascii('hello'), wire: '68 65 6C 6C 6F 02 14' },
  // A single byte: the sum is the byte.
  { name: 'one byte 0x01', payload: hex('01'), wire: '01 00 01' },
  // Bytes the AT line codec would take for line ends and a final result travel as they are.
  { name: 'CR LF "OK" CR LF', payload: hex('0D 0A 4F 4B 0D 0A'), wire: '0D 0A 4F 4B 0D 0A 00 C8' },
  // 340 bytes of 0xFF: 340 x 255 = 86700 = 0x152AC, only the low 16 bits 0x52AC are sent.
  { name: '340 x FF: the sum wraps', payload: new Uint8Array(340).fill(0xff), wire: `${'FF '.repeat(340)}52 AC` },
];

for (const w of writes) {
  test(`SBDWB data: ${w.name}`, () => {
    assert.is(toHex(sbdWriteData(w.payload)), toHex(hex(w.wire)));
  });
}

test('SBDWB data: 0 and 341 bytes are refused before anything is written', () => {
  assert.throws(() => sbdWriteData(new Uint8Array(0)), /1 to 340 bytes, got 0/);
  assert.throws(() => sbdWriteData(new Uint8Array(341)), /1 to 340 bytes, got 341/);
});

// ---- +SBDIX (3.3) ----

test('+SBDIX: the six fields, with and without spaces', () => {
  assert.equal(parseSbdix('+SBDIX: 0, 12, 1, 5, 5, 0'), { ok: true, value: { moStatus: 0, momsn: 12, mtStatus: 1, mtmsn: 5, mtLength: 5, mtQueued: 0 } });
  assert.equal(parseSbdix('+SBDIX:32,65535,2,0,0,0'), { ok: true, value: { moStatus: 32, momsn: 65535, mtStatus: 2, mtmsn: 0, mtLength: 0, mtQueued: 0 } });
  // RockBLOCK's example: a blank MO sent, a 6-byte MT received, 8 more queued.
  assert.equal(parseSbdix('+SBDIX: 0, 1, 1, 1, 6, 8').ok && parseSbdix('+SBDIX: 0, 1, 1, 1, 6, 8'), { ok: true, value: { moStatus: 0, momsn: 1, mtStatus: 1, mtmsn: 1, mtLength: 6, mtQueued: 8 } });
});

test('+SBDIX: every kind of bad line is an error naming what is wrong, never a guess', () => {
  const bad: [string, RegExp][] = [
    ['', /expected a \+SBDIX line/],
    ['+SBDIXA: 0, 1, 0, 0, 0, 0', /expected a \+SBDIX line/],
    ['+SBDIX: 0, 1, 0, 0, 0', /6 fields, got 5/],
    ['+SBDIX: 0, 1, 0, 0, 0, 0, 0', /6 fields, got 7/],
    ['+SBDIX: x, 1, 0, 0, 0, 0', /field 1 \(moStatus\)/],
    ['+SBDIX: 0, 65536, 0, 0, 0, 0', /field 2 \(momsn\) must be 0 to 65535/],
    ['+SBDIX: 0, 1, 3, 0, 0, 0', /field 3 \(mtStatus\) must be 0 to 2/],
    ['+SBDIX: 0, 1, 1, -1, 0, 0', /field 4 \(mtmsn\)/],
    ['+SBDIX: 0, 1, 1, 1, 5000, 0', /field 5 \(mtLength\)/],
    ['+SBDIX: 0, 1, 1, 1, 5, ', /field 6 \(mtQueued\)/],
  ];
  for (const [line, error] of bad) {
    const r = parseSbdix(line);
    assert.not.ok(r.ok, line);
    if (!r.ok) assert.match(r.error, error, line);
  }
});

// ---- MO status table (3.3) ----

test('MO status: 0-4 sent, everything else failed, with the reference\'s meaning', () => {
  for (const code of [0, 1, 2, 3, 4]) assert.is(moStatus(code).outcome, 'sent', `code ${code}`);
  for (const code of [5, 8, 10, 13, 18, 19, 20, 31, 32, 35, 36, 255]) assert.is(moStatus(code).outcome, 'failed', `code ${code}`);
  assert.is(moStatus(32).meaning, 'no network service');
  assert.is(moStatus(18).meaning, 'the RF connection was lost');
  assert.is(moStatus(6).meaning, 'failed (reserved status)');
  assert.is(moStatus(3).meaning, 'sent (reserved status)');
  assert.ok(holdsForMinutes(32) && holdsForMinutes(36));
  assert.not.ok(holdsForMinutes(18));
});

// ---- signal (3.5) ----

test('+CSQ / +CSQF: bars 0-5; anything else is an error', () => {
  assert.equal(parseSignal('+CSQ:5'), { ok: true, value: 5 });
  assert.equal(parseSignal('+CSQF:0'), { ok: true, value: 0 });
  assert.equal(parseSignal('+CSQF: 3'), { ok: true, value: 3 });
  for (const bad of ['+CSQ:6', '+CSQ:-1', '+CSQ:', '+CSQ:2,99', '+CREG: 0,1', 'OK', '']) assert.not.ok(parseSignal(bad).ok, bad);
});

// ---- credits (3.6) ----

test('credits: one per 50 bytes or part of it; a mailbox check costs one', () => {
  const cases: [number, number][] = [[0, 1], [1, 1], [50, 1], [51, 2], [60, 2], [100, 2], [101, 3], [340, 7]];
  for (const [bytes, credits] of cases) assert.is(sessionCredits(bytes), credits, `${bytes} bytes`);
});

// ---- RockBLOCK addressing (3.6) ----

test('RockBLOCK prefix: RB and 7 digits, zero-padded; anything else is no RockBLOCK address', () => {
  assert.is(toHex(rockblockPrefix('RB1234')!), toHex(ascii('RB0001234')));
  assert.is(toHex(rockblockPrefix('RB0012345')!), '52 42 30 30 31 32 33 34 35');
  for (const bad of ['gateway', 'RB', 'RB12345678', 'rb1234', 'RB12a4', '']) assert.is(rockblockPrefix(bad), null, bad);
  const split = splitRockblockSender(ascii('RB0001234Hello'))!;
  assert.is(split.from, 'RB0001234');
  assert.is(toHex(split.body), toHex(ascii('Hello')));
  assert.is(splitRockblockSender(ascii('RB000123')), null, 'too short');
  assert.is(splitRockblockSender(ascii('RBx001234Hi')), null, 'not digits');
});

// ---- a whole exchange through the AT decoder, cut at every byte ----

// What a modem with echo off sends for: AT+SBDWB=5 (READY, status 0, OK), AT+SBDIX (a session
// that received a 5-byte MT message), AT+SBDRB ("hello" as length, bytes, checksum), a ring
// alert. Written from iridium-sbd.md 3.2-3.5 and the 9603 capture noted there.
const EXCHANGE = [
  { command: 'AT+SBDWB=5', binary: false, wire: 'READY\r\n\r\n0\r\n\r\nOK\r\n' },
  { command: 'AT+SBDIX', binary: false, wire: '\r\n+SBDIX: 0, 7, 1, 3, 5, 1\r\n\r\nOK\r\n' },
  { command: 'AT+SBDRB', binary: true, wire: '\x00\x05hello\x02\x14\r\nOK\r\n' },
  { command: null, binary: false, wire: '\r\nSBDRING\r\n' },
];

function feed(cut: number): AtEvent[] {
  const d = new AtDecoder();
  const events: AtEvent[] = [];
  for (const step of EXCHANGE) {
    if (step.command) d.expect({ command: step.command, binary: step.binary, prompt: step.command.startsWith('AT+SBDWB') });
    const bytes = ascii(step.wire);
    const at = Math.min(cut, bytes.length);
    events.push(...d.push(bytes.subarray(0, at)), ...d.push(bytes.subarray(at)));
  }
  return events;
}

test('chunking: the SBD exchange split at every offset gives the same events, read by our parsers', () => {
  const whole = feed(Number.MAX_SAFE_INTEGER);
  const lines = whole.filter((e) => e.type === 'info').map((e) => (e as { line: string }).line);
  assert.equal(lines, ['READY', '0', '+SBDIX: 0, 7, 1, 3, 5, 1']);
  assert.equal(parseSbdix(lines[2]), { ok: true, value: { moStatus: 0, momsn: 7, mtStatus: 1, mtmsn: 3, mtLength: 5, mtQueued: 1 } });
  const binary = whole.find((e) => e.type === 'binary') as Extract<AtEvent, { type: 'binary' }>;
  assert.is(toHex(binary.payload), toHex(ascii('hello')));
  assert.ok(binary.checksumOk);
  assert.ok(whole.some((e) => e.type === 'urc' && e.name === 'SBDRING'));
  for (let cut = 0; cut < 40; cut++) assert.equal(feed(cut), whole, `cut at ${cut}`);
});

// ---- fuzz ----

// ---- -MSSTM: the network's time (3.8) ----
// Counts worked out by hand from the era epochs in iridium-sbd.md 3.8:
// 2026-11-28T12:00:02Z is 56,310,345 s after ERA3's epoch 2025-02-14T18:14:17Z, which is
// 625,670,500 ticks of 90 ms = 0x254AF964.

test('-MSSTM: 1 to 8 hex digits are the tick count; "no network service" is no time; the rest is an error', () => {
  assert.equal(parseMsstm('-MSSTM: 254af964'), { ok: true, value: 625_670_500 });
  assert.equal(parseMsstm('-MSSTM:254AF964'), { ok: true, value: 625_670_500 });
  // RockBLOCK's reference: "formatted as an ASCII hexadecimal number without leading zeroes".
  assert.equal(parseMsstm('-MSSTM: fffffff'), { ok: true, value: 0x0fff_ffff });
  assert.equal(parseMsstm('-MSSTM: 0'), { ok: true, value: 0 });
  assert.equal(parseMsstm('-MSSTM: no network service'), { ok: true, value: null });
  for (const bad of ['-MSSTM: 1ffffffff', '-MSSTM: ', '-MSSTM: 12 34', '-MSSTM: -1', '-MSSTM: 0x10', '+CSQ:5', '', '-MSSTM: no network']) {
    const r = parseMsstm(bad);
    assert.not.ok(r.ok, bad);
  }
});

test('-MSSTM time: decoded in ERA3 from its epoch, 90 ms a tick', () => {
  assert.equal(msstmTime(625_670_500), { ok: true, value: { ms: Date.parse('2026-11-28T12:00:02.000Z'), era: 'ERA3' } });
  // The last count ERA3 has: 0xFFFFFFFF x 90 ms = 386,547,056.55 s after its epoch.
  assert.equal(msstmTime(0xffff_ffff), { ok: true, value: { ms: Date.parse('2037-05-16T16:25:13.550Z'), era: 'ERA3' } });
  // Ground Control's worked example (hex d1c6dd38) is an ERA2 count: with ERA2 as the newest
  // era it is 3,519,470,904 x 90 ms = 316,752,381.36 s after 2014-05-11T14:23:55Z.
  assert.equal(msstmTime(0xd1c6_dd38, IRIDIUM_ERAS.slice(0, 2)), { ok: true, value: { ms: Date.parse('2024-05-24T17:10:16.360Z'), era: 'ERA2' } });
});

test('-MSSTM time: a count that would fall before ERA3 was broadcast is refused, never placed in an older era', () => {
  // 0x0FFFFFFF ticks after ERA3's epoch is 2025-11-21T09:07:27.950Z, before the re-epoch of
  // 2026-01-14: an ERA2 modem that never re-synced, or an era this table does not know.
  const r = msstmTime(0x0fff_ffff);
  assert.not.ok(r.ok);
  if (!r.ok) assert.match(r.error, /2025-11-21T09:07:27\.950Z in ERA3, before ERA3 began/);
  assert.not.ok(msstmTime(0).ok);
  assert.not.ok(msstmTime(-1).ok);
  assert.not.ok(msstmTime(2 ** 32).ok);
  assert.not.ok(msstmTime(1.5).ok);
});

function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('fuzz: 200,000 random and mutated +SBDIX / +CSQ lines never throw and never give a value out of range', () => {
  const random = rng(0x5bd1);
  const seeds = ['+SBDIX: 0, 12, 1, 5, 5, 0', '+SBDIX:32,0,2,0,0,0', '+CSQ:5', '+CSQF:0', '+SBDIX: 1, 65535, 1, 65535, 270, 3'];
  const alphabet = '+SBDIXCQF:, 0123456789-"\r\x00\xff';
  for (let i = 0; i < 200_000; i++) {
    let line = seeds[Math.floor(random() * seeds.length)];
    const edits = 1 + Math.floor(random() * 4);
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(random() * (line.length + 1));
      const c = alphabet[Math.floor(random() * alphabet.length)];
      line = random() < 0.5 ? line.slice(0, at) + c + line.slice(at) : line.slice(0, at) + line.slice(at + 1);
    }
    const s = parseSbdix(line);
    if (s.ok) {
      const v = s.value;
      assert.ok(v.momsn <= 65535 && v.mtmsn <= 65535 && v.mtStatus <= 2 && v.mtLength <= 1960 && v.moStatus >= 0, line);
    }
    const q = parseSignal(line);
    if (q.ok) assert.ok(q.value >= 0 && q.value <= 5, line);
    const r = splitRockblockSender(ascii(line));
    if (r) assert.match(r.from, /^RB[0-9]{7}$/);
  }
});

test('fuzz: 200,000 random and mutated -MSSTM lines never throw; a count is 32 bits and its time lies in ERA3', () => {
  const random = rng(0x7157);
  const seeds = ['-MSSTM: 254af964', '-MSSTM: no network service', '-MSSTM: ffffffff', '-MSSTM:0', '-MSSTM: 0fffffff'];
  const alphabet = '-MSTmst: 0123456789abcdefABCDEFxnoetrkvic\r\x00\xff';
  const first = IRIDIUM_ERAS[2].fromMs;
  const last = Date.parse('2037-05-16T16:25:13.550Z');
  let times = 0;
  for (let i = 0; i < 200_000; i++) {
    let line = seeds[Math.floor(random() * seeds.length)];
    const edits = Math.floor(random() * 4);
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(random() * (line.length + 1));
      const c = alphabet[Math.floor(random() * alphabet.length)];
      line = random() < 0.5 ? line.slice(0, at) + c + line.slice(at) : line.slice(0, at) + line.slice(at + 1);
    }
    const p = parseMsstm(line);
    if (!p.ok || p.value === null) continue;
    assert.ok(Number.isInteger(p.value) && p.value >= 0 && p.value <= 0xffff_ffff, line);
    const t = msstmTime(p.value);
    if (t.ok) {
      times++;
      assert.ok(t.value.ms >= first && t.value.ms <= last, `${line} -> ${new Date(t.value.ms).toISOString()}`);
    }
  }
  assert.ok(times > 10_000, `only ${times} times decoded`);
});

test.run();
