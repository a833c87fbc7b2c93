import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { configChecksum, errorPaths, exportText, furnish, postFile, SENDERS } from './files.ts';

// The senders policy travels in the configuration file: a restore from an export keeps the
// limits and the blocklist; a file of an older release (no `senders`) keeps the stored policy;
// a policy naming a group or contact the file does not have is refused with its path.

let a: TestBridge;
let b: TestBridge;
test.before(async () => {
  a = await startTestBridge();
  await furnish(a.call, 'senders-a');
  b = await startTestBridge();
});
test.after(async () => {
  await a?.stop();
  await b?.stop();
});

const policy = async (t: TestBridge) => (await t.call('GET', '/api/senders/policy')).body;

test('the export carries the senders policy, and an import into a fresh bridge restores it', async () => {
  const file = JSON.parse(await exportText(a.call, '?secrets=include'));
  assert.equal(file.senders, SENDERS);
  assert.equal(Object.keys(file).slice(-2), ['contacts', 'senders'], 'written last: it names the groups and contacts above it');
  const imported = await postFile(b.call, '/api/config/import', file);
  assert.is(imported.status, 200, imported.text);
  assert.ok(imported.body.changes.some((c: any) => c.path.startsWith('senders.')), JSON.stringify(imported.body.changes));
  assert.equal(await policy(b), SENDERS);
});

test('a file without senders (an older release\'s) keeps the stored policy and shows no change for it', async () => {
  const { senders: _s, ...older } = JSON.parse(await exportText(b.call));
  const diff = await postFile(b.call, '/api/config/diff', older);
  assert.is(diff.status, 200, diff.text);
  assert.equal(diff.body.changes, []);
  assert.is((await postFile(b.call, '/api/config/import', older)).status, 200);
  assert.equal(await policy(b), SENDERS);
});

test('a policy naming a group or contact the file does not have is refused at its path; nothing changes', async () => {
  const file = JSON.parse(await exportText(b.call, '?secrets=include'));
  const before = configChecksum(b.bridge.services.db);
  file.senders = { ...file.senders, blocklist: ['@nobody'], limits: [{ kinds: ['sms'], per_hour: 0, burst: 1 }] };
  const refused = await postFile(b.call, '/api/config/import', file);
  assert.is(refused.status, 400, refused.text);
  assert.equal(errorPaths(refused.body), ['body.senders.blocklist[0]', 'body.senders.limits[0].per_hour']);
  assert.is(configChecksum(b.bridge.services.db), before);
  assert.equal(await policy(b), SENDERS);
});

test.run();
