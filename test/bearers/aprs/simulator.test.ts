import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { aprsSimulator } from '../../../src/bearers/aprs/simulator/cli.ts';
import { AprsChannel } from '../../../src/bearers/aprs/simulator/channel.ts';
import { direwolfDecode } from './direwolf.ts';
import { encodeUi, parseAddress, parseTnc2 } from '../../../src/bearers/aprs/codec/ax25.ts';
import { encodeFrame } from '../../../src/bearers/shared/codec/kiss.ts';
import { harness, stopAll, textFrame, until } from './helpers.ts';

// `fieldbridge sim aprs`: a KISS TNC over TCP on a simulated channel with stations; the bridge's
// bearer connects to it as to Dire Wolf. A fill-in digipeater repeats with its call marked used,
// and Dire Wolf reads the repeated frame's has-been-repeated bit.

test('fieldbridge sim aprs: the bridge connects over TCP, a message to an echo station is delivered and its echo comes back', async () => {
  const abort = new AbortController();
  const lines: string[] = [];
  let device = '';
  const running = aprsSimulator.run({ tcp: ['127.0.0.1:0'], station: ['W1AW-7,echo'] }, { signal: abort.signal, write: (l) => lines.push(l), onReady: (d) => (device = d[0]) });
  await until('listening', () => device !== '');
  const h = await harness({ callsign: 'N0CALL-10' }, { tnc: false, device });
  await until('online', () => h.bearer.phase === 'online');
  const r = await h.bearer.send(textFrame('W1AW-7', 'ping'));
  assert.ok(r.ok, JSON.stringify(r));
  await until('the echo', () => h.heard.some((f) => f.text === 'echo: ping'));
  assert.ok(lines.some((l) => l.startsWith('air: N0CALL-10>APZFBR,WIDE1-1,WIDE2-1::W1AW-7   :ping{1')), lines.join('\n'));
  await h.stop();
  abort.abort();
  assert.is(await running, 0);
});

test('fieldbridge sim aprs: a station that is not a callsign is a usage error', async () => {
  const lines: string[] = [];
  assert.is(await aprsSimulator.run({ tcp: ['127.0.0.1:0'], station: ['not a call'] }, { write: (l) => lines.push(l) }), 2);
  assert.match(lines.join('\n'), /is not a callsign/);
});

test('a fill-in digipeater repeats WIDE1-1 with its call marked used; Dire Wolf reads the H bit', async () => {
  const channel = new AprsChannel();
  channel.addStation({ callsign: 'DIGI1', digipeater: true });
  channel.say('W1AW-7', '>hello', ['WIDE1-1', 'WIDE2-1']);
  await until('repeated', () => channel.air.length === 2);
  assert.is(channel.air[1], 'W1AW-7>APZSIM,DIGI1*,WIDE2-1:>hello');
  const p = parseTnc2(channel.air[1])!;
  const frame = encodeUi({ destination: parseAddress(p.destination)!, source: parseAddress(p.source)!, path: p.path.map((a) => parseAddress(a)!), info: new TextEncoder().encode(p.info) });
  assert.match(direwolfDecode(encodeFrame(0, frame)), /digi 1  DIGI1   0   h=1/);
});

test.after.each(stopAll);

test.run();
