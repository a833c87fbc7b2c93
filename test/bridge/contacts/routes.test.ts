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

test('GET -> edit -> PUT and PATCH (merge patch) on both books; read-only fields must equal the stored ones', async () => {
  const merge = { 'content-type': 'application/merge-patch+json' };
  const ann = (await t.call('POST', '/api/contacts', { body: { name: 'trip-ann', addresses: { mesh: '!a1b2c3d4', sms: '+4917012345678' }, prefer: ['sms', 'mesh'] } })).body;
  const got = (await t.call('GET', `/api/contacts/${ann.id}`)).body;
  const put = await t.call('PUT', '/api/contacts/trip-ann', { body: { ...got, addresses: { ...got.addresses, iridium: 'RB0001234' } } });
  assert.is(put.status, 200, put.text);
  assert.equal(put.body.prefer, ['sms', 'mesh', 'iridium']);
  assertProblem(await t.call('PUT', '/api/contacts/trip-ann', { body: { ...put.body, id: 'ctc_01M7Z549TJYPE8EFFRTHXNMDB9', created_at: '2020-01-01T00:00:00Z' } }), 400, ['body.id', 'body.created_at']);
  // null removes an address; the order of the others stays.
  const p = await t.call('PATCH', '/api/contacts/trip-ann', { body: { addresses: { sms: null } }, headers: merge });
  assert.is(p.status, 200, p.text);
  assert.equal([p.body.addresses, p.body.prefer], [{ mesh: '!a1b2c3d4', iridium: 'RB0001234' }, ['mesh', 'iridium']]);
  assertProblem(await t.call('PATCH', '/api/contacts/trip-ann', { body: { addresses: { mesh: null, iridium: null } }, headers: merge }), 400, ['body.addresses']);
  assertProblem(await t.call('PATCH', '/api/contacts/trip-ann', { body: { updated_at: '2020-01-01T00:00:00Z' } }), 400, ['body.updated_at']);

  const team = (await t.call('POST', '/api/object-groups', { body: { name: 'trip-team', members: ['!a1b2c3d4'] } })).body;
  const g = (await t.call('GET', `/api/object-groups/${team.id}`)).body;
  const gput = await t.call('PUT', `/api/object-groups/${team.id}`, { body: { ...g, members: [...g.members, '!b2c3d4e5'] } });
  assert.is(gput.status, 200, gput.text);
  assert.equal(gput.body.members, ['!a1b2c3d4', '!b2c3d4e5']);
  // A merge patch replaces an array whole (RFC 7396 has no array edits).
  const gp = await t.call('PATCH', '/api/object-groups/trip-team', { body: { members: ['!c3d4e5f6'], name: 'trip-crew' }, headers: merge });
  assert.is(gp.status, 200, gp.text);
  assert.equal([gp.body.name, gp.body.members], ['trip-crew', ['!c3d4e5f6']]);
  assertProblem(await t.call('PATCH', '/api/object-groups/trip-crew', { body: { members: [] }, headers: merge }), 400, ['body.members']);
  assertProblem(await t.call('PATCH', '/api/object-groups/nope', { body: { members: ['!a'] }, headers: merge }), 404);
  for (const path of ['/api/contacts/trip-ann', '/api/object-groups/trip-crew']) assert.is((await t.call('DELETE', path)).status, 204);
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
