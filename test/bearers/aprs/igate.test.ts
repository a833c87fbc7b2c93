import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { VERSION } from '../../../src/lib/version.ts';
import { aprsIsPasscode } from '../../../src/bearers/aprs/settings.ts';
import { parseTnc2 } from '../../../src/bearers/aprs/codec/ax25.ts';
import { gateToRf, HeardList } from '../../../src/bearers/aprs/igate.ts';
import { AprsIsStandIn, SIM_SERVER_NAME } from '../../../src/bearers/aprs/simulator/aprs-is-server.ts';
import { harness, stopAll, textFrame, until } from './helpers.ts';

// APRS-IS against the stand-in over real TCP (login line, passcode, filter, read-only) and the
// iGate rules both ways: RF packets to APRS-IS with qAR; APRS-IS messages to RF only for
// stations heard directly in the last 30 minutes, never positions.

const CALL = 'N0CALL-10';
const PASS = String(aprsIsPasscode('N0CALL'));

const servers: AprsIsStandIn[] = [];
async function server(): Promise<{ s: AprsIsStandIn; at: string }> {
  const s = new AprsIsStandIn();
  servers.push(s);
  const port = await s.listen(0);
  return { s, at: `127.0.0.1:${port}` };
}

test('the passcode is the APRS-IS hash of the callsign without SSID (N0CALL: 13023)', () => {
  assert.is(aprsIsPasscode('N0CALL'), 13023);
  assert.is(aprsIsPasscode('n0call-10'), 13023);
});

test('APRS-IS: the login line names callsign, passcode, software and filter; verified, a message goes by APRS-IS and is delivered on its ack', async () => {
  const { s, at } = await server();
  const h = await harness({ callsign: CALL, aprs_is_server: at, aprs_is_passcode: PASS, aprs_is_filter: 'g/N0CALL* r/47.37/8.54/50' }, { tnc: false });
  await until('verified', () => h.bearer.stats().aprs_is_verified === true);
  assert.is(s.logins[0].line, `user ${CALL} pass ${PASS} vers fieldbridge ${VERSION} filter g/N0CALL* r/47.37/8.54/50`);
  assert.is(s.logins[0].verified, true);
  assert.is(h.bearer.stats().aprs_is_server_name, SIM_SERVER_NAME);
  const sending = h.bearer.send(textFrame('W1AW-7', 'from the internet side'));
  await until('the message reached the server', () => s.received.length === 1);
  assert.is(s.received[0], `${CALL}>APZFBR,TCPIP*,qAC,${SIM_SERVER_NAME}::W1AW-7   :from the internet side{1`);
  s.inject(`W1AW-7>APRS,TCPIP*,qAC,T2TEST::${CALL.padEnd(9)}:ack1`);
  const r = await sending;
  assert.ok(r.ok, JSON.stringify(r));
  // A message to us from APRS-IS is acknowledged there.
  s.inject(`W1AW-7>APRS,TCPIP*,qAC,T2TEST::${CALL.padEnd(9)}:hi back{77`);
  await until('heard', () => h.heard.length === 1);
  await until('acked', () => s.received.some((l) => l.endsWith(':W1AW-7   :ack77')));
  await h.stop();
  await s.close();
});

test('APRS-IS: a wrong passcode is unverified and nothing is sent; no passcode logs in read-only (pass -1)', async () => {
  const { s, at } = await server();
  const wrong = await harness({ callsign: CALL, aprs_is_server: at, aprs_is_passcode: '12345' }, { tnc: false });
  await until('logged in', () => s.logins.length === 1 && wrong.states.some((st) => /did not accept the passcode/.test(st.lastError ?? '')));
  const r = await wrong.bearer.send(textFrame('W1AW-7', 'hello'));
  assert.is(r.ok, false);
  if (!r.ok) assert.match(r.error, /ERR_APRS_OFFLINE/);
  await wrong.stop();
  const ro = await harness({ callsign: CALL, aprs_is_server: at }, { tnc: false });
  await until('second login', () => s.logins.length === 2);
  assert.match(s.logins[1].line, new RegExp(`^user ${CALL} pass -1 vers fieldbridge `));
  assert.is(s.received.length, 0);
  await ro.stop();
  await s.close();
});

test('iGate RF to APRS-IS: heard packets gated with qAR and our call; NOGATE, RFONLY, TCPIP paths and our own not', async () => {
  const { s, at } = await server();
  const h = await harness({ callsign: CALL, aprs_is_server: at, aprs_is_passcode: PASS, igate: true });
  await until('verified and online', () => h.bearer.stats().aprs_is_verified === true && h.bearer.phase === 'online');
  h.channel.say('W1AW-7', '!4903.50N/07201.75W-on RF', ['WIDE1-1']);
  h.channel.say('K1ABC', '>status', ['NOGATE']);
  h.channel.say('K1ABC-1', '>status', ['RFONLY']);
  h.channel.say('K1ABC-2', '}W9XYZ>APRS,TCPIP,W1IG*:>from the internet', []);
  h.channel.say('K1ABC-3', '}W9XYZ-5>APRS,WIDE1-1:>heard by another igate', []);
  await until('gated', () => s.received.length === 2);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(s.received, [
    `W1AW-7>APZSIM,WIDE1-1,qAR,${CALL}:!4903.50N/07201.75W-on RF`,
    `W9XYZ-5>APRS,WIDE1-1,qAR,${CALL}:>heard by another igate`,
  ]);
  assert.is(h.bearer.stats().gated_to_is, 2);
  await h.stop();
  await s.close();
});

test('iGate APRS-IS to RF: a message to a station heard directly goes out as third-party; not one heard only via a digipeater or not at all, never positions', async () => {
  const { s, at } = await server();
  const h = await harness({ callsign: CALL, aprs_is_server: at, aprs_is_passcode: PASS, igate: true });
  const near = h.channel.addStation({ callsign: 'W1AW-7' });
  await until('verified and online', () => h.bearer.stats().aprs_is_verified === true && h.bearer.phase === 'online');
  h.channel.say('W1AW-7', '>on the air', []); // heard directly
  h.channel.say('K2FAR', '>far away', ['DIGI1*', 'WIDE2-1']); // heard only as repeated by DIGI1
  await until('heard', () => h.bearer.stats().heard_stations === 2);
  s.inject('W9XYZ>APRS,TCPIP*,qAC,T2TEST::W1AW-7   :hello from the net{42');
  await until('gated to RF', () => near.inbox.length === 1);
  const out = h.channel.air.find((l) => l.startsWith(`${CALL}>`))!;
  assert.is(out, `${CALL}>APZFBR,WIDE1-1,WIDE2-1:}W9XYZ>APRS,TCPIP,${CALL}*::W1AW-7   :hello from the net{42`);
  assert.equal(near.inbox[0], { from: 'W9XYZ', text: 'hello from the net', id: '42' });
  const before = h.channel.air.length;
  s.inject('W9XYZ>APRS,TCPIP*,qAC,T2TEST:!4903.50N/07201.75W-a position');
  s.inject('W9XYZ>APRS,TCPIP*,qAC,T2TEST::NOBODY   :not heard{43');
  s.inject('W9XYZ>APRS,TCPIP*,qAC,T2TEST::K2FAR    :only via a digipeater{45');
  await until('two refused', () => (h.bearer.stats().not_gated_to_rf as number) === 2);
  await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 100));
  assert.is(h.channel.air.filter((l) => l.startsWith(`${CALL}>`)).length, h.channel.air.slice(0, before).filter((l) => l.startsWith(`${CALL}>`)).length, 'nothing more went out');
  await h.stop();
  await s.close();
});

test('iGate APRS-IS to RF: heard directly 29 minutes ago gates, 30 minutes ago does not; a sender heard on RF itself does not', () => {
  const heard = new HeardList();
  const t0 = Date.parse('2026-03-09T12:00:00Z');
  heard.hear('W1AW-7', true, t0);
  const msg = parseTnc2('W9XYZ>APRS,TCPIP*,qAC,T2TEST::W1AW-7   :hi{1')!;
  assert.ok('info' in gateToRf(msg, CALL, heard, t0 + 29 * 60_000));
  assert.equal(gateToRf(msg, CALL, heard, t0 + 30 * 60_000), { skip: 'W1AW-7 was not heard directly on RF in the last 30 minutes' });
  heard.hear('W9XYZ', false, t0);
  assert.equal(gateToRf(msg, CALL, heard, t0 + 60_000), { skip: 'W9XYZ is heard on RF itself' });
  assert.equal(gateToRf(parseTnc2('W8ABC>APRS,TCPIP*:>status')!, CALL, heard, t0), { skip: 'not a message (only messages are gated to RF)' });
});

test.after.each(async () => {
  await stopAll();
  for (const s of servers.splice(0)) await s.close();
});

test.run();
