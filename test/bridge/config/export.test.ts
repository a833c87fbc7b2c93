import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigFile, FILE_KEYS } from '../../../src/bridge/config/export.ts';
import { configExportRoutes } from '../../../src/bridge/config/routes.ts';
import { buildOpenApi } from '../../../src/http/openapi.ts';
import { REDACTION_MARKER } from '../../../src/bridge/config/secrets.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem } from '../../helpers/routing.ts';
import { exportText, furnish, HUB, ok, withoutExportedAt } from './files.ts';

// GET /api/config/export (docs/api.md 4.4, issue 5): one readable file, stable key order, 2-space
// indentation, served as an attachment, secrets redacted unless an owner asks, no ids.

let t: TestBridge;
const keys = { admin: '', viewer: '' };
test.before(async () => {
  t = await startTestBridge();
  await furnish(t.call, 'export');
  keys.admin = (await ok(t.call, 'POST', '/api/auth/keys', { label: 'admin', role: 'admin' }, 201)).key;
  keys.viewer = (await ok(t.call, 'POST', '/api/auth/keys', { label: 'viewer', role: 'viewer' }, 201)).key;
});
test.after(async () => {
  await t.stop();
});

test('a JSON attachment, 2-space indented, keys in the documented order, valid against its own schema', async () => {
  const r = await t.call('GET', '/api/config/export', { key: keys.viewer });
  assert.is(r.status, 200);
  assert.is(r.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.is(r.headers.get('content-disposition'), 'attachment; filename="fieldbridge-config.json"');
  assert.is(r.headers.get('cache-control'), 'no-store');
  assert.ok(r.text.startsWith('{\n  "format": "fieldbridge-config",\n  "version": 1,\n  "exported_at": "'), r.text.slice(0, 80));
  assert.ok(r.text.endsWith('\n}\n'));
  const file = JSON.parse(r.text);
  assert.is(r.text, `${JSON.stringify(file, null, 2)}\n`, 'exactly 2-space indentation');
  assert.equal(Object.keys(file), [...FILE_KEYS]);
  assert.ok(Date.parse(file.exported_at) > 0);
  assert.ok(ConfigFile.safeParse(file).success, JSON.stringify(ConfigFile.safeParse(file).error?.issues));
  // Entry fields: name first, then the entry schema's order.
  assert.equal(Object.keys(file.interfaces[0]), ['name', 'kind', 'enabled', 'device', 'settings', 'transforms', 'retry']);
  assert.equal(Object.keys(file.access_rules[0]), ['name', 'enabled', 'match', 'schedule', 'action', 'destinations']);
  assert.equal(Object.keys(file.radio), ['region', 'modem_preset', 'channel_num', 'hop_limit', 'tx_power']);
});

test('what the bridge holds, by name: no ids anywhere, rules in evaluation order, other lists sorted by name', async () => {
  const text = await exportText(t.call);
  assert.not.match(text, /"(ifc|rul|grp|ctc|key|msg|dlv)_[0-9A-Z]{26}"/, 'no ids: the file is a template');
  assert.not.match(text, /"(id|created_at|updated_at|priority|fired|state)":/);
  const file = JSON.parse(text);
  assert.equal(file.interfaces.map((i: any) => i.name), ['lab', 'lora', 'mesh', 'sat']);
  assert.equal(file.access_rules.map((r: any) => r.name), ['to-ann', 'night-relay', 'drop-spam', 'to-lab']);
  assert.equal(file.object_groups.map((g: any) => g.name), ['field', 'ops']);
  assert.equal(file.contacts.map((c: any) => c.name), ['ann', 'bob']);
  const night = file.access_rules[1];
  assert.equal(night.match, { direction: 'inbound', interfaces: ['mesh'], from: ['@ops'] });
  assert.equal(night.destinations, [{ interface: 'lora', to: '@ann' }, { interface: 'sat', to: '@field' }]);
  assert.equal(night.schedule.windows, [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '22:00', end: '06:00' }]);
  assert.is(file.access_rules[2].enabled, false);
  assert.equal(file.access_rules[2].destinations, []);
  const mesh = file.interfaces[2];
  assert.equal(mesh.transforms.outbound, [{ type: 'prefix', text: '{from}: ' }, { type: 'split', max_bytes: 120 }]);
  assert.equal(mesh.retry, { base_s: 2, cap_s: 60, max_attempts: 3, ttl_s: 3600, ttl_while_held: 'paused', queue_max_deliveries: 1000, queue_max_bytes: 4_194_304 });
  assert.equal(mesh.settings, { behaviour: 'deliver', fail_count: 1, latency_ms: 0, mtu: 200 });
  assert.is(file.interfaces[0].enabled, false);
  assert.equal(file.interfaces[1].settings, { preset: 'eu-868', st_alock: 10, callsign: 'DL0ABC' }, 'rnode settings in schema order');
  assert.equal(file.bridge, { name: 'ridge-3', timezone: 'Europe/Berlin', audit: { retention_days: 90, max_rows: 100_000 }, storage: { sync: 'full' }, events: { log_max_events: 10_000, log_max_kib: 2_048, log_max_hours: 168, max_streams: 256, max_buffered_kib: 1_024, heartbeat_s: 15 }, alerts: { interface_offline_s: null, node_silent_min: null, battery_below_pct: null, dead_letters: false, uplink_down_min: null, disk_free_below_mb: null, max_per_hour: 12 }, clock: { radio_time: [] } });
  assert.equal(file.modules.canned_message.messages, ['OK', 'SOS']);
});

test('the same configuration always gives the same bytes, whatever order its values were written in', async () => {
  const first = await exportText(t.call);
  // Settings come back in one order (the kind's schema order), whatever order they were written in.
  const sat = JSON.parse(first).interfaces.find((i: any) => i.name === 'sat');
  assert.equal([sat.settings.credits_per_day, sat.settings.mailbox_check_s], [20, 3600]);
  const put = await t.call('PUT', '/api/interfaces/sat', { body: { name: 'sat', settings: { credits_per_day: 20, mailbox_check_s: 3600 }, transforms: { outbound: [], inbound: [] }, retry: {} } });
  assert.is(put.status, 200, put.text);
  assert.is(withoutExportedAt(await exportText(t.call)), withoutExportedAt(first));
});

test('secrets: redacted for every key by default; ?secrets=include is for owners only', async () => {
  for (const key of [keys.viewer, keys.admin, t.ownerKey]) {
    const r = await t.call('GET', '/api/config/export', { key });
    assert.is(r.status, 200);
    assert.is(JSON.parse(r.text).hub.password, REDACTION_MARKER);
    assert.not.match(r.text, HUB.password);
  }
  assert.is(JSON.parse(await exportText(t.call, '?secrets=redact')).hub.password, REDACTION_MARKER);
  for (const key of [keys.viewer, keys.admin]) {
    const r = await t.call('GET', '/api/config/export?secrets=include', { key });
    assertProblem(r, 403, [], /only an owner key may export secrets/);
    assert.not.match(r.text, HUB.password);
  }
  assert.is(JSON.parse(await exportText(t.call, '?secrets=include')).hub.password, HUB.password);
});

test('bad requests: an unknown secrets value is a 400 naming it; no key is 401; other methods 405', async () => {
  assertProblem(await t.call('GET', '/api/config/export?secrets=yes'), 400, ['query.secrets']);
  assertProblem(await t.call('GET', '/api/config/export', { key: null }), 401);
  const del = await t.call('DELETE', '/api/config/export');
  assertProblem(del, 405);
  assert.is(del.headers.get('allow'), 'GET');
});

test('export, import and diff are in the OpenAPI document with their roles, limits and shapes', () => {
  const doc = buildOpenApi({ title: 't', version: '0', description: 'd' }, configExportRoutes(null as never)) as any;
  const exp = doc.paths['/api/config/export'].get;
  assert.is(exp.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/ConfigExport');
  assert.equal(Object.keys(doc.components.schemas.ConfigExport.properties), [...FILE_KEYS]);
  assert.match(exp.description, 'Roles: owner, admin, viewer');
  for (const path of ['/api/config/import', '/api/config/diff']) {
    const op = doc.paths[path].post;
    assert.is(op.requestBody.content['application/json'].schema.$ref, '#/components/schemas/ConfigImport', path);
    assert.match(op.description, 'Roles: owner, admin.', path);
    for (const status of ['400', '403', '413', '415']) assert.ok(op.responses[status], `${path} documents ${status}`);
  }
  assert.equal(Object.keys(doc.components.schemas.ConfigImported.properties), ['applied', 'changes']);
});

test.run();
