import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serializeConfigFile } from '../../../src/bridge/config/export.ts';
import { REDACTION_MARKER } from '../../../src/bridge/config/secrets.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem } from '../../helpers/routing.ts';
import { configChecksum, errorPaths, exportText, furnish, ok, postFile, withoutExportedAt } from './files.ts';

// POST /api/config/diff (docs/api.md 4.4: "reports what import would change; changes nothing") and the
// issue 5 acceptance: a diff of an export against itself is empty; after editing one rule and
// one interface it names exactly those paths; import then makes the next export match the
// edited file. "Changes nothing" is a checksum of the configuration tables before and after.

let t: TestBridge;
let viewerKey = '';
test.before(async () => {
  t = await startTestBridge();
  await furnish(t.call, 'diff');
  viewerKey = (await ok(t.call, 'POST', '/api/auth/keys', { label: 'viewer', role: 'viewer' }, 201)).key;
});
test.after(async () => {
  await t.stop();
});

const checksum = () => configChecksum(t.bridge.services.db);

test('a diff of an export against itself reports no changes and changes nothing', async () => {
  const before = checksum();
  const file = await exportText(t.call);
  const r = await postFile(t.call, '/api/config/diff', file);
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, { changes: [] });
  assert.is(checksum(), before);
  // Key order and an absent exported_at are not changes either.
  const reordered = JSON.parse(file);
  delete reordered.exported_at;
  const shuffled = Object.fromEntries(Object.entries(reordered).reverse());
  assert.equal((await postFile(t.call, '/api/config/diff', shuffled)).body, { changes: [] });
});

test('after editing one rule and one interface the diff names exactly those paths; import applies them', async () => {
  const file = JSON.parse(await exportText(t.call));
  const rule = file.access_rules.find((r: any) => r.name === 'night-relay');
  rule.schedule.windows[0].start = '21:30';
  const mesh = file.interfaces.find((i: any) => i.name === 'mesh');
  mesh.transforms.outbound[1].max_bytes = 100;

  const before = checksum();
  const diff = await postFile(t.call, '/api/config/diff', file);
  assert.is(diff.status, 200, diff.text);
  assert.equal(diff.body.changes, [
    { path: 'interfaces[name=mesh].transforms.outbound[1].max_bytes', op: 'change', from: 120, to: 100 },
    { path: 'access_rules[name=night-relay].schedule.windows[0].start', op: 'change', from: '22:00', to: '21:30' },
  ]);
  assert.is(checksum(), before, 'diff changed nothing');

  const imported = await postFile(t.call, '/api/config/import', file);
  assert.is(imported.status, 200, imported.text);
  assert.equal(imported.body, { applied: true, changes: diff.body.changes });
  assert.is.not(checksum(), before);
  assert.is(withoutExportedAt(await exportText(t.call)), withoutExportedAt(serializeConfigFile(file)), 'the next export is the edited file');
  assert.equal((await postFile(t.call, '/api/config/diff', file)).body, { changes: [] });
});

test('adds, removes, a moved rule and a section field are reported with named paths', async () => {
  const file = JSON.parse(await exportText(t.call));
  file.radio.hop_limit = 6;
  file.contacts = file.contacts.filter((c: any) => c.name !== 'bob');
  file.object_groups.push({ name: 'relay', members: ['!0000abcd'] });
  file.access_rules.reverse();
  const before = checksum();
  const r = await postFile(t.call, '/api/config/diff', file);
  assert.is(r.status, 200, r.text);
  assert.equal(r.body.changes.map((c: any) => [c.op, c.path]), [
    ['change', 'radio.hop_limit'],
    ['change', 'access_rules.order'],
    ['add', 'object_groups[name=relay]'],
    ['remove', 'contacts[name=bob]'],
  ]);
  const order = r.body.changes.find((c: any) => c.path === 'access_rules.order');
  assert.equal(order.from, ['to-ann', 'night-relay', 'drop-spam', 'to-lab']);
  assert.equal(order.to, ['to-lab', 'drop-spam', 'night-relay', 'to-ann']);
  assert.is(checksum(), before);
});

test('secrets: the marker is no change; a secret in clear is always one, shown only as the marker', async () => {
  const file = JSON.parse(await exportText(t.call));
  assert.is(file.hub.password, REDACTION_MARKER);
  for (const password of ['s3cret', 'a guess']) {
    // Equal or not to the stored one: the same answer, so diff cannot confirm a guess.
    file.hub.password = password;
    const r = await postFile(t.call, '/api/config/diff', file);
    assert.equal(r.body.changes, [{ path: 'hub.password', op: 'change', from: REDACTION_MARKER, to: REDACTION_MARKER }], password);
    assert.not.match(r.text, password);
  }
  file.hub.password = null;
  assert.equal((await postFile(t.call, '/api/config/diff', file)).body.changes, [{ path: 'hub.password', op: 'change', from: REDACTION_MARKER, to: null }]);
});

test('diff refuses what import refuses, with the same paths, and changes nothing', async () => {
  const before = checksum();
  const file = JSON.parse(await exportText(t.call));
  file.interfaces[0].kind = 'zigbee';
  file.access_rules[0].destinations[0].interface = 'ghost';
  const r = await postFile(t.call, '/api/config/diff', file);
  assertProblem(r, 400, ['body.interfaces[0].kind', 'body.access_rules[0].destinations[0].interface']);
  assert.equal(errorPaths(r.body), ['body.access_rules[0].destinations[0].interface', 'body.interfaces[0].kind']);
  assert.match(r.body.detail, 'nothing was changed');
  const imported = await postFile(t.call, '/api/config/import', file);
  assert.equal(imported.body.errors, r.body.errors);

  for (const [body, path] of [['[]', 'body'], ['"fieldbridge-config"', 'body'], ['null', 'body'], ['{}', 'body.format']] as const) {
    assertProblem(await postFile(t.call, '/api/config/diff', body), 400, [path]);
  }
  const wrongVersion = await postFile(t.call, '/api/config/diff', { ...file, version: 2 });
  assert.equal(errorPaths(wrongVersion.body), ['body.version'], 'a wrong version stops before the rest is read');
  const wrongFormat = await postFile(t.call, '/api/config/diff', { ...file, format: 'meshtastic-config' });
  assert.equal(errorPaths(wrongFormat.body), ['body.format']);
  const badJson = await postFile(t.call, '/api/config/diff', '{"format": ');
  assertProblem(badJson, 400);
  assert.is(badJson.body.type, 'https://fieldbridge.dev/problems/bad-json');
  const text = await t.call('POST', '/api/config/diff', { rawBody: 'format=fieldbridge-config', headers: { 'content-type': 'text/plain' } });
  assertProblem(text, 415);
  const huge = await postFile(t.call, '/api/config/diff', `{"format":"${'x'.repeat(8 * 1024 * 1024)}"}`);
  assertProblem(huge, 413);
  assert.is(checksum(), before);
});

test('diff takes an owner or admin key; viewers and callers without a key are refused', async () => {
  const file = await exportText(t.call);
  assertProblem(await postFile(t.call, '/api/config/diff', file, viewerKey), 403);
  assertProblem(await postFile(t.call, '/api/config/diff', file, null), 401);
  const admin = (await ok(t.call, 'POST', '/api/auth/keys', { label: 'admin', role: 'admin' }, 201)).key;
  assert.is((await postFile(t.call, '/api/config/diff', file, admin)).status, 200);
});

test.run();
