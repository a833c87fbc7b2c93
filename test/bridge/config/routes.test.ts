import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configRoutes } from '../../../src/bridge/config/routes.ts';
import { MODULE_NAMES, REDACTION_MARKER, SECTION_NAMES } from '../../../src/bridge/config/sections.ts';
import { buildOpenApi } from '../../../src/http/openapi.ts';
import { type Harness, startHarness } from './harness.ts';

// docs/api.md 4.4 configuration endpoints over real HTTP, a real database file and real keys.

async function withBridge(fn: (h: Harness) => Promise<void>): Promise<void> {
  const h = await startHarness();
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

const paths = (body: any): string[] => (body.errors ?? []).map((e: { path: string }) => e.path).sort();

test('GET /api/config answers every section with its defaults on a fresh bridge', () =>
  withBridge(async (h) => {
    const res = await h.call('GET', '/api/config', { key: h.keys.viewer });
    assert.is(res.status, 200);
    assert.equal(Object.keys(res.body), SECTION_NAMES);
    assert.equal(res.body.bridge, { name: 'fieldbridge', timezone: 'UTC', audit: { retention_days: 90, max_rows: 100_000 }, storage: { sync: 'full' }, events: { log_max_events: 10_000, log_max_kib: 2_048, log_max_hours: 168, max_streams: 256, max_buffered_kib: 1_024, heartbeat_s: 15 }, alerts: { interface_offline_s: null, node_silent_min: null, battery_below_pct: null, dead_letters: false, uplink_down_min: null, disk_free_below_mb: null, max_per_hour: 12 }, clock: { radio_time: [] } });
    assert.equal(res.body.routing, { default_action: 'store', rate_limit: { sends_per_minute: 120, burst: 20 } });
    assert.is(res.body.hub.enabled, false);
    assert.is(res.body.hub.password, null);
    assert.equal(res.body.radio, { region: 'UNSET', modem_preset: 'LONG_FAST', channel_num: 0, hop_limit: 3, tx_power: 0 });
    assert.equal(res.body.owner, { long_name: 'fieldbridge', short_name: 'FB' });
    assert.equal(Object.keys(res.body.modules), MODULE_NAMES);
    assert.is(res.body.modules.telemetry.device_update_interval, 1800);
  }));

test('GET /api/config/{section} answers the same section as the whole read; an unknown one is 404 naming the known ones', () =>
  withBridge(async (h) => {
    const all = (await h.call('GET', '/api/config')).body;
    for (const name of SECTION_NAMES) {
      const res = await h.call('GET', `/api/config/${name}`, { key: h.keys.viewer });
      assert.is(res.status, 200, name);
      assert.equal(res.body, all[name], name);
    }
    const missing = await h.call('GET', '/api/config/radios');
    assert.is(missing.status, 404);
    assert.is(missing.headers.get('content-type'), 'application/problem+json');
    assert.is(missing.body.type, 'https://fieldbridge.dev/problems/unknown-section');
    assert.match(missing.body.detail, "'radios' does not exist");
    for (const name of SECTION_NAMES) assert.match(missing.body.detail, name);
  }));

test('GET /api/config/module/{section} answers one module; unknown modules and a missing name are 404', () =>
  withBridge(async (h) => {
    const all = (await h.call('GET', '/api/config')).body;
    for (const name of MODULE_NAMES) {
      const res = await h.call('GET', `/api/config/module/${name}`, { key: h.keys.viewer });
      assert.is(res.status, 200, name);
      assert.equal(res.body, all.modules[name], name);
    }
    const unknown = await h.call('GET', '/api/config/module/mqtt');
    assert.is(unknown.status, 404);
    assert.is(unknown.body.type, 'https://fieldbridge.dev/problems/unknown-module');
    assert.match(unknown.body.detail, 'canned_message');
    // "/api/config/module" alone is the section route with the name "module".
    const bare = await h.call('GET', '/api/config/module');
    assert.is(bare.status, 404);
    assert.is(bare.body.type, 'https://fieldbridge.dev/problems/unknown-section');
  }));

test('GET /api/config/module/{section} reads back every section POST /api/config/module writes (bridge, routing, hub), secrets redacted', () =>
  withBridge(async (h) => {
    const hub = { enabled: true, mqtt_url: 'mqtt://127.0.0.1:1', tenant: 'acme', password: 's3cret' };
    assert.is((await h.call('POST', '/api/config/module', { key: h.keys.admin, body: { section: 'hub', settings: hub } })).status, 200);
    for (const name of ['bridge', 'routing', 'hub']) {
      const res = await h.call('GET', `/api/config/module/${name}`, { key: h.keys.viewer });
      assert.is(res.status, 200, `${name}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body, (await h.call('GET', `/api/config/${name}`)).body, name);
    }
    assert.is((await h.call('GET', '/api/config/module/hub')).body.password, REDACTION_MARKER);
    const radio = await h.call('GET', '/api/config/module/radio');
    assert.is(radio.status, 404, 'radio and owner have their own endpoints');
    assert.match(radio.body.detail, 'hub');
    assert.match(radio.body.detail, 'GET /api/config/radio');
  }));

test('POST /api/config/module patches one module, keeps the other fields, and survives a restart', () =>
  withBridge(async (h) => {
    const res = await h.call('POST', '/api/config/module', { key: h.keys.admin, body: { section: 'range_test', settings: { enabled: true, sender: 60 } } });
    assert.is(res.status, 200);
    assert.equal(res.body, { section: 'range_test', settings: { enabled: true, sender: 60, save: false } });
    const second = await h.call('POST', '/api/config/module', { body: { section: 'range_test', settings: { save: true } } });
    assert.equal(second.body.settings, { enabled: true, sender: 60, save: true });
    const canned = await h.call('POST', '/api/config/module', { body: { section: 'canned_message', settings: { enabled: true, messages: ['ok', 'need water', 'SOS'] } } });
    assert.equal(canned.body.settings.messages, ['ok', 'need water', 'SOS']);
    // Another module is untouched; a new service over the same file reads what was stored.
    assert.equal(h.reopen().module('range_test'), { enabled: true, sender: 60, save: true });
    assert.equal(h.reopen().module('telemetry'), (await h.call('GET', '/api/config/module/telemetry')).body);
    assert.is((await h.call('GET', '/api/config/module/canned_message')).body.enabled, true);
  }));

test('POST /api/config/module also writes bridge and routing; nested fields patch one by one', () =>
  withBridge(async (h) => {
    const bridge = await h.call('POST', '/api/config/module', { body: { section: 'bridge', settings: { name: 'ridge-3', timezone: 'Europe/Berlin' } } });
    assert.is(bridge.status, 200);
    assert.equal((await h.call('GET', '/api/config/bridge')).body, { name: 'ridge-3', timezone: 'Europe/Berlin', audit: { retention_days: 90, max_rows: 100_000 }, storage: { sync: 'full' }, events: { log_max_events: 10_000, log_max_kib: 2_048, log_max_hours: 168, max_streams: 256, max_buffered_kib: 1_024, heartbeat_s: 15 }, alerts: { interface_offline_s: null, node_silent_min: null, battery_below_pct: null, dead_letters: false, uplink_down_min: null, disk_free_below_mb: null, max_per_hour: 12 }, clock: { radio_time: [] } });
    const routing = await h.call('POST', '/api/config/module', { body: { section: 'routing', settings: { rate_limit: { sends_per_minute: 0 } } } });
    assert.equal(routing.body.settings, { default_action: 'store', rate_limit: { sends_per_minute: 0, burst: 20 } });
  }));

test('POST /api/config/module reports every bad field at once and stores nothing', () =>
  withBridge(async (h) => {
    const res = await h.call('POST', '/api/config/module', {
      body: { section: 'store_forward', settings: { enabled: 'yes', records: -1, history_return_window: 1.5, colour: 'red' } },
    });
    assert.is(res.status, 400);
    assert.is(res.body.type, 'https://fieldbridge.dev/problems/validation');
    assert.equal(paths(res.body), ['body.settings', 'body.settings.enabled', 'body.settings.history_return_window', 'body.settings.records']);
    assert.match(JSON.stringify(res.body.errors), 'colour');
    assert.is(h.config.module('store_forward').enabled, false);

    // Rules that span fields run on the merged value: a beacon needs text, canned messages fit 200 bytes.
    const beacon = await h.call('POST', '/api/config/module', { body: { section: 'beacon', settings: { enabled: true, interval: 10 } } });
    assert.is(beacon.status, 400);
    assert.equal(paths(beacon.body), ['body.settings.interval']);
    const beaconText = await h.call('POST', '/api/config/module', { body: { section: 'beacon', settings: { enabled: true } } });
    assert.equal(paths(beaconText.body), ['body.settings.text']);
    const canned = await h.call('POST', '/api/config/module', { body: { section: 'canned_message', settings: { messages: ['a|b', 'x'.repeat(199), ''] } } });
    assert.equal(paths(canned.body), ['body.settings.messages', 'body.settings.messages[0]', 'body.settings.messages[2]']);
    const bridge = await h.call('POST', '/api/config/module', { body: { section: 'bridge', settings: { name: '', timezone: 'Mars/Olympus_Mons' } } });
    assert.equal(paths(bridge.body), ['body.settings.name', 'body.settings.timezone']);
    const routing = await h.call('POST', '/api/config/module', { body: { section: 'routing', settings: { default_action: 'forward', rate_limit: { burst: 0 } } } });
    assert.equal(paths(routing.body), ['body.settings.default_action', 'body.settings.rate_limit.burst']);
    assert.equal(h.config.section('bridge'), { name: 'fieldbridge', timezone: 'UTC', audit: { retention_days: 90, max_rows: 100_000 }, storage: { sync: 'full' }, events: { log_max_events: 10_000, log_max_kib: 2_048, log_max_hours: 168, max_streams: 256, max_buffered_kib: 1_024, heartbeat_s: 15 }, alerts: { interface_offline_s: null, node_silent_min: null, battery_below_pct: null, dead_letters: false, uplink_down_min: null, disk_free_below_mb: null, max_per_hour: 12 }, clock: { radio_time: [] } });
  }));

test('POST /api/config/module refuses unknown sections, radio and owner, and malformed bodies', () =>
  withBridge(async (h) => {
    const radio = await h.call('POST', '/api/config/module', { body: { section: 'radio', settings: { hop_limit: 2 } } });
    assert.is(radio.status, 400);
    assert.equal(paths(radio.body), ['body.section']);
    assert.match(radio.body.errors[0].message, 'POST /api/config/radio');
    const unknown = await h.call('POST', '/api/config/module', { body: { section: 'mqtt', settings: {} } });
    assert.equal(paths(unknown.body), ['body.section']);
    const noSettings = await h.call('POST', '/api/config/module', { body: { section: 'telemetry' } });
    assert.equal(paths(noSettings.body), ['body.settings']);
    const notObject = await h.call('POST', '/api/config/module', { body: { section: 'telemetry', settings: [1] } });
    assert.equal(paths(notObject.body), ['body.settings']);
    const empty = await h.call('POST', '/api/config/module', {});
    assert.is(empty.status, 400);
    assert.equal(paths(empty.body), ['body']);
    const badJson = await h.call('POST', '/api/config/module', { raw: '{"section": ' });
    assert.is(badJson.status, 400);
    assert.is(badJson.body.type, 'https://fieldbridge.dev/problems/bad-json');
    const text = await h.call('POST', '/api/config/module', { raw: 'section=telemetry', contentType: 'text/plain' });
    assert.is(text.status, 415);
  }));

test('reads need a key; writes need owner or admin', () =>
  withBridge(async (h) => {
    assert.is((await h.call('GET', '/api/config', { key: null })).status, 401);
    assert.is((await h.call('GET', '/api/config/radio', { key: 'fbb_notakey' })).status, 401);
    for (const [path, body] of [
      ['/api/config/module', { section: 'telemetry', settings: {} }],
      ['/api/config/radio', { hop_limit: 2 }],
      ['/api/config/owner', { short_name: 'X' }],
    ] as const) {
      assert.is((await h.call('POST', path, { key: h.keys.viewer, body })).status, 403, path);
      assert.is((await h.call('POST', path, { key: null, body })).status, 401, path);
      assert.is((await h.call('POST', path, { key: h.keys.admin, body })).status, 200, path);
    }
    assert.is(h.config.section('radio').hop_limit, 2);
  }));

test('the hub password is redacted on every read and a written-back marker keeps it', () =>
  withBridge(async (h) => {
    const hub = { enabled: true, mqtt_url: 'mqtts://hub.example.org:8883', tenant: 'ten_1', bridge_id: 'ridge-3', username: 'ridge', password: 's3cret' };
    const written = await h.call('POST', '/api/config/module', { body: { section: 'hub', settings: hub } });
    assert.is(written.status, 200);
    assert.is(written.body.settings.password, REDACTION_MARKER);
    assert.is((await h.call('GET', '/api/config/hub')).body.password, REDACTION_MARKER);
    const all = await h.call('GET', '/api/config');
    assert.is(all.body.hub.password, REDACTION_MARKER);
    assert.not.match(JSON.stringify(all.body), 's3cret');

    // Read, edit, write back: the marker keeps the stored secret.
    const edited = { ...all.body.hub, username: 'ridge3' };
    assert.is((await h.call('POST', '/api/config/module', { body: { section: 'hub', settings: edited } })).status, 200);
    assert.is((h.config.section('hub') as { password: string }).password, 's3cret');
    assert.is((h.config.section('hub') as { username: string }).username, 'ridge3');
    // A new value replaces it; null clears it.
    await h.call('POST', '/api/config/module', { body: { section: 'hub', settings: { password: 'n3w' } } });
    assert.is((h.config.section('hub') as { password: string }).password, 'n3w');
    const cleared = await h.call('POST', '/api/config/module', { body: { section: 'hub', settings: { password: null } } });
    assert.is(cleared.body.settings.password, null);
    // With nothing stored, the marker cannot stand for anything.
    const marker = await h.call('POST', '/api/config/module', { body: { section: 'hub', settings: { password: REDACTION_MARKER } } });
    assert.is(marker.status, 400);
    assert.equal(paths(marker.body), ['body.settings.password']);
    assert.is((h.config.section('hub') as { password: string | null }).password, null);
  }));

test('an enabled hub needs its address (the tenant may come from an enrollment; bridge_id defaults to a stable id); bad values are named', () =>
  withBridge(async (h) => {
    const res = await h.call('POST', '/api/config/module', { body: { section: 'hub', settings: { enabled: true } } });
    assert.is(res.status, 400);
    assert.equal(paths(res.body), ['body.settings.mqtt_url'], 'tenant: an enrolled bridge has it from the hub; bridge_id may stay null: a stable id is made at first start');
    const bad = await h.call('POST', '/api/config/module', {
      body: { section: 'hub', settings: { mqtt_url: 'http://hub.example.org', tenant: 'a/b', bridge_id: '#', password: '' } },
    });
    assert.equal(paths(bad.body), ['body.settings.bridge_id', 'body.settings.mqtt_url', 'body.settings.password', 'body.settings.tenant']);
    assert.is(h.config.section('hub').enabled, false);
  }));

test('POST /api/config/radio stores a patch and warns when the mesh identity changes unchecked', () =>
  withBridge(async (h) => {
    const first = await h.call('POST', '/api/config/radio', { key: h.keys.admin, body: { region: 'EU_868', hop_limit: 4 } });
    assert.is(first.status, 200);
    assert.equal(first.body.radio, { region: 'EU_868', modem_preset: 'LONG_FAST', channel_num: 0, hop_limit: 4, tx_power: 0 });
    assert.is(first.body.warnings.length, 1);
    assert.is(first.body.warnings[0].code, 'RADIO_NOT_REPORTED');
    assert.equal(first.body.warnings[0].fields, ['region']);
    assert.match(first.body.warnings[0].message, 'invisible to its mesh');
    // Reach changes (hop limit, power) never warn.
    const reach = await h.call('POST', '/api/config/radio', { body: { hop_limit: 5, tx_power: 17 } });
    assert.equal(reach.body.warnings, []);
    assert.is(h.reopen().section('radio').tx_power, 17);
  }));

test('POST /api/config/radio warns when the values differ from what the mesh radio reported', () =>
  withBridge(async (h) => {
    h.config.setReportedRadio({ region: 'US', modem_preset: 'LONG_FAST', channel_num: 20, hop_limit: 3, tx_power: 30 });
    const same = await h.call('POST', '/api/config/radio', { body: { region: 'US', channel_num: 20 } });
    assert.equal(same.body.warnings, []);
    const differs = await h.call('POST', '/api/config/radio', { body: { modem_preset: 'SHORT_TURBO', hop_limit: 7 } });
    assert.is(differs.status, 200);
    assert.is(differs.body.radio.modem_preset, 'SHORT_TURBO');
    assert.is(differs.body.warnings[0].code, 'RADIO_DIFFERS_FROM_MESH');
    assert.equal(differs.body.warnings[0].fields, ['modem_preset']);
    assert.match(differs.body.warnings[0].message, 'LONG_FAST');
  }));

test('POST /api/config/radio refuses every bad field at once', () =>
  withBridge(async (h) => {
    const res = await h.call('POST', '/api/config/radio', { body: { region: 'MARS', modem_preset: 'VERY_LONG_SLOW', channel_num: 1.5, hop_limit: 8, tx_power: -1, frequency: 915 } });
    assert.is(res.status, 400);
    assert.equal(paths(res.body), ['body', 'body.channel_num', 'body.hop_limit', 'body.modem_preset', 'body.region', 'body.tx_power']);
    const types = await h.call('POST', '/api/config/radio', { body: { hop_limit: '3', region: null } });
    assert.equal(paths(types.body), ['body.hop_limit', 'body.region']);
    assert.is((await h.call('POST', '/api/config/radio', { body: [] })).status, 400);
    assert.equal(h.config.section('radio'), (await h.call('GET', '/api/config/radio')).body);
    assert.is(h.config.section('radio').region, 'UNSET');
  }));

test('POST /api/config/owner counts UTF-8 bytes: 39 for the long name, 4 for the short one', () =>
  withBridge(async (h) => {
    const longest = 'é'.repeat(19) + 'a'; // 39 bytes
    const ok = await h.call('POST', '/api/config/owner', { body: { long_name: longest, short_name: '🛰' } });
    assert.is(ok.status, 200);
    assert.equal(ok.body, { owner: { long_name: longest, short_name: '🛰' } });
    const tooLong = await h.call('POST', '/api/config/owner', { body: { long_name: longest + 'a', short_name: 'ABCDE' } });
    assert.is(tooLong.status, 400);
    assert.equal(paths(tooLong.body), ['body.long_name', 'body.short_name']);
    const bad = await h.call('POST', '/api/config/owner', { body: { long_name: '', short_name: 'a\nb' } });
    assert.equal(paths(bad.body), ['body.long_name', 'body.short_name']);
    const patch = await h.call('POST', '/api/config/owner', { body: { short_name: 'R3' } });
    assert.equal(patch.body.owner, { long_name: longest, short_name: 'R3' });
  }));

test('each write is announced once with the new, unredacted value; a failing listener breaks nothing', () =>
  withBridge(async (h) => {
    const seen: Array<[string, unknown]> = [];
    h.config.on('change', () => {
      throw new Error('driver exploded');
    });
    h.config.on('change', (section, value) => seen.push([section, value]));
    await h.call('POST', '/api/config/radio', { body: { region: 'ANZ' } });
    await h.call('POST', '/api/config/radio', { body: { region: 'ANZ' } }); // unchanged: not announced
    await h.call('POST', '/api/config/module', { body: { section: 'neighbor_info', settings: { enabled: true } } });
    await h.call('POST', '/api/config/module', { body: { section: 'hub', settings: { password: 'pw' } } });
    const owner = await h.call('POST', '/api/config/owner', { body: { long_name: 'Ridge 3' } });
    assert.is(owner.status, 200);
    await h.call('POST', '/api/config/radio', { body: { hop_limit: 9 } }); // refused: not announced
    assert.equal(seen.map(([s]) => s), ['radio', 'neighbor_info', 'hub', 'owner']);
    assert.is((seen[0][1] as { region: string }).region, 'ANZ');
    assert.is((seen[2][1] as { password: string }).password, 'pw');
    assert.is(h.logLines.filter((l) => l.includes('config_change_listener_failed')).length, 4);
  }));

test('every section, module and write appears in the OpenAPI document', () => {
  const doc = buildOpenApi({ title: 't', version: '0', description: 'd' }, configRoutes(null as never)) as any;
  const schemas = doc.components.schemas;
  assert.equal(Object.keys(schemas.Config.properties), SECTION_NAMES);
  assert.equal(Object.keys(schemas.Config.properties.modules.properties), MODULE_NAMES);
  assert.ok(schemas.RadioSettingsWrite.properties.region.enum.includes('EU_868'));
  assert.is(schemas.RadioSettingsWrite.required, undefined); // a patch: every field optional
  const targets = schemas.ModuleSettingsWrite.oneOf.map((o: any) => o.properties.section.const).sort();
  assert.equal(targets, [...MODULE_NAMES, 'bridge', 'routing', 'hub'].sort());
  for (const p of ['/api/config', '/api/config/{section}', '/api/config/module/{section}', '/api/config/module', '/api/config/radio', '/api/config/owner']) {
    assert.ok(doc.paths[p], p);
  }
  assert.ok(doc.paths['/api/config/{section}'].get.responses['404']);
});

test.run();
