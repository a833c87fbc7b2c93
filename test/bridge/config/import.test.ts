import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigFileService } from '../../../src/bridge/config/import.ts';
import { REDACTION_MARKER } from '../../../src/bridge/config/secrets.ts';
import { waitUntil } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, sendText } from '../../helpers/routing.ts';
import { configChecksum, errorPaths, exportText, furnish, HUB, ok, postFile } from './files.ts';

// POST /api/config/import (docs/api.md 4.4, issue 5): the whole file is checked first and every error
// listed with its path; then the configuration is replaced in one transaction, history kept,
// same-named interfaces keeping their ids so deliveries in flight stay attached.

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
  await furnish(t.call, 'import');
});
test.after(async () => {
  await t.stop();
});

const checksum = () => configChecksum(t.bridge.services.db);
const file = async () => JSON.parse(await exportText(t.call));
const indexOf = (list: any[], name: string) => list.findIndex((x) => x.name === name);

test('a file with three independent errors is refused with all three paths, and the configuration is untouched', async () => {
  const before = checksum();
  const exported = await exportText(t.call);
  const bad = JSON.parse(exported);
  const lora = indexOf(bad.interfaces, 'lora');
  const night = indexOf(bad.access_rules, 'night-relay');
  const toAnn = indexOf(bad.access_rules, 'to-ann');
  bad.interfaces[lora].settings.sf = 13;
  bad.access_rules[toAnn].destinations[0].interface = 'x';
  bad.access_rules[night].schedule.windows[0].end = '24:00';
  const r = await postFile(t.call, '/api/config/import', bad);
  assertProblem(r, 400);
  assert.is(r.body.type, 'https://fieldbridge.dev/problems/validation');
  assert.equal(errorPaths(r.body), [
    `body.access_rules[${night}].schedule.windows[0].end`,
    `body.access_rules[${toAnn}].destinations[0].interface`,
    `body.interfaces[${lora}].settings.sf`,
  ].sort());
  assert.ok(r.body.errors.some((e: any) => e.message === "no interface 'x' in this file"), r.text);
  assert.match(r.body.detail, '3 error(s) and nothing was changed');
  assert.is(checksum(), before);
  assert.is((await exportText(t.call)).replace(/"exported_at": "[^"]*"/, ''), exported.replace(/"exported_at": "[^"]*"/, ''));
});

test('every kind of bad content is named by its path; nothing is stored', async () => {
  const before = checksum();
  const good = await file();
  const mesh = indexOf(good.interfaces, 'mesh');
  const meshId = (await t.call('GET', '/api/interfaces/mesh')).body.id;
  const cases: Array<[string, (f: any) => void, string[]]> = [
    ['unknown kind', (f) => (f.interfaces[mesh].kind = 'zigbee'), [`body.interfaces[${mesh}].kind`]],
    ['sim setting of the wrong type', (f) => (f.interfaces[mesh].settings.mtu = 'big'), [`body.interfaces[${mesh}].settings.mtu`]],
    ['unknown transform step', (f) => (f.interfaces[mesh].transforms.outbound[0] = { type: 'rot13' }), [`body.interfaces[${mesh}].transforms.outbound[0].type`]],
    ['bad port value', (f) => (f.interfaces[mesh].device = 'com3'), [`body.interfaces[${mesh}].device`]],
    ['bad field and bad setting in one entry', (f) => Object.assign(f.interfaces[mesh], { enabled: 'yes', settings: { mtu: 0 } }), [`body.interfaces[${mesh}].enabled`, `body.interfaces[${mesh}].settings.mtu`]],
    ['duplicate interface name', (f) => f.interfaces.push({ ...f.interfaces[mesh] }), [`body.interfaces[${good.interfaces.length}].name`]],
    ['duplicate rule name', (f) => (f.access_rules[1].name = f.access_rules[0].name), ['body.access_rules[1].name']],
    ['bad schedule timezone', (f) => (f.access_rules[1].schedule.timezone = 'Mars/Olympus'), ['body.access_rules[1].schedule.timezone']],
    ['empty filter list', (f) => (f.access_rules[0].match.kinds = []), ['body.access_rules[0].match.kinds']],
    ['regex that cannot run in linear time', (f) => (f.access_rules[0].match.text = { regex: '(sos)\\1' }), ['body.access_rules[0].match.text.regex']],
    ['forward without destinations', (f) => (f.access_rules[0].destinations = []), ['body.access_rules[0].destinations']],
    ['@group missing from the file', (f) => (f.access_rules[1].match.from = ['@nobody']), ['body.access_rules[1].match.from[0]']],
    ['interface by id, not by name', (f) => (f.access_rules[0].destinations[0].interface = meshId), ['body.access_rules[0].destinations[0].interface']],
    ['rule naming an interface removed from the file', (f) => f.interfaces.splice(mesh, 1), ['body.access_rules[0].destinations[0].interface', 'body.access_rules[1].match.interfaces[0]']],
    ['group and contact with one name', (f) => f.contacts.push({ name: 'ops', addresses: { mesh: '!00000002' } }), [`body.contacts[${good.contacts.length}].name`]],
    ['contact without an address', (f) => (f.contacts[0].addresses = {}), ['body.contacts[0].addresses']],
    ['group without members', (f) => (f.object_groups[0].members = []), ['body.object_groups[0].members']],
    ['bad section field', (f) => (f.radio.region = 'MARS'), ['body.radio.region']],
    ['section that is not an object', (f) => (f.owner = 'R3'), ['body.owner']],
    ['missing section', (f) => delete f.owner, ['body.owner']],
    ['missing list (references into it are not reported again)', (f) => delete f.contacts, ['body.contacts']],
    ['list that is not a list', (f) => (f.object_groups = {}), ['body.object_groups']],
    ['unknown key', (f) => (f.extras = {}), ['body.extras']],
    ['bad exported_at', (f) => (f.exported_at = 'yesterday'), ['body.exported_at']],
  ];
  for (const [what, edit, paths] of cases) {
    const bad = structuredClone(good);
    edit(bad);
    const r = await postFile(t.call, '/api/config/import', bad);
    assert.is(r.status, 400, `${what}: ${r.text}`);
    assert.equal(errorPaths(r.body), [...paths].sort(), `${what}: ${r.text}`);
  }
  assert.match(JSON.stringify(await postFile(t.call, '/api/config/import', { ...good, contacts: undefined })), 'write [] for none');
  assert.is(checksum(), before, 'no refused import stored anything');
});

test('the body: an object, JSON, application/json, at most 8 MiB (more than other requests), owner or admin', async () => {
  const before = checksum();
  const exported = await exportText(t.call);
  for (const raw of ['[]', '42', 'null', '"x"']) assertProblem(await postFile(t.call, '/api/config/import', raw), 400, ['body']);
  assertProblem(await postFile(t.call, '/api/config/import', { ...JSON.parse(exported), format: 'other' }), 400, ['body.format']);
  assertProblem(await postFile(t.call, '/api/config/import', { ...JSON.parse(exported), version: '1' }), 400, ['body.version']);
  assert.is((await postFile(t.call, '/api/config/import', '{"format"')).body.type, 'https://fieldbridge.dev/problems/bad-json');
  assertProblem(await t.call('POST', '/api/config/import', { rawBody: exported, headers: { 'content-type': 'text/plain' } }), 415);
  assertProblem(await postFile(t.call, '/api/config/import', exported + ' '.repeat(8 * 1024 * 1024)), 413);
  // 2 MiB would be refused by any other endpoint (1 MiB); a configuration file may be larger.
  const padded = await postFile(t.call, '/api/config/import', exported + ' '.repeat(2 * 1024 * 1024));
  assert.is(padded.status, 200, padded.text);
  assert.equal(padded.body.changes, []);
  const viewer = (await ok(t.call, 'POST', '/api/auth/keys', { label: 'viewer', role: 'viewer' }, 201)).key;
  assertProblem(await postFile(t.call, '/api/config/import', exported, viewer), 403);
  assertProblem(await postFile(t.call, '/api/config/import', exported, null), 401);
  assert.is(checksum(), before);
});

test('a failure inside the transaction rolls everything back: no row, no announcement, no bearer touched', async () => {
  const s = t.bridge.services;
  // The last step of the transaction fails, after sections, books and interfaces were written.
  const failingRules = { list: () => s.rules.list(), forgetCache: () => s.rules.forgetCache(), replaceAll: () => { throw new Error('disk full (simulated)'); } };
  const files = new ConfigFileService({ db: s.db, config: s.config, interfaces: s.interfaces, rules: failingRules as never, groups: s.groups, contacts: s.contacts, deliveries: s.deliveries, clock: s.clock });
  const edited = await file();
  edited.radio.hop_limit = 1;
  edited.object_groups = [];
  edited.contacts = [];
  edited.interfaces = [];
  edited.access_rules = [];
  // Its policy names groups removed above; this service is given no senders policy to replace.
  delete edited.senders;
  const seen: string[] = [];
  const listener = (section: string) => seen.push(section);
  s.config.on('change', listener);
  const before = checksum();
  const running = s.interfaces.list().filter((i) => s.host.bearer(i.id)).map((i) => i.name);
  assert.ok(running.length > 0);
  try {
    await files.import(edited).then(() => assert.unreachable('the import should have failed'), (error: Error) => assert.match(error.message, 'disk full'));
  } finally {
    s.config.off('change', listener);
  }
  assert.is(checksum(), before);
  assert.equal(seen, []);
  assert.equal(s.interfaces.list().filter((i) => s.host.bearer(i.id)).map((i) => i.name), running);
  assert.is(s.db.isTransaction, false);
  assert.is((await postFile(t.call, '/api/config/diff', await exportText(t.call))).body.changes.length, 0);
});

test('a same-named interface keeps its id: a delivery waiting for a disabled interface survives the import and goes out after enable', async () => {
  const lab = (await t.call('GET', '/api/interfaces/lab')).body;
  const sent = await sendText(t.call, '!1ab', 'parked while the lab radio is off');
  const delivery = sent.deliveries[0];
  assert.is(delivery.interface_id, lab.id);
  // Held while its interface is disabled (docs/routing.md, "Held, not failed").
  await waitUntil('held', async () => (await t.call('GET', `/api/deliveries/${delivery.id}`)).body.state === 'held');

  const edited = await file();
  const i = indexOf(edited.interfaces, 'lab');
  edited.interfaces[i].settings.latency_ms = 5;
  edited.interfaces[i].retry.max_attempts = 7;
  const r = await postFile(t.call, '/api/config/import', edited);
  assert.is(r.status, 200, r.text);
  assert.equal(r.body.changes.map((c: any) => c.path), ['interfaces[name=lab].settings.latency_ms', 'interfaces[name=lab].retry.max_attempts']);

  const after = (await t.call('GET', '/api/interfaces/lab')).body;
  assert.is(after.id, lab.id);
  assert.is(after.created_at, lab.created_at);
  assert.is(after.settings.latency_ms, 5);
  const waiting = (await t.call('GET', `/api/deliveries/${delivery.id}`)).body;
  assert.is(waiting.state, 'held');
  assert.is(waiting.interface_id, lab.id);

  assert.is((await t.call('POST', '/api/interfaces/lab/enable')).status, 200);
  await waitUntil('the parked delivery is delivered', async () => (await t.call('GET', `/api/deliveries/${delivery.id}`)).body.state === 'delivered');
  await t.call('POST', '/api/interfaces/lab/disable');
});

test('interfaces left out are removed with their bearer and waiting deliveries; a changed kind is a new interface; history stays', async () => {
  const mesh = (await t.call('GET', '/api/interfaces/mesh')).body;
  const lab = (await t.call('GET', '/api/interfaces/lab')).body;
  assert.ok(t.bridge.services.host.bearer(mesh.id), 'mesh runs before the import');
  const parked = (await sendText(t.call, '!1ab', 'for lab, which the file removes')).deliveries[0];
  const messagesBefore = (await t.call('GET', '/api/messages?limit=1000')).body.items.length;
  const auditBefore = (await t.call('GET', '/api/audit?limit=1000')).body.items.length;

  const edited = await file();
  edited.interfaces = edited.interfaces.filter((x: any) => x.name !== 'mesh' && x.name !== 'lab');
  edited.interfaces.push({ name: 'lab', kind: 'sms', enabled: false, device: null, settings: { max_parts: 3 } });
  edited.access_rules = edited.access_rules.filter((r: any) => r.name === 'drop-spam');
  const r = await postFile(t.call, '/api/config/import', edited);
  assert.is(r.status, 200, r.text);
  assert.ok(r.body.changes.some((c: any) => c.path === 'interfaces[name=mesh]' && c.op === 'remove'));
  assert.ok(r.body.changes.some((c: any) => c.path === 'interfaces[name=lab].kind' && c.from === 'sim' && c.to === 'sms'));

  assert.is((await t.call('GET', '/api/interfaces/mesh')).status, 404);
  assert.is(t.bridge.services.host.bearer(mesh.id), undefined, 'the removed interface\'s bearer was stopped');
  const newLab = (await t.call('GET', '/api/interfaces/lab')).body;
  assert.is(newLab.kind, 'sms');
  assert.is.not(newLab.id, lab.id, 'a delivery for a sim radio cannot go out on an SMS modem: new interface');
  const cancelled = (await t.call('GET', `/api/deliveries/${parked.id}`)).body;
  assert.is(cancelled.state, 'cancelled');
  assert.match(cancelled.last_error, 'configuration import');
  assert.equal((await t.call('GET', '/api/access-rules')).body.items.map((x: any) => x.name), ['drop-spam']);
  assert.is((await t.call('GET', '/api/messages?limit=1000')).body.items.length, messagesBefore, 'messages are history: kept');
  assert.ok((await t.call('GET', '/api/audit?limit=1000')).body.items.length > auditBefore, 'audit kept, and the import is in it');
});

test('secrets: a redacted file keeps the stored password, a clear one replaces it, null clears it', async () => {
  const redacted = await file();
  assert.is(redacted.hub.password, REDACTION_MARKER);
  assert.is((await postFile(t.call, '/api/config/import', redacted)).status, 200);
  assert.is(t.bridge.services.config.section('hub').password, HUB.password);
  assert.is((await postFile(t.call, '/api/config/import', { ...redacted, hub: { ...redacted.hub, password: 'n3w' } })).status, 200);
  assert.is(t.bridge.services.config.section('hub').password, 'n3w');
  const cleared = await postFile(t.call, '/api/config/import', { ...redacted, hub: { ...redacted.hub, password: null } });
  assert.equal(cleared.body.changes, [{ path: 'hub.password', op: 'change', from: REDACTION_MARKER, to: null }]);
  assert.is(t.bridge.services.config.section('hub').password, null);
});

test('changed sections are announced once after commit; a refused import announces nothing and keeps the rule cache right', async () => {
  const seen: string[] = [];
  const listener = (section: string) => seen.push(section);
  t.bridge.services.config.on('change', listener);
  try {
    const edited = await file();
    edited.radio.hop_limit = 2;
    edited.modules.range_test.enabled = true;
    edited.access_rules[0].enabled = false;
    const refused = structuredClone(edited);
    refused.contacts.push({ name: 'ops', addresses: { sms: '+4900000000' } });
    assert.is((await postFile(t.call, '/api/config/import', refused)).status, 400);
    assert.equal(seen, []);
    assert.is((await postFile(t.call, '/api/config/import', edited)).status, 200);
    assert.equal(seen.sort(), ['radio', 'range_test']);
    // The router sees the imported rules at once (its cached list was dropped).
    assert.is(t.bridge.services.rules.list()[0].enabled, false);
  } finally {
    t.bridge.services.config.off('change', listener);
  }
});

test.run();
