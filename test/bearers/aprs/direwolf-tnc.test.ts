import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { harness, stopAll, textFrame, until } from './helpers.ts';

// The bridge on Dire Wolf's own KISS TCP TNC (Debian's direwolf 1.6, no sound card: `ADEVICE
// stdin null`, receive audio on stdin, transmit audio discarded). Frames the bridge sends are
// read by Dire Wolf, which prints each one it transmits; frames Dire Wolf's gen_packets makes
// (AFSK 1200 audio) are demodulated by Dire Wolf and reach the bridge through the KISS port.
// With no audio device Dire Wolf does not hand our transmissions to its other KISS clients, so
// kissutil cannot receive them here (docs/aprs.md, "Try it without hardware").

const dir = mkdtempSync(join(tmpdir(), 'fb-direwolf-'));

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function direwolf(): Promise<{ proc: ChildProcessWithoutNullStreams; port: number; out: () => string }> {
  const port = await freePort();
  const conf = join(dir, `dw-${port}.conf`);
  writeFileSync(conf, `ADEVICE stdin null\nCHANNEL 0\nMODEM 1200\nAGWPORT 0\nKISSPORT ${port}\n`);
  const proc = spawn('stdbuf', ['-oL', 'direwolf', '-c', conf, '-t', '0'], { stdio: 'pipe' });
  let out = '';
  proc.stdout.on('data', (b: Buffer) => (out += b.toString('latin1')));
  proc.stderr.on('data', (b: Buffer) => (out += b.toString('latin1')));
  await until('Dire Wolf listening', () => out.includes(`port ${port}`), 10_000);
  return { proc, port, out: () => out };
}

let running: ChildProcessWithoutNullStreams | null = null;

test('Dire Wolf\'s KISS TCP TNC transmits what the bridge sends, exactly, and hands the bridge what it demodulates from gen_packets audio', async () => {
  const dw = await direwolf();
  running = dw.proc;
  const h = await harness({ callsign: 'N0CALL-10' }, { tnc: false, device: `tcp://127.0.0.1:${dw.port}` });
  await until('online', () => h.bearer.phase === 'online', 10_000);
  await until('Dire Wolf attached the bridge', () => dw.out().includes('Attached to KISS TCP client'), 10_000);

  // Out: an object from a position, and a message (whose ack will not come: no station).
  const payload = new TextEncoder().encode(JSON.stringify({ latitude: 46.5, longitude: 7.25 }));
  const r = await h.bearer.send({ ...textFrame('CAMP3', ''), kind: 'position', text: null, payload });
  assert.ok(r.ok);
  void h.bearer.send(textFrame('W1AW-7', 'via dire wolf'));
  await until('Dire Wolf transmitted both', () => dw.out().includes('via dire wolf{1'), 10_000);
  const out = dw.out();
  assert.match(out, /N0CALL-10>APZFBR,WIDE1-1,WIDE2-1:;CAMP3    \*\d{6}z4630\.00N\/00715\.00E-/);
  assert.match(out, /N0CALL-10>APZFBR,WIDE1-1,WIDE2-1::W1AW-7   :via dire wolf\{1/);

  // In: gen_packets makes the audio of a message to us and a position; Dire Wolf demodulates
  // it and hands the frames to the bridge over KISS.
  const packets = join(dir, 'packets.txt');
  writeFileSync(packets, 'W1AW-7>APRS,WIDE1-1::N0CALL-10:hello from dire wolf{7\nW1AW-7>APRS,WIDE2-1:!4903.50N/07201.75W-\n');
  const wav = join(dir, 'rx.wav');
  const gen = spawnSync('gen_packets', ['-o', wav, packets], { encoding: 'latin1' });
  assert.is(gen.status, 0, gen.stderr);
  dw.proc.stdin.write(readFileSync(wav));
  // Silence after the packets, so the demodulator finishes the last frame.
  dw.proc.stdin.write(new Uint8Array(44_100 * 2));
  await until('the bridge heard the message', () => h.heard.length === 1, 10_000);
  assert.is(h.heard[0].from, 'W1AW-7');
  assert.is(h.heard[0].text, 'hello from dire wolf');
  await until('the position', () => h.nodes.length === 1, 10_000);
  assert.ok(Math.abs(h.nodes[0].position!.latitude - 49.058333) < 1e-4);
  // The bridge's ack went out through Dire Wolf.
  await until('ack transmitted', () => /N0CALL-10>APZFBR,WIDE1-1,WIDE2-1::W1AW-7   :ack7/.test(dw.out()), 10_000);
  await h.stop();
});

test.after.each(async () => {
  await stopAll();
  running?.kill();
  running = null;
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

test.run();
