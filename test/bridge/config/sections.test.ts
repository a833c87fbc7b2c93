import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigSections, defaultSection, MODULE_NAMES, ModulesSettings, SECTION_NAMES, SECTION_SCHEMAS } from '../../../src/bridge/config/sections.ts';
import { zodErrors } from '../../../src/lib/validation.ts';

// The section schemas: every field has a default, and bad values are each reported.

test('an empty document parses to a full configuration of defaults', () => {
  const values = ConfigSections.parse({});
  assert.equal(Object.keys(values), SECTION_NAMES);
  for (const name of SECTION_NAMES) assert.equal(values[name], defaultSection(name), name);
  assert.equal(Object.keys(values.modules), MODULE_NAMES);
  assert.equal(values.modules.store_forward, { enabled: false, is_server: false, heartbeat: false, records: 0, history_return_max: 25, history_return_window: 240 });
  assert.equal(values.modules.beacon, { enabled: false, interval: 3600, text: '', channel: 0 });
  // A partly written section keeps the defaults of the rest, nested objects included.
  assert.equal(SECTION_SCHEMAS.routing.parse({ rate_limit: { burst: 5 } }), { default_action: 'store', rate_limit: { sends_per_minute: 120, burst: 5 } });
});

test('three independent errors in three sections are all reported with their paths', () => {
  const result = ConfigSections.safeParse({ radio: { hop_limit: 9 }, owner: { short_name: 'TOOLONG' }, modules: { telemetry: { device_update_interval: -5 } }, extra: 1 });
  assert.not.ok(result.success);
  const paths = zodErrors(result.error!, 'file').map((e) => e.path).sort();
  assert.equal(paths, ['file', 'file.modules.telemetry.device_update_interval', 'file.owner.short_name', 'file.radio.hop_limit']);
});

test('time zones are IANA names', () => {
  for (const tz of ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Pacific/Auckland']) {
    assert.ok(SECTION_SCHEMAS.bridge.safeParse({ timezone: tz }).success, tz);
  }
  for (const tz of ['', 'Mars/Olympus', 'GMT+25', 'Europe/']) assert.not.ok(SECTION_SCHEMAS.bridge.safeParse({ timezone: tz }).success, tz);
});

test('module rules: canned messages fit 200 bytes joined by "|", an enabled beacon has text', () => {
  const canned = (messages: string[]) => ModulesSettings.safeParse({ canned_message: { messages } }).success;
  assert.ok(canned(['a'.repeat(100), 'b'.repeat(99)])); // 100 + 1 + 99
  assert.not.ok(canned(['a'.repeat(100), 'b'.repeat(100)]));
  assert.not.ok(canned(['a|b']));
  assert.not.ok(ModulesSettings.safeParse({ beacon: { enabled: true } }).success);
  assert.ok(ModulesSettings.safeParse({ beacon: { enabled: true, text: 'DL1ABC fieldbridge' } }).success);
  assert.not.ok(ModulesSettings.safeParse({ position: { position_broadcast_secs: 2 ** 31 } }).success);
  assert.not.ok(ModulesSettings.safeParse({ mqtt: {} }).success);
});

test.run();
