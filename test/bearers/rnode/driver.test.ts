import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RNodeBearer } from '../../../src/bearers/rnode/driver.ts';
import { RNODE_PRESETS } from '../../../src/bearers/rnode/radio.ts';
import { RNodeChannel } from '../../../src/bearers/rnode/simulator/channel.ts';
import { serveRNodeTcp, type SimTransport } from '../../../src/bearers/rnode/simulator/serve.ts';
import { RNodeSimulator, type EchoField, type RNodeSimOptions } from '../../../src/bearers/rnode/simulator/simulator.ts';
import { FakeClock, systemClock, type Clock } from '../../../src/lib/clock.ts';
import { openTestLink, recorder, settle, waitFor, type Recorder } from './helpers.ts';

// The RNode driver against the simulator over a real TCP socket (the pty runs are in
// driver-pty.test.ts). Where a timeout matters the driver gets a FakeClock; sockets stay real.

interface Rig {
  sim: RNodeSimulator;
  transport: SimTransport;
  bearer: RNodeBearer;
  rec: Recorder;
  close(): Promise<void>;
}

const open: Rig[] = [];

async function rig(settings: Record<string, unknown>, o: { clock?: Clock; sim?: RNodeSimOptions; name?: string; start?: boolean } = {}): Promise<Rig> {
  const sim = new RNodeSimulator({ name: o.name ?? 'sim', ...o.sim });
  const transport = await serveRNodeTcp(sim, { port: 0 });
  const rec = recorder(settings, o.clock ?? systemClock, o.name);
  const bearer = new RNodeBearer(rec.ctx, { openLink: openTestLink });
  const r: Rig = {
    sim,
    transport,
    bearer,
    rec,
    close: async () => {
      await bearer.stop();
      await transport.close();
      sim.close();
    },
  };
  open.push(r);
  if (o.start !== false) await bearer.start(transport.device);
  return r;
}

const online = (r: Rig) => waitFor(`${r.rec.ctx.interfaceName} online`, () => r.bearer.phase === 'online');
const frame = (text: string) => ({ deliveryId: 'dlv_1', messageId: 'msg_1', to: 'broadcast', channel: null, kind: 'text' as const, text, payload: new TextEncoder().encode(text) });

test.after.each(async () => {
  for (const r of open.splice(0)) await r.close();
});

for (const preset of RNODE_PRESETS) {
  test(`init with preset ${preset.name}: the simulator holds exactly the configured values`, async () => {
    const r = await rig({ preset: preset.name, st_alock: 10, lt_alock: 1 });
    await online(r);
    assert.equal(r.sim.config, {
      frequency_hz: preset.frequency_hz,
      bandwidth_hz: preset.bandwidth_hz,
      sf: preset.sf,
      cr: preset.cr,
      tx_power_dbm: preset.tx_power_dbm,
      radio_on: true,
      st_alock: 10,
      lt_alock: 1,
    });
    const s = r.bearer.stats();
    assert.equal(
      [s.frequency_hz, s.bandwidth_hz, s.sf, s.cr, s.tx_power_dbm, s.radio_on, s.st_alock_pct, s.lt_alock_pct, s.firmware_version, s.platform],
      [preset.frequency_hz, preset.bandwidth_hz, preset.sf, preset.cr, preset.tx_power_dbm, true, 10, 1, '1.86', 'ESP32'],
    );
    assert.is(s.connected, true);
    // The bring-up steps in order, each reported once.
    const phases = r.rec.states.map((x) => x.phase);
    assert.equal(phases, ['opening', 'detecting', 'configuring', 'verifying', 'online']);
  });
}

test('explicit fields override the preset on the radio', async () => {
  const r = await rig({ preset: 'eu-868', frequency_hz: 869_525_000, tx_power_dbm: 20, sf: 9 });
  await online(r);
  const c = r.sim.config;
  assert.equal([c.frequency_hz, c.bandwidth_hz, c.sf, c.cr, c.tx_power_dbm], [869_525_000, 125_000, 9, 5, 20]);
  assert.is(r.bearer.stats().bitrate_bps, (9 * 0.8 / (512 / 125)) * 1000);
});

test('two RNodes on one simulated channel exchange a frame; the receiver gets RSSI and SNR', async () => {
  const channel = new RNodeChannel({ linkQuality: () => ({ rssi_dbm: -97, snr_db: 6.25 }) });
  const a = await rig({ preset: 'eu-868' }, { sim: { channel }, name: 'a' });
  const b = await rig({ preset: 'eu-868' }, { sim: { channel }, name: 'b' });
  await Promise.all([online(a), online(b)]);
  const sent = await a.bearer.send(frame('hello from a'));
  assert.equal(sent, { ok: true });
  await waitFor('b receives', () => b.rec.received.length === 1);
  assert.equal(b.rec.received[0], {
    from: 'rnode',
    to: null,
    channel: null,
    kind: 'text',
    text: 'hello from a',
    payload: new TextEncoder().encode('hello from a'),
    meta: { rssi_dbm: -97, snr_db: 6.25 },
  });
  assert.is(b.bearer.stats().last_rssi_dbm, -97);
  assert.is(b.bearer.stats().last_snr_db, 6.25);
  // Bytes that are not UTF-8 arrive as data, not text.
  await b.bearer.send({ ...frame(''), kind: 'data', text: null, payload: Uint8Array.of(0xff, 0xc0, 0xdb, 0x00) });
  await waitFor('a receives', () => a.rec.received.length === 1);
  assert.is(a.rec.received[0].kind, 'data');
  assert.is(a.rec.received[0].text, null);
  assert.equal(a.rec.received[0].payload, Uint8Array.of(0xff, 0xc0, 0xdb, 0x00));
  // After a transmission the sender's airtime shows up in its channel statistics.
  await waitFor('airtime reported', () => (a.bearer.stats().airtime_short_pct as number) > 0);
  assert.ok((b.bearer.stats().channel_load_short_pct as number) > 0);
});

test('radios tuned differently do not hear each other', async () => {
  const channel = new RNodeChannel();
  const a = await rig({ preset: 'eu-868' }, { sim: { channel }, name: 'a' });
  const b = await rig({ preset: 'eu-868', sf: 9 }, { sim: { channel }, name: 'b' });
  await Promise.all([online(a), online(b)]);
  await a.bearer.send(frame('anyone?'));
  await waitFor('a transmitted', () => a.sim.counters.transmitted === 1);
  await settle();
  assert.is(b.rec.received.length, 0);
});

test('withheld READY: no DATA frame is sent, the send fails retryable after the timeout', async () => {
  const clock = new FakeClock();
  const r = await rig({ preset: 'us-915' }, { clock, sim: { faults: { withholdReady: true } } });
  await online(r);
  const result = r.bearer.send(frame('wait for me'));
  await waitFor('a READY query', () => r.sim.counters.readyQueries >= 1);
  clock.advance(10_000);
  await waitFor('more READY queries', () => r.sim.counters.readyQueries >= 5);
  assert.is(r.sim.counters.dataFromHost, 0);
  clock.advance(20_000);
  const verdict = await result;
  assert.is(verdict.ok, false);
  if (!verdict.ok) {
    assert.is(verdict.retryable, true);
    assert.match(verdict.error, /ERR_RNODE_NOT_READY/);
  }
  assert.is(r.sim.counters.dataFromHost, 0);
  // READY comes back: the next frame goes out.
  r.sim.faults.withholdReady = false;
  const next = r.bearer.send(frame('now'));
  clock.advance(1_000);
  assert.equal(await next, { ok: true });
  await waitFor('DATA at the simulator', () => r.sim.counters.dataFromHost === 1);
});

test('flow control: each DATA frame waits for its own READY; a burst still goes out in order', async () => {
  const r = await rig({ preset: 'us-915' });
  await online(r);
  const results = await Promise.all(['one', 'two', 'three'].map((t) => r.bearer.send(frame(t))));
  assert.equal(results, [{ ok: true }, { ok: true }, { ok: true }]);
  await waitFor('three DATA frames', () => r.sim.counters.dataFromHost === 3);
  const log = r.sim.hostLog.map((e) => e.command).filter((c) => c === 'CMD_READY' || c === 'CMD_DATA');
  assert.equal(log, ['CMD_READY', 'CMD_DATA', 'CMD_READY', 'CMD_DATA', 'CMD_READY', 'CMD_DATA']);
});

test('flow_control false writes without asking READY', async () => {
  const r = await rig({ preset: 'us-915', flow_control: false }, { sim: { faults: { withholdReady: true } } });
  await online(r);
  assert.equal(await r.bearer.send(frame('direct')), { ok: true });
  await waitFor('DATA', () => r.sim.counters.dataFromHost === 1);
  assert.is(r.sim.counters.readyQueries, 0);
});

test('a silent TCP link gets a detect request after 3.5 s without writing, not before', async () => {
  const clock = new FakeClock();
  const r = await rig({ preset: 'us-915' }, { clock });
  await online(r);
  const before = r.sim.counters.detects;
  clock.advance(3_499);
  await settle();
  assert.is(r.sim.counters.detects, before);
  clock.advance(1);
  await waitFor('keep-alive detect', () => r.sim.counters.detects === before + 1);
  clock.advance(3_500);
  await waitFor('second keep-alive detect', () => r.sim.counters.detects === before + 2);
});

const wrongEchoes: [EchoField, string][] = [
  ['frequency', 'frequency: expected 867200000 Hz (±100), got 867205000 Hz'],
  ['bandwidth', 'bandwidth: expected 125000 Hz, got 250000 Hz'],
  ['txpower', 'tx_power: expected 14 dBm, got 11 dBm'],
  ['sf', 'sf: expected 8, got 9'],
  ['cr', 'cr: expected 5, got 6'],
  ['radio_state', 'radio_state: expected on, got off'],
  ['st_alock', 'st_alock: expected 10 %, got 11 %'],
  ['lt_alock', 'lt_alock: expected 1 %, got 2 %'],
];
for (const [field, message] of wrongEchoes) {
  test(`a wrong ${field} echo fails the interface with a message naming the field`, async () => {
    const r = await rig({ preset: 'eu-868', st_alock: 10, lt_alock: 1 }, { clock: new FakeClock(), sim: { faults: { wrongEcho: field } } });
    await waitFor('backoff', () => r.bearer.phase === 'backoff');
    const s = r.rec.last()!;
    assert.is(s.connected, false);
    assert.ok(s.lastError!.includes(message), s.lastError!);
    assert.ok(!r.rec.states.some((x) => x.connected), 'never online');
  });
}

test('firmware older than 1.52 is refused, naming both versions', async () => {
  const r = await rig({ preset: 'us-915' }, { clock: new FakeClock(), sim: { firmware: { major: 1, minor: 51 } } });
  await waitFor('backoff', () => r.bearer.phase === 'backoff');
  assert.match(r.rec.last()!.lastError!, /firmware 1\.51 is older than the required 1\.52/);
  assert.is(r.sim.config.radio_on, false);
});

test('a device that does not answer the detect burst fails after 5 s, naming what is missing', async () => {
  const clock = new FakeClock();
  const r = await rig({ preset: 'us-915' }, { clock, sim: { faults: { mute: true } } });
  await waitFor('detecting', () => r.bearer.phase === 'detecting');
  await settle();
  clock.advance(4_999);
  await settle();
  assert.is(r.bearer.phase, 'detecting');
  clock.advance(1);
  await waitFor('backoff', () => r.bearer.phase === 'backoff');
  assert.match(r.rec.last()!.lastError!, /did not answer the detect burst as an RNode within 5000 ms \(no reply to: detect, fw_version, platform, mcu\)/);
});

test('simulator down then up: backoff with the reason, then online again without a restart', async () => {
  const clock = new FakeClock();
  const r = await rig({ preset: 'eu-868' }, { clock });
  await online(r);
  await r.transport.stop();
  await waitFor('backoff', () => r.bearer.phase === 'backoff');
  assert.is(r.rec.last()!.connected, false);
  assert.ok(r.rec.last()!.lastError);
  assert.equal((await r.bearer.send(frame('x'))).ok, false);
  // Still down at the first retry: connection refused, longer backoff.
  clock.advance(1_000);
  await waitFor('second backoff', () => r.rec.states.filter((s) => s.phase === 'backoff').length === 2);
  assert.match(r.rec.last()!.lastError!, /refused/);
  await r.transport.start();
  clock.advance(2_000);
  await online(r);
  assert.is(r.rec.last()!.connected, true);
  assert.is(r.sim.config.radio_on, true);
  assert.equal(await r.bearer.send(frame('back')), { ok: true });
});

test('the link dropped by the device: reconnects after the backoff', async () => {
  const clock = new FakeClock();
  const r = await rig({ preset: 'eu-868' }, { clock });
  await online(r);
  await r.transport.dropLink();
  await waitFor('backoff', () => r.bearer.phase === 'backoff');
  clock.advance(1_000);
  await online(r);
});

test('a fatal ERROR frame drops the link with the error named, then the radio is brought up again', async () => {
  const clock = new FakeClock();
  const r = await rig({ preset: 'eu-868' }, { clock });
  await online(r);
  r.sim.sendFrame(0x90, Uint8Array.of(0x02));
  await waitFor('backoff', () => r.bearer.phase === 'backoff');
  assert.match(r.rec.last()!.lastError!, /ERROR_TXFAILED/);
  clock.advance(1_000);
  await online(r);
});

test('a reset indication from the device (C0 55 F8 C0) brings the radio up again', async () => {
  const clock = new FakeClock();
  const r = await rig({ preset: 'eu-868' }, { clock });
  await online(r);
  const configs = r.sim.hostLog.filter((e) => e.command === 'CMD_FREQUENCY').length;
  r.sim.sendFrame(0x55, Uint8Array.of(0xf8));
  await waitFor('backoff', () => r.bearer.phase === 'backoff');
  assert.match(r.rec.last()!.lastError!, /rebooted/);
  clock.advance(1_000);
  await online(r);
  assert.is(r.sim.hostLog.filter((e) => e.command === 'CMD_FREQUENCY').length, configs + 1);
});

test('a half frame followed by silence is thrown away (1500 ms on TCP), not glued to later bytes', async () => {
  const clock = new FakeClock();
  const r = await rig({ preset: 'eu-868' }, { clock });
  await online(r);
  r.sim.sendGarbage(Uint8Array.of(0xc0, 0x00, 0x41, 0x42));
  await settle();
  clock.advance(1_499);
  assert.is((r.bearer.stats().kiss_errors as Record<string, number>).discarded_partial, 0);
  clock.advance(1);
  assert.is((r.bearer.stats().kiss_errors as Record<string, number>).discarded_partial, 1);
  r.sim.sendGarbage(Uint8Array.of(0x43, 0xc0));
  r.sim.sendFrame(0x00, Uint8Array.of(0x44));
  await waitFor('the clean frame', () => r.rec.received.length === 1);
  assert.is(r.rec.received[0].text, 'D');
});

test('a non-fatal ERROR frame stays online and shows as the last error', async () => {
  const r = await rig({ preset: 'eu-868' });
  await online(r);
  r.sim.sendFrame(0x90, Uint8Array.of(0x05));
  await waitFor('error state', () => r.rec.last()?.lastError?.includes('ERROR_MEMORY_LOW') === true);
  assert.is(r.bearer.phase, 'online');
  assert.is(r.rec.last()!.connected, true);
  assert.is(r.bearer.stats().device_errors, 1);
});

test('bad input from the device: garbage and unknown commands are counted; the link stays up', async () => {
  const r = await rig({ preset: 'eu-868' });
  await online(r);
  r.sim.sendGarbage();
  await waitFor('KISS errors counted', () => {
    const k = r.bearer.stats().kiss_errors as Record<string, number>;
    return k.bad_escape > 0;
  });
  const unknownBefore = r.bearer.stats().unknown_frames as number;
  r.sim.sendFrame(0x7e, Uint8Array.of(1, 2, 3));
  r.sim.sendFrame(0x01, Uint8Array.of(1)); // FREQUENCY with 1 byte: malformed
  await waitFor('malformed counted', () => r.bearer.stats().malformed_frames === 1);
  assert.is(r.bearer.stats().unknown_frames, unknownBefore + 1);
  assert.is(r.bearer.phase, 'online');
  assert.equal(await r.bearer.send(frame('still fine')), { ok: true });
});

test('a frame longer than 508 bytes is refused, not retryable; 508 bytes go', async () => {
  const r = await rig({ preset: 'eu-868' });
  await online(r);
  const long = await r.bearer.send({ ...frame(''), payload: new Uint8Array(509).fill(0x41) });
  assert.is(long.ok, false);
  if (!long.ok) {
    assert.is(long.retryable, false);
    assert.match(long.error, /ERR_RNODE_FRAME_TOO_LONG: 509 bytes is more than the 508 bytes/);
  }
  const empty = await r.bearer.send({ ...frame(''), payload: new Uint8Array(0) });
  assert.equal([empty.ok, !empty.ok && empty.retryable], [false, false]);
  assert.equal(await r.bearer.send({ ...frame(''), payload: new Uint8Array(508).fill(0x42) }), { ok: true });
  await waitFor('508 bytes at the simulator', () => r.sim.counters.dataFromHost === 1);
});

test('not online: send fails retryable, naming the phase', async () => {
  const r = await rig({ preset: 'eu-868' }, { start: false });
  const v = await r.bearer.send(frame('too early'));
  assert.equal(v.ok, false);
  if (!v.ok) {
    assert.is(v.retryable, true);
    assert.match(v.error, /not online \(closed/);
  }
});

test('stop() switches the radio off and sends LEAVE before closing', async () => {
  const r = await rig({ preset: 'eu-868' });
  await online(r);
  await r.bearer.stop();
  await waitFor('leave', () => r.sim.counters.leaves === 1);
  const tail = r.sim.hostLog.slice(-2).map((e) => e.command);
  assert.equal(tail, ['CMD_RADIO_STATE', 'CMD_LEAVE']);
  assert.is(r.sim.config.radio_on, false);
  assert.is(r.bearer.phase, 'closed');
  assert.equal(r.rec.last(), { connected: false, lastError: null, phase: 'closed' });
});

test('beacon: the callsign goes out each interval only when the interface transmitted since', async () => {
  const clock = new FakeClock();
  const r = await rig({ preset: 'eu-868', callsign: 'N0CALL', beacon_interval_s: 60 }, { clock });
  await online(r);
  clock.advance(60_000);
  await settle();
  assert.is(r.sim.counters.dataFromHost, 0, 'no beacon without traffic');
  const sent = r.bearer.send(frame('traffic'));
  await waitFor('READY query', () => r.sim.counters.readyQueries === 1);
  assert.equal(await sent, { ok: true });
  clock.advance(60_000);
  await waitFor('beacon', () => r.sim.counters.dataFromHost === 2);
  const data = r.sim.hostLog.filter((e) => e.command === 'CMD_DATA').map((e) => new TextDecoder().decode(e.payload));
  assert.equal(data, ['traffic', 'N0CALL']);
  clock.advance(60_000);
  await settle();
  assert.is(r.sim.counters.dataFromHost, 2, 'the beacon itself does not count as traffic');
  assert.is(r.bearer.stats().beacons_sent, 1);
});

test('invalid settings are refused when the bearer is made, every field named', () => {
  const rec = recorder({ sf: 4, preset: 'nowhere' }, systemClock);
  assert.throws(() => new RNodeBearer(rec.ctx, { openLink: openTestLink }), (e: Error & { code?: string }) => e.code === 'ERR_RNODE_SETTINGS' && /sf/.test(e.message) && /preset/.test(e.message));
});

test.run();
