import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { expectOk } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem } from '../../helpers/routing.ts';

// Groups and contacts the senders policy names (issue 17 review): renaming or deleting one is
// 409 in-use naming the policy, as for rules; a config import that drops one is refused too.

const clock = new FakeClock(Date.parse('2026-11-27T12:00:00.000Z'));
let t: TestBridge;
test.before(async () => {
  t = await startTestBridge({ clock });
});
test.after(async () => {
  await t.stop();
});

const ok = (method: string, path: string, body?: unknown) => expectOk(t.call, method, path, body);

test('a group on the blocklist and a contact on the allowlist cannot be renamed or deleted', async () => {
  await ok('POST', '/api/object-groups', { name: 'pranks', members: ['!0000bad2'] });
  await ok('POST', '/api/contacts', { name: 'team', addresses: { mesh: '!000000a1' } });
  await ok('PUT', '/api/senders/policy', { blocklist: ['@pranks'], allowlist: ['@team'] });
  const g = await ok('GET', '/api/object-groups/pranks');
  const c = await ok('GET', '/api/contacts/team');
  for (const [r, what] of [
    [await t.call('PUT', '/api/object-groups/pranks', { body: { ...g, name: 'jokes' } }), /object group 'pranks' cannot be renamed while the senders policy refers to it as @pranks in its blocklist/],
    [await t.call('DELETE', '/api/object-groups/pranks'), /object group 'pranks' cannot be deleted while the senders policy refers to it as @pranks in its blocklist/],
    [await t.call('PUT', '/api/contacts/team', { body: { ...c, name: 'crew' } }), /contact 'team' cannot be renamed while the senders policy refers to it as @team in its allowlist/],
    [await t.call('DELETE', '/api/contacts/team'), /contact 'team' cannot be deleted .* @team in its allowlist/],
  ] as const) {
    assertProblem(r, 409, [], what);
    assert.is(r.body.type, 'https://fieldbridge.dev/problems/in-use');
  }
  // Members may change; the policy is as it was.
  await ok('PUT', '/api/object-groups/pranks', { ...g, members: ['!0000bad3'] });
  assert.equal(await ok('GET', '/api/senders/policy'), { limits: [], blocklist: ['@pranks'], allowlist: ['@team'] });
});

test('a config import without a group the policy names is refused; nothing changes', async () => {
  const file = await ok('GET', '/api/config/export?secrets=include');
  // The file's own policy names a group the file lost: an error at its path.
  const own = await t.call('POST', '/api/config/import', { body: { ...file, object_groups: [] } });
  assertProblem(own, 400, ['body.senders.blocklist[0]'], /no object group or contact 'pranks' in this file/);
  // A file without a policy (an older export) keeps the stored one, which names the group.
  const { senders: _s, ...older } = file;
  const r = await t.call('POST', '/api/config/import', { body: { ...older, object_groups: [] } });
  assertProblem(r, 409, [], /the senders policy refers to @pranks, which the file does not have/);
  assert.is((await ok('GET', '/api/object-groups/pranks')).name, 'pranks');
  // With the group kept the same file imports.
  assert.is((await ok('POST', '/api/config/import', file)).applied, true);
  // Once the policy no longer names them they can go.
  await ok('PUT', '/api/senders/policy', { blocklist: [], allowlist: null });
  assert.is((await t.call('DELETE', '/api/object-groups/pranks')).status, 204);
  assert.is((await t.call('DELETE', '/api/contacts/team')).status, 204);
});

test.run();
