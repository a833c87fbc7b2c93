import { connect } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeFrame, KissDecoder } from '../../../../src/bearers/shared/codec/kiss.ts';
import { CMD, decodeDeviceFrame, DETECT_BURST, encodeConfiguration, READY_QUERY, u16be, u32be, type DeviceMessage } from '../../../../src/bearers/rnode/protocol.ts';
import { rnodeAirtimeMs } from '../../../../src/bearers/rnode/radio.ts';
import { firmwarePacketCostMs } from '../../../../src/bearers/rnode/firmware.ts';
import { RNodeChannel } from '../../../../src/bearers/rnode/simulator/channel.ts';
import { serveRNodeTcp } from '../../../../src/bearers/rnode/simulator/serve.ts';
import { RNodeSimulator, type RNodeSimOptions } from '../../../../src/bearers/rnode/simulator/simulator.ts';
import { FakeClock } from '../../../../src/lib/clock.ts';

// The simulator at frame level: a host that is this test, a FakeClock for its timers.

function host(options: RNodeSimOptions = {}) {
  const clock = (options.clock as FakeClock) ?? new FakeClock();
  const sim = new RNodeSimulator({ clock, ...options });
  const decoder = new KissDecoder();
  const heard: DeviceMessage[] = [];
  sim.attachHost((bytes) => heard.push(...decoder.push(bytes).map(decodeDeviceFrame)));
  const send = (command: number, payload: Uint8Array) => sim.fromHost(encodeFrame(command, payload));
  const take = () => heard.splice(0);
  return { sim, clock, send, take, heard, decoder };
}

const eu868 = { frequency_hz: 867_200_000, bandwidth_hz: 125_000, sf: 8, cr: 5, tx_power_dbm: 14, st_alock: null, lt_alock: null };

test('answers the detect burst: detect, firmware 1.86, ESP32 platform and MCU', () => {
  const h = host();
  h.sim.fromHost(DETECT_BURST);
  assert.equal(h.take(), [
    { type: 'detect', ok: true },
    { type: 'fw_version', major: 1, minor: 86 },
    { type: 'platform', id: 0x80, name: 'ESP32' },
    { type: 'mcu', id: 0x81, name: 'ESP32' },
  ]);
  const old = host({ firmware: { major: 1, minor: 40 }, platform: 0x70, mcu: 0x71 });
  old.sim.fromHost(DETECT_BURST);
  assert.equal(old.take().slice(1), [
    { type: 'fw_version', major: 1, minor: 40 },
    { type: 'platform', id: 0x70, name: 'nRF52' },
    { type: 'mcu', id: 0x71, name: 'nRF52' },
  ]);
});

test('echoes configuration and holds it; queries answer the current value', () => {
  const h = host();
  h.sim.fromHost(encodeConfiguration({ ...eu868, st_alock: 10, lt_alock: 1 }));
  assert.equal(h.take(), [
    { type: 'frequency', hz: 867_200_000 },
    { type: 'bandwidth', hz: 125_000 },
    { type: 'txpower', dbm: 14 },
    { type: 'sf', sf: 8 },
    { type: 'cr', cr: 5 },
    { type: 'st_alock', percent: 10 },
    { type: 'lt_alock', percent: 1 },
    { type: 'radio_state', on: true },
  ]);
  assert.equal(h.sim.config, { frequency_hz: 867_200_000, bandwidth_hz: 125_000, sf: 8, cr: 5, tx_power_dbm: 14, radio_on: true, st_alock: 10, lt_alock: 1 });
  h.send(CMD.CMD_FREQUENCY, u32be(0));
  h.send(CMD.CMD_SF, Uint8Array.of(0xff));
  h.send(CMD.CMD_RADIO_STATE, Uint8Array.of(0xff));
  assert.equal(h.take(), [{ type: 'frequency', hz: 867_200_000 }, { type: 'sf', sf: 8 }, { type: 'radio_state', on: true }]);
});

test('clamps like the firmware: TX power to the modem maximum, SF 5–12, CR 5–8', () => {
  const h = host({ maxTxPowerDbm: 17 });
  h.send(CMD.CMD_TXPOWER, Uint8Array.of(30));
  h.send(CMD.CMD_SF, Uint8Array.of(14));
  h.send(CMD.CMD_SF, Uint8Array.of(3));
  h.send(CMD.CMD_CR, Uint8Array.of(9));
  h.send(CMD.CMD_CR, Uint8Array.of(1));
  assert.equal(h.take(), [
    { type: 'txpower', dbm: 17 },
    { type: 'sf', sf: 12 },
    { type: 'sf', sf: 5 },
    { type: 'cr', cr: 8 },
    { type: 'cr', cr: 5 },
  ]);
});

test('radio on without settings: ERROR_INITRADIO and the radio stays off', () => {
  const h = host();
  h.send(CMD.CMD_RADIO_STATE, Uint8Array.of(1));
  const m = h.take();
  assert.is(m[0].type, 'error');
  assert.equal(m[1], { type: 'radio_state', on: false });
});

test('READY: 01 with room, 00 when the queue is full; a query without a payload byte is ignored', () => {
  const h = host({ queuePackets: 2 });
  h.sim.fromHost(encodeConfiguration({ ...eu868, sf: 12 }));
  h.take();
  h.sim.fromHost(READY_QUERY);
  assert.equal(h.take(), [{ type: 'ready', room: true }]);
  // The first goes on air at once; two more fill the queue of two; a fourth is dropped.
  for (const b of [1, 2, 3, 4]) h.send(CMD.CMD_DATA, Uint8Array.of(b));
  assert.is(h.sim.queued, 2);
  assert.is(h.sim.counters.droppedQueueFull, 1);
  h.sim.fromHost(READY_QUERY);
  assert.equal(h.take(), [{ type: 'ready', room: false }]);
  h.sim.fromHost(Uint8Array.of(0xc0, 0x0f, 0xc0));
  assert.equal(h.take(), []);
});

test('DATA while the radio is off is dropped and counted', () => {
  const h = host();
  h.send(CMD.CMD_DATA, Uint8Array.of(1, 2));
  assert.is(h.sim.counters.droppedRadioOff, 1);
  assert.is(h.sim.queued, 0);
});

test('STAT_CHTM about once a second and after each TX, with airtime from the time-on-air formula', () => {
  const h = host();
  h.sim.fromHost(encodeConfiguration(eu868));
  h.take();
  h.clock.advance(1000);
  const idle = h.take();
  assert.equal(idle.map((m) => m.type), ['stat_chtm']);
  assert.equal((idle[0] as { airtime_short_pct: number }).airtime_short_pct, 0);
  h.send(CMD.CMD_DATA, new Uint8Array(50).fill(7));
  const ms = rnodeAirtimeMs(50, { sf: 8, bandwidthHz: 125_000, cr: 5 });
  h.clock.advance(Math.ceil(ms));
  const after = h.take();
  assert.equal(after.map((m) => m.type), ['stat_chtm']);
  const pct = (after[0] as { airtime_short_pct: number }).airtime_short_pct;
  // The firmware charges its own formula (whole ms per LoRa frame) over 15 s and sends
  // percent × 100 cut to a whole number (docs/protocols/rnode.md 1.10).
  const charged = firmwarePacketCostMs(50, { sf: 8, bandwidthHz: 125_000, cr: 5 });
  assert.is(charged, 188);
  assert.is(pct, Math.floor((charged / 15_000) * 10_000) / 100);
  assert.is(h.sim.counters.transmitted, 1);
});

test('airtime limits: the queue is held while short-term airtime is over ST_ALOCK', () => {
  const h = host();
  h.sim.fromHost(encodeConfiguration({ ...eu868, sf: 12, st_alock: 5, lt_alock: null }));
  h.take();
  // SF12 frames of 200 bytes take about 9 s each: the first pushes short-term airtime past 5 %.
  // (At this rate the firmware sends its whole queue in one go, so the others come after it.)
  h.send(CMD.CMD_DATA, new Uint8Array(200).fill(0));
  h.clock.advance(10_000);
  for (let i = 1; i < 3; i++) h.send(CMD.CMD_DATA, new Uint8Array(200).fill(i));
  h.clock.advance(1_000);
  assert.is(h.sim.counters.transmitted, 1);
  assert.ok(h.sim.counters.heldForAirtime > 0);
  assert.is(h.sim.queued, 2);
  // Once the 15 s window has moved past it, the next goes.
  h.clock.advance(60_000);
  assert.ok(h.sim.counters.transmitted >= 2);
});

test('a shared channel delivers to same-tuned radios only, STAT_RSSI and STAT_SNR first', () => {
  const clock = new FakeClock();
  const channel = new RNodeChannel({ linkQuality: () => ({ rssi_dbm: -90, snr_db: 7.75 }) });
  const a = host({ clock, channel, name: 'a' });
  const b = host({ clock, channel, name: 'b' });
  const c = host({ clock, channel, name: 'c' });
  const off = host({ clock, channel, name: 'off' });
  a.sim.fromHost(encodeConfiguration(eu868));
  b.sim.fromHost(encodeConfiguration(eu868));
  c.sim.fromHost(encodeConfiguration({ ...eu868, sf: 9 }));
  for (const h of [a, b, c, off]) h.take();
  a.send(CMD.CMD_DATA, Uint8Array.of(0x68, 0x69));
  clock.advance(500);
  const atB = b.take().filter((m) => m.type !== 'stat_chtm');
  assert.equal(atB, [{ type: 'stat_rssi', dbm: -90 }, { type: 'stat_snr', db: 7.75 }, { type: 'data', payload: Uint8Array.of(0x68, 0x69) }]);
  assert.equal(c.take().filter((m) => m.type === 'data'), []);
  assert.equal(off.take(), []);
  assert.is(channel.delivered, 1);
  // The other SF heard a busy channel on its frequency.
  clock.advance(1000);
  const load = c.take().find((m) => m.type === 'stat_chtm') as { channel_load_short_pct: number };
  assert.ok(load.channel_load_short_pct > 0);
});

test('the default link quality is plausible: RSSI −110…−60 dBm, SNR −12…+12 dB', () => {
  const clock = new FakeClock();
  const channel = new RNodeChannel({ seed: 42 });
  const a = host({ clock, channel, name: 'a' });
  const b = host({ clock, channel, name: 'b' });
  a.sim.fromHost(encodeConfiguration(eu868));
  b.sim.fromHost(encodeConfiguration(eu868));
  for (let i = 0; i < 20; i++) a.send(CMD.CMD_DATA, Uint8Array.of(i));
  clock.advance(20_000);
  const rssi = b.heard.filter((m) => m.type === 'stat_rssi').map((m) => (m as { dbm: number }).dbm);
  const snr = b.heard.filter((m) => m.type === 'stat_snr').map((m) => (m as { db: number }).db);
  assert.is(rssi.length, 20);
  assert.ok(rssi.every((v) => v >= -110 && v <= -60), rssi.join());
  assert.ok(snr.every((v) => v >= -12 && v <= 12), snr.join());
  assert.ok(new Set(rssi).size > 1, 'values vary');
});

test('faults: wrong echo for one field, withheld READY, mute, garbage', () => {
  const h = host({ faults: { wrongEcho: 'bandwidth', withholdReady: true } });
  h.sim.fromHost(encodeConfiguration(eu868));
  const m = h.take();
  assert.equal(m[1], { type: 'bandwidth', hz: 250_000 });
  assert.is(h.sim.config.bandwidth_hz, 125_000, 'stores the right value');
  h.sim.fromHost(READY_QUERY);
  assert.equal(h.take(), []);
  assert.is(h.sim.counters.readyQueries, 1);
  h.sim.faults.mute = true;
  h.sim.fromHost(DETECT_BURST);
  assert.equal(h.take(), []);
  h.sim.faults.mute = false;
  h.sim.sendGarbage();
  assert.ok(h.decoder.errors.badEscape + h.decoder.errors.unframedBytes > 0);
});

test('bad input from the host: unknown commands are counted, short payloads ignored, garbage survived', () => {
  const h = host();
  h.send(0x7e, Uint8Array.of(1));
  h.send(CMD.CMD_FREQUENCY, Uint8Array.of(1, 2));
  h.send(CMD.CMD_ST_ALOCK, Uint8Array.of(1));
  h.sim.fromHost(Uint8Array.from({ length: 500 }, (_, i) => (i * 151) & 0xff));
  assert.is(h.sim.counters.unknownCommands >= 1, true);
  assert.equal(h.take().filter((x) => x.type === 'frequency' || x.type === 'st_alock'), []);
  h.sim.fromHost(Uint8Array.of(0xc0));
  h.sim.fromHost(DETECT_BURST);
  assert.equal(h.take()[0], { type: 'detect', ok: true });
  assert.is(h.sim.config.st_alock, 0);
  h.send(CMD.CMD_LT_ALOCK, u16be(250));
  assert.equal(h.take(), [{ type: 'lt_alock', percent: 2.5 }]);
});

test('TCP: one client at a time; the device drops a client silent for 6.5 s', async () => {
  const clock = new FakeClock();
  const sim = new RNodeSimulator({ clock });
  const t = await serveRNodeTcp(sim, { port: 0, clock });
  const port = Number(t.device.split(':')[2]);
  const client = () =>
    new Promise<import('node:net').Socket>((resolve) => {
      const s = connect(port, '127.0.0.1', () => resolve(s));
    });
  const wait = async (cond: () => boolean) => {
    for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok(cond());
  };
  const first = await client();
  let firstClosed = false;
  first.on('close', () => (firstClosed = true));
  await wait(() => sim.hostAttached);
  const second = await client();
  await wait(() => firstClosed);
  let got = Buffer.alloc(0);
  second.on('data', (d) => (got = Buffer.concat([got, d])));
  second.write(encodeFrame(CMD.CMD_DETECT, Uint8Array.of(0x73)));
  await wait(() => got.length === 4);
  clock.advance(6_499);
  await new Promise((r) => setTimeout(r, 20));
  assert.ok(!second.destroyed && sim.hostAttached);
  let secondClosed = false;
  second.on('close', () => (secondClosed = true));
  clock.advance(1);
  await wait(() => secondClosed);
  assert.not.ok(sim.hostAttached);
  await t.close();
  sim.close();
});

test.run();
