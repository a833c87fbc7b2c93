import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeFrame } from '../../../src/bearers/shared/codec/kiss.ts';
import { encodeUi, parseAddress, parseTnc2 } from '../../../src/bearers/aprs/codec/ax25.ts';
import { encodeAck } from '../../../src/bearers/aprs/codec/message.ts';
import { direwolfDecode, direwolfLine } from './direwolf.ts';
import { harness, stopAll, textFrame, until } from './helpers.ts';

// The aprs bearer over a real TCP KISS link to a simulated channel (simulator/channel.ts):
// messages delivered on the addressee's ack, retried on the decaying schedule when the ack is
// lost, dead on rej; messages to us acknowledged every time and taken once; nothing sent
// without a callsign; every frame the bridge put on the air read back by Dire Wolf.

const CALL = 'N0CALL-10';

/** The frame on the air as the TNC passed it, through Dire Wolf's decoder. */
function direwolfReads(line: string): string {
  const p = parseTnc2(line)!;
  const frame = encodeUi({ destination: parseAddress(p.destination)!, source: parseAddress(p.source)!, path: p.path.map((a) => parseAddress(a)!), info: new TextEncoder().encode(p.info) });
  return direwolfDecode(encodeFrame(0, frame));
}

test('a message to a station is delivered on its ack; Dire Wolf reads the frame as that message', async () => {
  const h = await harness({ callsign: CALL });
  const station = h.channel.addStation({ callsign: 'W1AW-7' });
  await until('online', () => h.bearer.phase === 'online');
  const result = await h.bearer.send(textFrame('w1aw-7', 'Meet at the hut at 5'));
  assert.ok(result.ok, JSON.stringify(result));
  assert.equal(station.inbox, [{ from: CALL, text: 'Meet at the hut at 5', id: '1' }]);
  const line = h.channel.air[0];
  assert.is(line, `${CALL}>APZFBR,WIDE1-1,WIDE2-1::W1AW-7   :Meet at the hut at 5{1`);
  const dw = direwolfReads(line);
  assert.is(direwolfLine(dw), line);
  assert.match(dw, /APRS Message 1 for "W1AW-7"/);
  assert.ok(h.channel.air.some((l) => l.includes(':ack1')), 'the station acknowledged');
  assert.is(h.bearer.stats().acks_received, 1);
  await h.stop();
});

test('a lost ack: the message goes again after 30 s and is delivered on the second ack', async () => {
  const h = await harness({ callsign: CALL });
  const station = h.channel.addStation({ callsign: 'W1AW-7' });
  station.loseAcks = 1;
  await until('online', () => h.bearer.phase === 'online');
  const sending = h.bearer.send(textFrame('W1AW-7', 'second try'));
  await until('first transmission', () => station.inbox.length === 1);
  await new Promise((r) => setTimeout(r, 50));
  assert.is(h.channel.air.filter((l) => l.includes(':ack')).length, 0, 'the first ack was lost');
  h.clock.advance(29_000);
  await new Promise((r) => setTimeout(r, 50));
  assert.is(h.channel.air.filter((l) => l.includes('second try')).length, 1, 'not before 30 s');
  h.clock.advance(1_000);
  const result = await sending;
  assert.ok(result.ok);
  if (result.ok) assert.is(result.meta?.transmissions, 2);
  assert.is(station.inbox.length, 1, 'the station took the message once');
  await h.stop();
});

test('rej fails the delivery at once; no ack in the whole schedule fails it after six transmissions', async () => {
  const h = await harness({ callsign: CALL });
  h.channel.addStation({ callsign: 'W1AW-7', acks: false });
  await until('online', () => h.bearer.phase === 'online');
  const rejected = h.bearer.send(textFrame('W1AW-7', 'cannot take it'));
  await until('sent', () => h.channel.air.length === 1);
  h.channel.say('W1AW-7', encodeAck('rej', CALL, '1'));
  const r = await rejected;
  assert.is(r.ok, false);
  if (!r.ok) {
    assert.is(r.retryable, false);
    assert.match(r.error, /ERR_APRS_REJECTED/);
  }
  const silent = h.bearer.send(textFrame('W1AW-7', 'anyone there'));
  await until('sent', () => h.channel.air.filter((l) => l.includes('anyone there')).length === 1);
  for (const wait of [30, 60, 120, 240, 480, 480]) {
    await new Promise((r) => setTimeout(r, 20));
    h.clock.advance(wait * 1000);
  }
  const t = await silent;
  assert.is(t.ok, false);
  if (!t.ok) assert.match(t.error, /ERR_APRS_NO_ACK: W1AW-7 did not acknowledge message 2 after 6 transmissions/);
  assert.is(h.channel.air.filter((l) => l.includes('anyone there')).length, 6);
  await h.stop();
});

test('a message to us is acknowledged on every copy and taken once (dedupe key sender+id); positions become aprs nodes', async () => {
  const h = await harness({ callsign: CALL });
  h.channel.addStation({ callsign: 'W1AW-7' });
  await until('online', () => h.bearer.phase === 'online');
  h.channel.say('W1AW-7', ':N0CALL-10:hello bridge{S9');
  h.channel.say('W1AW-7', ':N0CALL-10:hello bridge{S9');
  await until('two acks', () => h.channel.air.filter((l) => l.endsWith(':W1AW-7   :ackS9')).length === 2);
  assert.is(h.heard.length, 2);
  assert.is(h.heard[0].text, 'hello bridge');
  assert.is(h.heard[0].from, 'W1AW-7');
  assert.is(h.heard[0].dedupeKey, 'aprs:W1AW-7:S9');
  assert.is(h.heard[1].dedupeKey, h.heard[0].dedupeKey, 'the bridge stores it once by this key');
  h.channel.say('W1AW-7', '!4903.50N/07201.75W-');
  h.channel.say('K1ABC', '=/5L!!<*e7>7P[');
  await until('nodes', () => h.nodes.length === 2);
  assert.is(h.nodes[0].network, 'aprs');
  assert.is(h.nodes[0].id, 'W1AW-7');
  assert.ok(Math.abs(h.nodes[0].position!.latitude - 49.058333) < 1e-4);
  await h.stop();
});

test('a message the bridge could not store is not acknowledged, so its sender tries again', async () => {
  const h = await harness({ callsign: CALL }, { storeFails: true });
  await until('online', () => h.bearer.phase === 'online');
  h.channel.say('W1AW-7', ':N0CALL-10:store me{S3');
  await until('heard', () => h.heard.length === 1);
  await new Promise((r) => setTimeout(r, 100));
  assert.is(h.channel.air.filter((l) => l.includes(':ack')).length, 0);
  await h.stop();
});

test('without a callsign nothing is transmitted and the interface says why', async () => {
  const h = await harness({});
  h.channel.addStation({ callsign: 'W1AW-7' });
  await until('online', () => h.bearer.phase === 'online');
  const last = h.states.at(-1)!;
  assert.is(last.connected, true, 'it listens');
  assert.match(last.lastError ?? '', /ERR_APRS_NO_CALLSIGN: no callsign is set: the interface listens and transmits nothing/);
  const r = await h.bearer.send(textFrame('W1AW-7', 'hello'));
  assert.is(r.ok, false);
  if (!r.ok) assert.match(r.error, /ERR_APRS_NO_CALLSIGN/);
  h.channel.say('W1AW-7', ':N0CALL-10:hello{1');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(h.channel.air, ['W1AW-7>APZSIM,WIDE1-1::N0CALL-10:hello{1'], 'not even an ack went out');
  await h.stop();
});

test('a message longer than 67 characters fails for good (a split transform cuts it); other limits', async () => {
  const h = await harness({ callsign: CALL });
  await until('online', () => h.bearer.phase === 'online');
  const r = await h.bearer.send(textFrame('W1AW-7', 'x'.repeat(68)));
  assert.is(r.ok, false);
  if (!r.ok) {
    assert.is(r.retryable, false);
    assert.match(r.error, /ERR_APRS_TOO_LONG: 68 characters is more than the 67 one APRS message carries \(add a split transform/);
  }
  const bad = await h.bearer.send(textFrame('not a call', 'hi'));
  assert.is(bad.ok, false);
  assert.is(h.channel.air.length, 0);
  await h.stop();
});

test('a position from another bearer becomes an APRS object (or the station\'s own position); Dire Wolf reads it', async () => {
  const h = await harness({ callsign: CALL });
  await until('online', () => h.bearer.phase === 'online');
  const payload = new TextEncoder().encode(JSON.stringify({ latitude: 46.5, longitude: 7.25, altitude_m: 1000 }));
  const r = await h.bearer.send({ ...textFrame('CAMP3', ''), kind: 'position', text: null, payload });
  assert.ok(r.ok);
  const own = await h.bearer.send({ ...textFrame(CALL, ''), kind: 'position', text: null, payload });
  assert.ok(own.ok);
  await until('two frames', () => h.channel.air.length === 2);
  const obj = direwolfReads(h.channel.air[0]);
  assert.match(obj, /Object, "CAMP3"/);
  assert.match(obj, /N 46 30\.0000, E 007 15\.0000, alt 3281 ft/);
  const pos = direwolfReads(h.channel.air[1]);
  assert.match(pos, /Position, House/);
  assert.match(pos, /N 46 30\.0000, E 007 15\.0000, alt 3281 ft/);
  await h.stop();
});

test('the beacon: off by default; when set, the station\'s position 15 s after start and every interval_min, read by Dire Wolf', async () => {
  const off = await harness({ callsign: CALL });
  await until('online', () => off.bearer.phase === 'online');
  off.clock.advance(3_600_000);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(off.channel.air, []);
  await off.stop();
  const h = await harness({ callsign: CALL, beacon: { latitude: 47.3769, longitude: 8.5417, symbol: '/-', comment: 'fieldbridge', interval_min: 10 } });
  await until('online', () => h.bearer.phase === 'online');
  h.clock.advance(15_000);
  await until('first beacon', () => h.channel.air.length === 1);
  assert.is(h.channel.air[0], `${CALL}>APZFBR,WIDE1-1,WIDE2-1:=4722.61N/00832.50E-fieldbridge`);
  assert.match(direwolfReads(h.channel.air[0]), /N 47 22\.6100, E 008 32\.5000/);
  h.clock.advance(9 * 60_000);
  await new Promise((r) => setTimeout(r, 50));
  assert.is(h.channel.air.length, 1, 'not before ten minutes');
  h.clock.advance(60_000);
  await until('second beacon', () => h.channel.air.length === 2);
  await h.stop();
});

test('airtime: frames keep rf_min_gap_s apart, acknowledgements first', async () => {
  const h = await harness({ callsign: CALL, rf_min_gap_s: 10 });
  h.channel.addStation({ callsign: 'W1AW-7', acks: false });
  await until('online', () => h.bearer.phase === 'online');
  void h.bearer.send(textFrame('W1AW-7', 'one'));
  void h.bearer.send(textFrame('W1AW-7', 'two'));
  await until('first', () => h.channel.air.length === 1);
  h.channel.say('W1AW-7', ':N0CALL-10:urgent{S1');
  await new Promise((r) => setTimeout(r, 100));
  assert.is(h.channel.air.length, 2, 'the second waits for the gap');
  h.clock.advance(10_000);
  await until('ack', () => h.channel.air.length === 3);
  assert.match(h.channel.air[2], /:ackS1$/, 'the ack went before "two"');
  h.clock.advance(10_000);
  await until('two', () => h.channel.air.length === 4);
  assert.match(h.channel.air[3], /:two\{2$/);
  await h.stop();
});

test.after.each(stopAll);

test.run();
