import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createRule, createSim } from '../../helpers/routing.ts';

// Bad input on /api/contacts and /api/object-groups (issue 4): both are "@name" books that
// rules refer to, so one that is in use cannot be deleted or renamed (409 naming the rules).

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
  await createSim(t.call, 'out');
});
test.after(async () => {
  await t.stop();
});

const books = [
  { base: '/api/contacts', field: 'addresses', good: { mesh: '!a1b2c3d4', sms: '+4917012345678' } },
  { base: '/api/object-groups', field: 'members', good: ['!a1b2c3d4', '!b2c3d4e5'] },
] as const;

test('unknown ids answer 404 on every endpoint of both books', async () => {
  for (const { base, field, good } of books) {
    assertProblem(await t.call('GET', `${base}/nope`), 404);
    assertProblem(await t.call('PUT', `${base}/nope`, { body: { name: 'nope', [field]: good } }), 404);
    assertProblem(await t.call('DELETE', `${base}/nope`), 404);
  }
});

test('bad bodies are refused with 400 naming the field, and nothing is created', async () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['/api/contacts', { name: 'Bad Name', addresses: { mesh: '!a' } }, 'body.name'],
    ['/api/contacts', { name: 'ann', addresses: {} }, 'body.addresses'],
    ['/api/contacts', { name: 'ann', addresses: { sms: 'call me' } }, 'body.addresses.sms'],
    ['/api/contacts', { name: 'ann', addresses: { pager: '123' } }, 'body.addresses'],
    ['/api/contacts', { name: 'ann' }, 'body.addresses'],
    ['/api/object-groups', { name: 'team', members: [] }, 'body.members'],
    ['/api/object-groups', { name: 'team', members: [''] }, 'body.members[0]'],
    ['/api/object-groups', { name: 'team', members: 'all' }, 'body.members'],
    ['/api/object-groups', { members: ['!a'] }, 'body.name'],
  ];
  for (const [base, body, path] of cases) assertProblem(await t.call('POST', base, { body }), 400, [path]);
  for (const { base } of books) assert.equal((await t.call('GET', base)).body.items, []);
});

test('PUT needs every field (400 naming the missing one)', async () => {
  for (const { base, field, good } of books) {
    const made = await t.call('POST', base, { body: { name: 'put-target', [field]: good } });
    assert.is(made.status, 201, made.text);
    assertProblem(await t.call('PUT', `${base}/${made.body.id}`, { body: { name: 'put-target' } }), 400, [`body.${field}`]);
    assertProblem(await t.call('PUT', `${base}/${made.body.id}`, { body: { [field]: good } }), 400, ['body.name']);
    assert.is((await t.call('DELETE', `${base}/${made.body.id}`)).status, 204);
  }
});

test('"@name" means one thing: a name taken in either book answers 409', async () => {
  assert.is((await t.call('POST', '/api/contacts', { body: { name: 'ops', addresses: { mesh: '!0000a0a0' } } })).status, 201);
  assertProblem(await t.call('POST', '/api/contacts', { body: { name: 'ops', addresses: { mesh: '!0000b0b0' } } }), 409, [], /already used/);
  assertProblem(await t.call('POST', '/api/object-groups', { body: { name: 'ops', members: ['!0000c0c0'] } }), 409, [], /already used/);
  assert.is((await t.call('POST', '/api/object-groups', { body: { name: 'crew', members: ['!0000d0d0'] } })).status, 201);
  assertProblem(await t.call('PUT', '/api/object-groups/crew', { body: { name: 'ops', members: ['!0000d0d0'] } }), 409, [], /already used/);
  assert.is((await t.call('GET', '/api/object-groups/crew')).body.name, 'crew');
});

test('deleting or renaming a group or contact a rule uses answers 409 naming the rule', async () => {
  const byGroup = await createRule(t.call, 'from-crew', { match: { from: ['@crew'] } });
  const byContact = await createRule(t.call, 'to-ops', { action: 'forward', destinations: [{ interface: 'out', to: '@ops' }] });
  for (const [path, rule] of [['/api/object-groups/crew', byGroup], ['/api/contacts/ops', byContact]] as const) {
    const del = await t.call('DELETE', path);
    assertProblem(del, 409, []);
    assert.match(del.body.detail, new RegExp(`'${rule.name}' \\(${rule.id}\\)`));
    assert.is((await t.call('GET', path)).status, 200, 'still there');
  }
  const rename = await t.call('PUT', '/api/object-groups/crew', { body: { name: 'crew-2', members: ['!0000d0d0'] } });
  assertProblem(rename, 409, [], /from-crew/);
  // Changing the members keeps the name, so rules keep working: allowed.
  const members = await t.call('PUT', '/api/object-groups/crew', { body: { name: 'crew', members: ['!0000d0d0', '!0000e0e0'] } });
  assert.is(members.status, 200, members.text);
  // Once no rule uses it, it can go.
  assert.is((await t.call('DELETE', `/api/access-rules/${byGroup.id}`)).status, 204);
  assert.is((await t.call('DELETE', '/api/object-groups/crew')).status, 204);
  assert.is((await t.call('PUT', `/api/access-rules/${byContact.id}`, { body: { name: 'to-ops', match: {}, schedule: null, action: 'store' } })).status, 200);
  assert.is((await t.call('DELETE', '/api/contacts/ops')).status, 204, 'a rule edited to no longer use it frees it');
});

test.run();
