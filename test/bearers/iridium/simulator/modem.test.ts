import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { IridiumModem } from '../../../../src/bearers/iridium/simulator/modem.ts';
import { hex, Host, rig } from './helpers.ts';

// The modem byte by byte (docs/protocols/iridium-sbd.md): what the host sends, what comes
// back, exactly. Fixtures are built by hand from the docs, never by our own encoder.

const OK = '\r\nOK\r\n';
const ERROR = '\r\nERROR\r\n';

test('echo is on at power-up and echoes the line as received; LF after CR is dropped; ATE0/ATE1', () => {
  const { host: h } = rig();
  assert.is(h.at('AT'), 'AT\r' + OK);
  assert.is(h.send('AT\r\n'), 'AT\r' + OK, 'the LF after CR is neither echoed nor a command');
  assert.is(h.at('at'), 'at\r' + OK, 'case-insensitive AT');
  assert.is(h.at('ATE0'), 'ATE0\r' + OK);
  assert.is(h.at('AT'), OK);
  assert.is(h.send('AT\n'), '', 'LF does not end a command (iridium-sbd.md 3.1)');
  assert.is(h.send('\r'), ERROR, '"AT<LF>" is no command');
  assert.is(h.send('\r'), '', 'an empty line is ignored');
  assert.is(h.send('noise\r'), '', 'a line without AT too (V.250 5.2.1)');
  assert.is(h.at('ATE1'), OK, 'echo starts after the command');
  assert.is(h.at('ATE'), 'ATE\r' + OK, 'no digit = 0');
  assert.is(h.at('AT'), OK);
  assert.is(h.at('ATE2'), ERROR);
  h.at('ATE1');
  assert.is(h.send('A'), 'A');
  assert.is(h.send('T+CG'), 'T+CG');
  assert.is(h.send('MI\r'), 'MI\r\r\nIridium\r\n' + OK, 'a command split across chunks');
});

test('unknown commands and over-long lines answer ERROR and are counted', () => {
  const { host: h } = rig();
  h.at('ATE0');
  assert.is(h.at('AT+NOPE'), ERROR);
  assert.is(h.at('AT+SBDI'), ERROR);
  assert.is(h.at('AT+CGMI;+CGMM'), ERROR, 'one command per line');
  assert.is(h.at('ATX'), ERROR);
  assert.is(h.modem.counters.unknownCommands, 4);
  assert.is(h.at('AT+SBDWT=' + 'x'.repeat(600)), ERROR);
  assert.is(h.modem.counters.longLines, 1);
  assert.is(h.at('AT'), OK);
});

test('identity: AT+CGSN (configurable IMEI), +CGMI, +CGMM, +CGMR', () => {
  const { gateway, clock } = rig({ modems: 0 });
  const h = new Host(new IridiumModem({ clock, gateway, imei: '300434063123450', serial: '0012345' }));
  h.at('ATE0');
  assert.is(h.at('AT+CGSN'), '\r\n300434063123450\r\n' + OK);
  assert.is(h.at('AT+CGMI'), '\r\nIridium\r\n' + OK);
  assert.is(h.at('AT+CGMM'), '\r\nIRIDIUM 9600 Family SBD Transceiver\r\n' + OK);
  assert.ok(h.at('AT+CGMR').startsWith('\r\nCall Processor Version: TA16005\r\n\r\nModem DSP Version:'));
  assert.is(h.at('AT+CGSN?'), ERROR);
  assert.throws(() => new IridiumModem({ clock, gateway, imei: '300434063123450', serial: '0012346' }), /already/);
  assert.throws(() => new IridiumModem({ clock, gateway, imei: '12345' }), /15 digits/);
  const made = rig({ modems: 2 }).hosts.map((x) => x.modem);
  assert.match(made[0].imei, /^\d{15}$/);
  assert.is.not(made[0].imei, made[1].imei);
  assert.equal([made[0].serial, made[1].serial], ['0010001', '0010002']);
});

test('settings: &K0/&K3, &D0-&D3, SBDMTA; ATZ and AT&F go back to echo on, MTA off', () => {
  const { host: h } = rig();
  h.at('ATE0');
  assert.is(h.at('AT&K0'), OK);
  assert.is(h.modem.settings.flowControl, 0);
  assert.is(h.at('AT&K3'), OK);
  assert.is(h.at('AT&K1'), ERROR);
  for (const d of [0, 1, 2, 3]) assert.is(h.at(`AT&D${d}`), OK);
  assert.is(h.at('AT&D4'), ERROR);
  assert.is(h.at('AT+SBDMTA?'), '\r\n+SBDMTA:0\r\n' + OK);
  assert.is(h.at('AT+SBDMTA=1'), OK);
  assert.is(h.at('AT+SBDMTA?'), '\r\n+SBDMTA:1\r\n' + OK);
  assert.is(h.at('AT+SBDMTA=2'), ERROR);
  assert.is(h.at('AT+SBDMTA'), ERROR);
  assert.is(h.at('AT+SBDMTA=?'), '\r\n+SBDMTA:(0-1)\r\n' + OK);
  h.at('AT&K0');
  assert.is(h.at('ATZ'), OK);
  assert.is(h.at('AT+SBDMTA?'), 'AT+SBDMTA?\r\r\n+SBDMTA:0\r\n' + OK, 'echo on and MTA off again');
  assert.is(h.modem.settings.flowControl, 3);
  h.at('ATE0');
  h.at('AT+SBDMTA=1');
  assert.is(h.at('AT&F'), OK);
  assert.is(h.at('AT+SBDMTA?'), 'AT+SBDMTA?\r\r\n+SBDMTA:0\r\n' + OK);
});

test('signal: +CSQ after its delay, +CSQF at once; -MSSTM in 90 ms ticks or "no network service"', () => {
  const { host: h, clock, gateway } = rig({ modem: { csqDelayMs: 2000 } });
  h.at('ATE0');
  assert.is(h.at('AT+CSQ'), '');
  assert.is(h.at('AT'), '', 'input waits for the reading');
  clock.advance(1999);
  assert.is(h.take(), '');
  clock.advance(1);
  assert.is(h.take(), '\r\n+CSQ:5\r\n' + OK + OK);
  gateway.bars = 2;
  assert.is(h.at('AT+CSQF'), '\r\n+CSQF:2\r\n' + OK);
  // FakeClock started at 2026-01-01T00:00:00Z and moved 2 s: 367407367000 ms after the era's
  // epoch 2014-05-11T14:23:55Z = 4082304077 ticks of 90 ms.
  assert.is(h.at('AT-MSSTM'), '\r\n-MSSTM: f353044d\r\n' + OK);
  gateway.bars = 0;
  assert.is(h.at('AT-MSSTM'), '\r\n-MSSTM: no network service\r\n' + OK);
  assert.throws(() => (gateway.bars = 6), RangeError);
});

test('-MSSTM after the 2026-01-14 re-epoch counts from ERA3\'s epoch, from the modem\'s own clock', () => {
  const { host: h } = rig({ modem: { clock: new FakeClock(Date.parse('2026-11-28T12:00:02.000Z')) } });
  h.at('ATE0');
  // 56,310,345 s after 2025-02-14T18:14:17Z = 625,670,500 ticks of 90 ms (iridium-sbd.md 3.8).
  assert.is(h.at('AT-MSSTM'), '\r\n-MSSTM: 254af964\r\n' + OK);
});

test('AT+SBDWT=<text> up to 120 bytes; AT+SBDD0/1/2 clear and answer 0; +SBDS/+SBDSX show the buffers', () => {
  const { host: h } = rig();
  h.at('ATE0');
  assert.is(h.at('AT+SBDSX'), '\r\n+SBDSX: 0, 0, 0, -1, 0, 0\r\n' + OK);
  assert.is(h.at('AT+SBDWT=Hello; World'), OK);
  assert.is(Buffer.from(h.modem.mo!).toString('latin1'), 'Hello; World', 'case and ; kept');
  assert.is(h.at('AT+SBDS'), '\r\n+SBDS: 1, 0, 0, -1\r\n' + OK);
  assert.is(h.at('AT+SBDWT=' + 'x'.repeat(121)), ERROR);
  assert.is(h.at('AT+SBDWT=' + 'y'.repeat(120)), OK);
  assert.is(h.at('AT+SBDWT'), 'READY\r\n', 'the READY form');
  assert.is(h.send('z'.repeat(340) + '\r\n'), '\r\n0\r\n' + OK, 'up to 340 bytes, then CR (an LF after it dropped)');
  assert.is(h.at('AT+SBDWT='), OK, 'an empty text: OK, the MO buffer kept (mikalhart/IridiumSBD#10)');
  assert.is(Buffer.from(h.modem.mo!).toString('latin1'), 'z'.repeat(340));
  assert.is(h.at('AT+SBDWT'), 'READY\r\n');
  assert.is(h.at('z'.repeat(341)), ERROR, 'more than 340 bytes');
  assert.is(h.at('AT+SBDD0'), '\r\n0\r\n' + OK);
  assert.is(h.modem.mo, null);
  assert.is(h.at('AT+SBDD1'), '\r\n0\r\n' + OK);
  assert.is(h.at('AT+SBDD2'), '\r\n0\r\n' + OK);
  assert.is(h.at('AT+SBDD3'), ERROR);
  assert.is(h.at('AT+SBDD'), ERROR);
  assert.is(h.modem.counters.writes, 3);
});

test('AT+SBDWB: the docs\' "hello" fixture (68 65 6C 6C 6F, checksum 02 14): READY, no echo of the bytes, 0 and OK', () => {
  const { host: h } = rig();
  assert.is(h.at('AT+SBDWB=5'), 'AT+SBDWB=5\rREADY\r\n');
  assert.is(h.send(hex('68 65 6C 6C 6F 02 14')), '\r\n0\r\n' + OK);
  assert.equal([...h.modem.mo!], [0x68, 0x65, 0x6c, 0x6c, 0x6f]);
  assert.is(h.at('AT+SBDS'), 'AT+SBDS\r\r\n+SBDS: 1, 0, 0, -1\r\n' + OK);
});

test('AT+SBDWB: payload bytes CR LF "OK" CR LF are payload; a command right behind the checksum is a command', () => {
  const { host: h } = rig();
  h.at('ATE0');
  assert.is(h.at('AT+SBDWB=6'), 'READY\r\n');
  // 0D+0A+4F+4B+0D+0A = 0x00C8
  assert.is(h.send(hex('0D 0A 4F 4B 0D 0A 00 C8') + 'AT\r'), '\r\n0\r\n' + OK + OK);
  assert.is(Buffer.from(h.modem.mo!).toString('latin1'), '\r\nOK\r\n');
});

test('AT+SBDWB: wrong checksum answers 2 and keeps the MO buffer; bad sizes answer 3 without READY', () => {
  const { host: h } = rig();
  h.at('ATE0');
  h.at('AT+SBDWT=kept');
  assert.is(h.at('AT+SBDWB=5'), 'READY\r\n');
  assert.is(h.send(hex('68 65 6C 6C 6F 02 15')), '\r\n2\r\n' + OK);
  assert.is(Buffer.from(h.modem.mo!).toString('latin1'), 'kept');
  assert.is(h.modem.counters.checksumErrors, 1);
  assert.is(h.at('AT+SBDWB=0'), '\r\n3\r\n' + OK);
  assert.is(h.at('AT+SBDWB=341'), '\r\n3\r\n' + OK);
  assert.is(h.at('AT+SBDWB=340'), 'READY\r\n');
  const big = 'z'.repeat(340);
  const sum = 0x7a * 340; // 41480 = 0xA208
  assert.is(sum, 0xa208);
  assert.is(h.send(big + hex('A2 08')), '\r\n0\r\n' + OK);
  assert.is(h.modem.mo!.length, 340);
  assert.is(h.at('AT+SBDWB'), ERROR);
  assert.is(h.at('AT+SBDWB=x'), ERROR);
});

test('AT+SBDWB: missing bytes time out after 60 s with 1 and no OK; then commands work', () => {
  const { host: h, clock } = rig();
  h.at('ATE0');
  h.at('AT+SBDWB=5');
  assert.is(h.send(hex('68 65 6C')), '');
  clock.advance(59_999);
  assert.is(h.take(), '');
  clock.advance(1);
  assert.is(h.take(), '\r\n1\r\n');
  assert.is(h.modem.mo, null);
  assert.is(h.modem.counters.writeTimeouts, 1);
  assert.is(h.at('AT'), OK);
  const quick = rig({ modem: { writeTimeoutMs: 100 } });
  assert.is(quick.host.at('AT+SBDWB=2'), 'AT+SBDWB=2\rREADY\r\n');
  quick.clock.advance(100);
  assert.is(quick.host.take(), '\r\n1\r\n', 'writeTimeoutMs');
});

test('AT+SBDWB one byte per chunk gives the same bytes', () => {
  const { host: h } = rig();
  let got = '';
  for (const ch of 'AT+SBDWB=5\r' + hex('68 65 6C 6C 6F 02 14') + 'AT\r') got += h.send(ch);
  assert.is(got, 'AT+SBDWB=5\rREADY\r\n\r\n0\r\n' + OK + 'AT\r' + OK);
});

test('AT+SBDRB: length, payload (CR LF "OK" inside), checksum, then OK; empty buffer = 00 00 00 00; +SBDRT', () => {
  const { host: h, gateway } = rig();
  assert.is(h.at('AT+SBDRB'), 'AT+SBDRB\r' + hex('00 00 00 00') + OK, 'binary right after the echoed line');
  h.at('ATE0');
  gateway.queueMt(h.modem.imei, Buffer.from('\r\nOK\r\nhi', 'latin1'));
  assert.is(h.at('AT+SBDIX'), '\r\n+SBDIX: 0, 0, 1, 1, 8, 0\r\n' + OK);
  // 200 + 0x68 + 0x69 = 409 = 0x0199
  assert.is(h.at('AT+SBDRB'), hex('00 08 0D 0A 4F 4B 0D 0A 68 69 01 99') + OK);
  assert.is(h.at('AT+SBDRB'), hex('00 08 0D 0A 4F 4B 0D 0A 68 69 01 99') + OK, 'reading does not clear');
  assert.is(h.at('AT+SBDRT'), '\r\n+SBDRT:\r\n\r\nOK\r\nhi\r\n' + OK);
  assert.is(h.modem.counters.mtRead, 4);
  h.modem.faults.corruptNextMtChecksum = true;
  assert.is(h.at('AT+SBDRB'), hex('00 08 0D 0A 4F 4B 0D 0A 68 69 FE 66') + OK, 'fault: checksum flipped');
  assert.is(h.at('AT+SBDRB'), hex('00 08 0D 0A 4F 4B 0D 0A 68 69 01 99') + OK, 'once');
  assert.is(h.at('AT+SBDD1'), '\r\n0\r\n' + OK);
  assert.is(h.at('AT+SBDRB'), hex('00 00 00 00') + OK);
  assert.is(h.at('AT+SBDRT'), '\r\n+SBDRT:\r\n\r\n' + OK);
});

test('fault: slow answers come after the delay; input meanwhile waits, then is echoed and answered', () => {
  const { host: h, clock } = rig({ modem: { faults: { answerDelayMs: 1000 } } });
  assert.is(h.at('AT'), 'AT\r', 'the echo is at once');
  assert.is(h.at('AT+CGMI'), '');
  clock.advance(1000);
  assert.is(h.take(), OK + 'AT+CGMI\r');
  clock.advance(1000);
  assert.is(h.take(), '\r\nIridium\r\n' + OK);
  assert.is(h.at('AT+SBDWB=5'), 'AT+SBDWB=5\rREADY\r\n', 'READY is not delayed');
  assert.is(h.send(hex('68 65 6C 6C 6F 02 14')), '');
  clock.advance(1000);
  assert.is(h.take(), '\r\n0\r\n' + OK);
});

test('fault: unresponsive neither echoes nor answers until cleared', () => {
  const { host: h } = rig();
  h.modem.faults.unresponsive = true;
  assert.is(h.at('AT'), '');
  assert.is(h.at('AT+SBDWB=5'), '');
  h.modem.faults.unresponsive = false;
  assert.is(h.at('AT'), 'AT\r' + OK, 'what came meanwhile was dropped');
});

test('fault: garbage is non-text bytes and a line that never ends; commands still work', () => {
  const { host: h } = rig();
  h.modem.sendGarbage(16);
  const g = h.take();
  assert.is(g.length, 16 + '\r\n+SBDI'.length);
  assert.ok(g.endsWith('\r\n+SBDI'));
  for (const c of g.slice(0, 16)) assert.ok(c.charCodeAt(0) >= 0x80 || c.charCodeAt(0) < 0x20, `text byte ${c.charCodeAt(0)}`);
  assert.ok(![...g.slice(0, 16)].some((c) => c === '\r' || c === '\n'));
  assert.is(h.at('AT'), 'AT\r' + OK);
});

test('fault: reset in the middle of AT+SBDWB abandons it silently; buffers and settings go', () => {
  const { host: h, clock } = rig();
  h.at('AT+SBDWT=lost');
  h.at('ATE0');
  h.at('AT+SBDMTA=1');
  h.at('AT+SBDWB=5');
  h.send(hex('68 65'));
  let resets = 0;
  h.modem.on('reset', () => resets++);
  h.modem.reset();
  clock.advance(120_000);
  assert.is(h.take(), '', 'no status 1, no OK');
  assert.is(h.modem.mo, null, 'the MO buffer is lost');
  assert.is(h.at('AT+SBDMTA?'), 'AT+SBDMTA?\r\r\n+SBDMTA:0\r\n' + OK, 'a command, echoed: not payload bytes');
  assert.is(resets, 1);
  assert.is(h.modem.counters.resets, 1);
});

// mulberry32: a seeded generator, so a failing run can be repeated exactly.
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('fuzz: 20,000 random and mutated command chunks never throw; afterwards the modem still answers AT', () => {
  const { host, clock } = rig();
  const random = rng(0x1d1a);
  const seeds = ['AT\r', 'AT+SBDWB=5\r', 'hello\x02\x14', 'AT+SBDIX\r', 'AT+SBDRB\r', 'AT+SBDWB=340\r', 'AT+SBDMTA=1\r', 'ATE0\r', 'AT+CSQ\r', 'AT&K0\r', 'AT+SBDD2\r'];
  for (let i = 0; i < 20_000; i++) {
    let chunk = seeds[Math.floor(random() * seeds.length)];
    if (random() < 0.5) {
      const at = Math.floor(random() * chunk.length);
      chunk = chunk.slice(0, at) + String.fromCharCode(Math.floor(random() * 256)) + chunk.slice(at + (random() < 0.5 ? 1 : 0));
    }
    if (random() < 0.01) chunk = 'A'.repeat(Math.floor(random() * 2000));
    host.send(chunk);
    if (random() < 0.05) clock.advance(Math.floor(random() * 70_000)); // lets SBDWB reads time out
  }
  clock.advance(120_000);
  host.take();
  // Whatever state the noise left (echo off, mid-line), a fresh line gets an answer.
  const answer = host.send('\rAT\r');
  assert.match(answer, /OK\r\n$/);
});

test.run();
