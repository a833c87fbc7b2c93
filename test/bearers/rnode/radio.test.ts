import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rnodeDriver } from '../../../src/bearers/rnode/index.ts';
import { DeviceError } from '../../../src/bearers/device-error.ts';
import { deviceProblem } from '../../../src/bridge/device-problems.ts';
import {
  bitrateBps,
  loraTimeOnAirMs,
  parseRnodeSettings,
  resolveRadioSettings,
  rnodeAirtimeMs,
  RNODE_PRESETS,
} from '../../../src/bearers/rnode/radio.ts';

test('presets are exactly the docs/api.md 2.7 table', () => {
  assert.equal(
    RNODE_PRESETS.map((p) => [p.name, p.frequency_hz, p.bandwidth_hz, p.sf, p.cr, p.tx_power_dbm]),
    [
      ['us-915', 915_000_000, 125_000, 7, 5, 22],
      ['eu-868', 867_200_000, 125_000, 8, 5, 14],
      ['au-915', 915_000_000, 125_000, 7, 5, 22],
      ['ism-433', 433_000_000, 125_000, 7, 5, 12],
    ],
  );
});

test('a preset fills the five radio fields; explicit fields override it', () => {
  const s = parseRnodeSettings({ preset: 'eu-868', frequency_hz: 869_525_000, tx_power_dbm: 27, st_alock: 10, lt_alock: 1 });
  assert.equal(
    [s.frequency_hz, s.bandwidth_hz, s.sf, s.cr, s.tx_power_dbm, s.st_alock, s.lt_alock],
    [869_525_000, 125_000, 8, 5, 27, 10, 1],
  );
  assert.is(s.flow_control, true);
  assert.is(s.callsign, null);
  assert.is(s.beacon_interval_s, null);
});

test('without a preset all five radio fields are needed', () => {
  const s = parseRnodeSettings({ frequency_hz: 433_775_000, bandwidth_hz: 62_500, sf: 9, cr: 6, tx_power_dbm: 10 });
  assert.is(s.preset, null);
  assert.is(s.bandwidth_hz, 62_500);
});

test('a callsign without an interval beacons every 600 s', () => {
  const s = parseRnodeSettings({ preset: 'us-915', callsign: 'N0CALL' });
  assert.is(s.beacon_interval_s, 600);
  assert.is(parseRnodeSettings({ preset: 'us-915', callsign: 'N0CALL', beacon_interval_s: 900 }).beacon_interval_s, 900);
});

test('bad input: every bad or missing field is reported at once, with its path', () => {
  const r = resolveRadioSettings({ sf: 13, cr: 4, frequency_hz: 100_000_000, tx_power_dbm: 40, st_alock: 120, preset: 'mars-1', beacon_interval_s: 60, extra: 1 });
  assert.is(r.ok, false);
  if (r.ok) return;
  const paths = r.errors.map((e) => e.path).sort();
  for (const p of ['sf', 'cr', 'frequency_hz', 'tx_power_dbm', 'st_alock', 'preset', 'bandwidth_hz', 'beacon_interval_s', '(settings)']) {
    assert.ok(paths.includes(p), `${p} in ${paths.join(',')}`);
  }
  assert.ok(r.errors.find((e) => e.path === 'bandwidth_hz')!.message.includes('required'));
});

test('no preset and no radio field: one error on preset naming the presets and the five fields (issue 14)', () => {
  const give = 'give settings.preset (us-915, eu-868, au-915, ism-433) or all five radio fields (frequency_hz, bandwidth_hz, sf, cr, tx_power_dbm)';
  for (const input of [{}, undefined, { callsign: 'N0CALL' }]) {
    const r = resolveRadioSettings(input);
    assert.is(r.ok, false);
    if (!r.ok) assert.equal(r.errors, [{ path: 'preset', message: `required: ${give}` }], JSON.stringify(input));
  }
  // What an interface create or import checks (the driver module's settings schema).
  const viaDriver = rnodeDriver.settings.safeParse({});
  assert.is(viaDriver.success, false);
  if (!viaDriver.success) assert.equal(viaDriver.error.issues.map((i) => [i.path.join('.'), i.message]), [['preset', `required: ${give}`]]);
  // Some radio fields given: each missing one is named, with the same way out.
  const some = resolveRadioSettings({ frequency_hz: 433_775_000, sf: 9 });
  assert.is(some.ok, false);
  if (!some.ok) assert.equal(some.errors, ['bandwidth_hz', 'cr', 'tx_power_dbm'].map((path) => ({ path, message: `required when no preset is given: ${give}` })));
});

test('bad input: wrong types and non-objects are refused, as DeviceError ERR_RNODE_SETTINGS', () => {
  for (const input of [{ sf: '7', preset: 'us-915' }, { preset: 'us-915', bandwidth_hz: 125.5 }, 'us-915', [1], { preset: 'us-915', flow_control: 'yes' }]) {
    try {
      parseRnodeSettings(input);
      assert.unreachable(`accepted ${JSON.stringify(input)}`);
    } catch (e) {
      assert.instance(e, DeviceError);
      assert.is((e as DeviceError).code, 'ERR_RNODE_SETTINGS');
      assert.is(deviceProblem(e)!.status, 400);
      assert.ok((e as DeviceError).facts.fields!.length >= 1);
    }
  }
});

test('bad input: ranges edges (137 MHz–3 GHz, 7.8–1625 kHz, 0–37 dBm) are inclusive', () => {
  const ok = resolveRadioSettings({ frequency_hz: 137_000_000, bandwidth_hz: 7_800, sf: 5, cr: 8, tx_power_dbm: 0, st_alock: 0, lt_alock: 100 });
  assert.ok(ok.ok);
  const hi = resolveRadioSettings({ frequency_hz: 3_000_000_000, bandwidth_hz: 1_625_000, sf: 12, cr: 5, tx_power_dbm: 37 });
  assert.ok(hi.ok);
  const over = resolveRadioSettings({ frequency_hz: 3_000_000_001, bandwidth_hz: 1_625_001, sf: 12, cr: 5, tx_power_dbm: 37 });
  assert.not.ok(over.ok);
  if (!over.ok) assert.equal(over.errors.map((e) => e.path), ['frequency_hz', 'bandwidth_hz']);
});

test('bit rate: the worked examples of docs/protocols/rnode.md 1.7', () => {
  assert.is(bitrateBps(7, 125_000, 5), 5468.75);
  assert.is(bitrateBps(8, 125_000, 5), 3125);
  assert.ok(Math.abs(bitrateBps(9, 125_000, 5) - 1757.8) < 0.1);
  assert.is(bitrateBps(7, 250_000, 5), 10937.5);
});

test('time on air: examples A and B of docs/protocols/rnode.md 1.8', () => {
  const a = loraTimeOnAirMs({ payloadBytes: 10, sf: 7, bandwidthHz: 125_000, cr: 5 });
  assert.ok(Math.abs(a - 41.216) < 1e-9, String(a));
  const b = loraTimeOnAirMs({ payloadBytes: 50, sf: 8, bandwidthHz: 125_000, cr: 5 });
  assert.ok(Math.abs(b - 174.592) < 1e-9, String(b));
});

test('time on air: low data rate optimisation switches on above 16 ms symbols (SF11 @125 kHz)', () => {
  const sf11 = loraTimeOnAirMs({ payloadBytes: 20, sf: 11, bandwidthHz: 125_000, cr: 5 });
  const forcedOff = loraTimeOnAirMs({ payloadBytes: 20, sf: 11, bandwidthHz: 125_000, cr: 5, lowDataRateOptimize: false });
  assert.ok(sf11 > forcedOff);
  // Implicit header saves symbols; a bigger payload costs more.
  assert.ok(loraTimeOnAirMs({ payloadBytes: 20, sf: 7, bandwidthHz: 125_000, cr: 5, implicitHeader: true }) < loraTimeOnAirMs({ payloadBytes: 20, sf: 7, bandwidthHz: 125_000, cr: 5 }));
});

test('RNode airtime: header byte and 18-symbol preamble make it longer; > 254 bytes splits', () => {
  const radio = { sf: 7, bandwidthHz: 125_000, cr: 5 };
  assert.ok(rnodeAirtimeMs(10, radio) > loraTimeOnAirMs({ ...radio, payloadBytes: 10 }));
  const split = rnodeAirtimeMs(300, radio);
  assert.ok(Math.abs(split - 2 * rnodeAirtimeMs(150, radio)) < 1e-9);
});

test.run();
