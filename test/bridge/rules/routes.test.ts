import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createRule, createSim, ruleBody, sendText } from '../../helpers/routing.ts';

// Bad input on /api/access-rules (issue 4): a filter, schedule or reference that does not
// validate is a 400 naming the field, so a rule never silently matches everything; and
// schedules decide on the bridge's clock (a FakeClock here).

// Monday 2026-01-05 10:00 UTC.
const clock = new FakeClock(Date.parse('2026-01-05T10:00:00.000Z'));
let t: TestBridge;
test.before(async () => {
  t = await startTestBridge({ clock });
  await createSim(t.call, 'out');
});
test.after(async () => {
  await t.stop();
});

const count = async () => (await t.call('GET', '/api/access-rules')).body.items.length;

test('unknown rule ids answer 404 on every endpoint', async () => {
  const calls: Array<[string, string, unknown?]> = [
    ['GET', '/api/access-rules/rul_nope'],
    ['PUT', '/api/access-rules/rul_nope', ruleBody('x')],
    ['DELETE', '/api/access-rules/rul_nope'],
    ['POST', '/api/access-rules/rul_nope/enable'],
    ['POST', '/api/access-rules/rul_nope/disable'],
    ['GET', '/api/access-rules/rul_nope/stats'],
  ];
  for (const [method, path, b] of calls) assertProblem(await t.call(method, path, b === undefined ? {} : { body: b }), 404, [], /does not exist/);
});

test('invalid filters are refused with 400 naming the field', async () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ direction: 'sideways' }, 'body.match.direction'],
    [{ from: [] }, 'body.match.from'],
    [{ to: [] }, 'body.match.to'],
    [{ interfaces: [] }, 'body.match.interfaces'],
    [{ kinds: [] }, 'body.match.kinds'],
    [{ kinds: ['smoke-signal'] }, 'body.match.kinds[0]'],
    [{ channel: [256] }, 'body.match.channel[0]'],
    [{ channel: [1.5] }, 'body.match.channel[0]'],
    [{ from: [''] }, 'body.match.from[0]'],
    [{ text: {} }, 'body.match.text'],
    [{ text: { contains: '' } }, 'body.match.text.contains'],
    [{ text: { regex: '(' } }, 'body.match.text.regex'],
    [{ text: { regex: '(?=sos)' } }, 'body.match.text.regex'],
    [{ text: { regex: 'x'.repeat(201) } }, 'body.match.text.regex'],
    [{ form: ['!a1b2c3d4'] }, 'body.match'],
  ];
  for (const [match, path] of cases) assertProblem(await t.call('POST', '/api/access-rules', { body: ruleBody('bad-filter', { match }) }), 400, [path]);
  assertProblem(await t.call('POST', '/api/access-rules', { body: ruleBody('match-list', { match: [] }) }), 400, ['body.match'], /match must be an object of filters such as/);
  assert.is(await count(), 0, 'nothing was created');
});

test('invalid actions and destinations are refused with 400 naming the field', async () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ action: 'teleport' }, 'body.action'],
    [{ action: 'forward' }, 'body.destinations'],
    [{ action: 'forward', destinations: [] }, 'body.destinations'],
    [{ action: 'drop', destinations: [{ interface: 'out', to: 'x' }] }, 'body.destinations'],
    [{ action: 'forward', destinations: [{ interface: 'out' }] }, 'body.destinations[0].to'],
    [{ action: 'forward', destinations: [{ interface: '', to: 'x' }] }, 'body.destinations[0].interface'],
    [{ name: 'Bad Name' }, 'body.name'],
    [{ enabled: 'no' }, 'body.enabled'],
    [{ priority: 1 }, 'body'],
  ];
  for (const [extra, path] of cases) assertProblem(await t.call('POST', '/api/access-rules', { body: ruleBody('bad-action', extra) }), 400, [path]);
  assert.is(await count(), 0);
});

test('invalid schedules are refused with 400 naming the field', async () => {
  const windows = [{ days: ['mon'], start: '09:00', end: '17:00' }];
  const cases: Array<[unknown, string]> = [
    [{ timezone: 'Mars/Olympus', windows }, 'body.schedule.timezone'],
    [{ timezone: '+01:00', windows }, 'body.schedule.timezone'],
    [{ windows }, 'body.schedule.timezone'],
    [{ timezone: 'UTC', windows: [] }, 'body.schedule.windows'],
    [{ timezone: 'UTC', windows: [{ days: [], start: '09:00', end: '17:00' }] }, 'body.schedule.windows[0].days'],
    [{ timezone: 'UTC', windows: [{ days: ['funday'], start: '09:00', end: '17:00' }] }, 'body.schedule.windows[0].days[0]'],
    [{ timezone: 'UTC', windows: [{ days: ['mon'], start: '24:00', end: '17:00' }] }, 'body.schedule.windows[0].start'],
    [{ timezone: 'UTC', windows: [{ days: ['mon'], start: '09:00', end: '5pm' }] }, 'body.schedule.windows[0].end'],
    [{ timezone: 'UTC', windows, active_from: 'tomorrow' }, 'body.schedule.active_from'],
    [{ timezone: 'UTC', windows, active_from: '2026-05-01T00:00:00Z', active_until: '2026-04-01T00:00:00Z' }, 'body.schedule.active_until'],
    [{ timezone: 'UTC', windows, every: 'day' }, 'body.schedule'],
  ];
  for (const [schedule, path] of cases) assertProblem(await t.call('POST', '/api/access-rules', { body: ruleBody('bad-schedule', { schedule }) }), 400, [path]);
  // Not an object: the message says what is expected, in words (issue 14).
  for (const schedule of ['always', 1, []]) {
    assertProblem(await t.call('POST', '/api/access-rules', { body: ruleBody('bad-schedule', { schedule }) }), 400, ['body.schedule'], /schedule must be an object \{timezone, windows\}, or null for always/);
  }
  assert.is(await count(), 0);
});

test('the smallest rule is a name and an action: match defaults to {} and schedule to null', async () => {
  const r = await t.call('POST', '/api/access-rules', { body: { name: 'x', action: 'store' } });
  assert.is(r.status, 201, r.text);
  assert.equal([r.body.match, r.body.schedule, r.body.destinations, r.body.enabled], [{}, null, [], true]);
  assert.is((await sendText(t.call, '!anyone00')).message.decision.rule_id, r.body.id, 'an empty match matches everything');
  // What is missing is named in words, not as "expected string, received undefined".
  const empty = await t.call('POST', '/api/access-rules', { body: {} });
  assertProblem(empty, 400, ['body.name', 'body.action']);
  for (const e of empty.body.errors) assert.not.match(e.message, /received undefined/, e.message);
  assert.match(empty.body.errors.find((e: any) => e.path === 'body.name').message, /name is required/);
  await t.call('DELETE', `/api/access-rules/${r.body.id}`);
});

test('references to missing interfaces, groups or contacts are refused with 400 naming the field', async () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ match: { interfaces: ['ghost'] } }, 'body.match.interfaces[0]'],
    [{ match: { from: ['@nobody'] } }, 'body.match.from[0]'],
    [{ match: { to: ['!a1b2c3d4', '@nobody'] } }, 'body.match.to[1]'],
    [{ action: 'forward', destinations: [{ interface: 'ghost', to: 'x' }] }, 'body.destinations[0].interface'],
    [{ action: 'forward', destinations: [{ interface: 'out', to: '@nobody' }] }, 'body.destinations[0].to'],
  ];
  for (const [extra, path] of cases) assertProblem(await t.call('POST', '/api/access-rules', { body: ruleBody('bad-ref', extra) }), 400, [path]);
  assert.is(await count(), 0);
});

test('name clashes answer 409; PUT needs every field and keeps position and enabled', async () => {
  const a = await createRule(t.call, 'alpha');
  const b = await createRule(t.call, 'beta');
  assertProblem(await t.call('POST', '/api/access-rules', { body: ruleBody('alpha') }), 409, [], /already exists/);
  assertProblem(await t.call('PUT', `/api/access-rules/${b.id}`, { body: { ...ruleBody('alpha'), enabled: undefined } }), 409, [], /already exists/);
  const full = { name: 'beta', match: { direction: 'outbound' }, schedule: null, action: 'store' };
  for (const field of ['name', 'match', 'schedule', 'action']) {
    const { [field]: _gone, ...partial } = full as Record<string, unknown>;
    assertProblem(await t.call('PUT', `/api/access-rules/${b.id}`, { body: partial }), 400, [`body.${field}`]);
  }
  for (const [extra, path] of [[{ enabled: false }, 'body.enabled'], [{ priority: 1 }, 'body.priority']] as const) {
    assertProblem(await t.call('PUT', `/api/access-rules/${b.id}`, { body: { ...full, ...extra } }), 400, [path], /read-only/);
  }
  await t.call('POST', `/api/access-rules/${b.id}/disable`);
  const put = await t.call('PUT', `/api/access-rules/beta`, { body: { ...full, name: 'beta-2', action: 'drop' } });
  assert.is(put.status, 200, put.text);
  assert.is(put.body.priority, 2, 'position kept');
  assert.is(put.body.enabled, false, 'enabled flag kept');
  assert.is(put.body.action, 'drop');
  await t.call('DELETE', `/api/access-rules/${a.id}`);
  await t.call('DELETE', `/api/access-rules/${b.id}`);
});

test('GET -> edit -> PUT and PATCH (merge patch): read-only fields must equal the stored ones; state moves only through its endpoints', async () => {
  const windows = [{ days: ['mon'], start: '09:00', end: '17:00' }];
  await createRule(t.call, 'first');
  const made = await createRule(t.call, 'trip', { match: { direction: 'outbound', to: ['!trip0000'] }, action: 'forward', destinations: [{ interface: 'out', to: '{to}' }] });
  const got = (await t.call('GET', '/api/access-rules/trip')).body;
  const put = await t.call('PUT', `/api/access-rules/${got.id}`, { body: { ...got, action: 'forward', precedence: 'flash', schedule: { timezone: 'UTC', windows } } });
  assert.is(put.status, 200, put.text);
  assert.equal([put.body.precedence, put.body.schedule.timezone, put.body.priority, put.body.destinations], ['flash', 'UTC', 2, got.destinations]);
  const moved = await t.call('PUT', '/api/access-rules/trip', { body: { ...put.body, id: 'rul_01M7Z549TJYPE8EFFRTHXNMDB9', enabled: false, priority: 1, created_at: '2020-01-01T00:00:00Z' } });
  assertProblem(moved, 400, ['body.id', 'body.enabled', 'body.priority', 'body.created_at']);
  assert.match(moved.body.errors.find((e: any) => e.path === 'body.priority').message, /reorder/);

  const merge = { 'content-type': 'application/merge-patch+json' };
  const p = await t.call('PATCH', '/api/access-rules/trip', { body: { name: 'trip-2', match: { kinds: ['text'] } }, headers: merge });
  assert.is(p.status, 200, p.text);
  assert.equal([p.body.name, p.body.match, p.body.action, p.body.precedence, p.body.schedule.timezone], ['trip-2', { direction: 'outbound', to: ['!trip0000'], kinds: ['text'] }, 'forward', 'flash', 'UTC']);
  // null removes: a schedule and a precedence removed are null (always; routine), a filter removed matches everything.
  const cleared = await t.call('PATCH', `/api/access-rules/${made.id}`, { body: { schedule: null, precedence: null, match: { to: null } } });
  assert.is(cleared.status, 200, cleared.text);
  assert.equal([cleared.body.schedule, cleared.body.precedence, cleared.body.match], [null, null, { direction: 'outbound', kinds: ['text'] }]);
  // The merged rule is checked like a PUT: action drop with destinations left is refused.
  assertProblem(await t.call('PATCH', '/api/access-rules/trip-2', { body: { action: 'drop' }, headers: merge }), 400, ['body.destinations']);
  assert.is((await t.call('PATCH', '/api/access-rules/trip-2', { body: { action: 'drop', destinations: null }, headers: merge })).body.action, 'drop');
  assertProblem(await t.call('PATCH', '/api/access-rules/trip-2', { body: { enabled: false, priority: 1 }, headers: merge }), 400, ['body.enabled', 'body.priority']);
  assertProblem(await t.call('PATCH', '/api/access-rules/trip-2', { body: { match: { kinds: ['smoke'] } }, headers: merge }), 400, ['body.match.kinds[0]']);
  const after = (await t.call('GET', '/api/access-rules/trip-2')).body;
  assert.equal([after.enabled, after.priority, after.action], [true, 2, 'drop'], 'refused patches changed nothing');
  for (const name of ['first', 'trip-2']) await t.call('DELETE', `/api/access-rules/${name}`);
});

test('reorder must list every rule exactly once: 400 naming missing, repeated and unknown ids', async () => {
  const r1 = await createRule(t.call, 'one');
  const r2 = await createRule(t.call, 'two');
  const r3 = await createRule(t.call, 'three');
  const missing = await t.call('POST', '/api/access-rules/reorder', { body: { order: [r3.id, r1.id] } });
  assertProblem(missing, 400, ['body.order']);
  assert.match(missing.body.detail, new RegExp(`missing: ${r2.id} \\(two\\)`));
  const repeated = await t.call('POST', '/api/access-rules/reorder', { body: { order: [r1.id, r2.id, r3.id, 'one'] } });
  assertProblem(repeated, 400, ['body.order[3]'], /listed twice/);
  const unknown = await t.call('POST', '/api/access-rules/reorder', { body: { order: [r1.id, r2.id, r3.id, 'rul_ghost'] } });
  assertProblem(unknown, 400, ['body.order[3]'], /rul_ghost/);
  assertProblem(await t.call('POST', '/api/access-rules/reorder', { body: { order: 'one,two' } }), 400, ['body.order']);
  assertProblem(await t.call('POST', '/api/access-rules/reorder', { body: {} }), 400, ['body.order']);
  const order = (await t.call('GET', '/api/access-rules')).body.items.map((r: any) => r.id);
  assert.equal(order, [r1.id, r2.id, r3.id], 'refused reorders changed nothing');
  // Names work as well as ids.
  const ok = await t.call('POST', '/api/access-rules/reorder', { body: { order: ['three', 'one', 'two'] } });
  assert.is(ok.status, 200, ok.text);
  assert.equal(ok.body.items.map((r: any) => r.id), [r3.id, r1.id, r2.id]);
  for (const r of [r1, r2, r3]) await t.call('DELETE', `/api/access-rules/${r.id}`);
});

test('a rule whose schedule is inactive is skipped; it fires inside its window (FakeClock)', async () => {
  // Weekdays 18:00-08:00 in Berlin (UTC+1 in January): a night window across midnight.
  const night = await createRule(t.call, 'night-only', {
    match: { direction: 'outbound', to: ['!night000'] }, action: 'drop',
    schedule: { timezone: 'Europe/Berlin', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '18:00', end: '08:00' }] },
  });
  const fallback = await createRule(t.call, 'fallback', { match: { direction: 'outbound', to: ['!night000'] } });
  let sent = await sendText(t.call, '!night000');
  assert.is(sent.message.decision.rule_id, fallback.id, 'Monday 11:00 Berlin: off schedule, skipped');
  assert.is(sent.message.action, 'store');

  clock.advance(8 * 3600_000); // Monday 18:00 UTC = 19:00 Berlin
  sent = await sendText(t.call, '!night000');
  assert.is(sent.message.decision.rule_id, night.id, 'inside the window');
  assert.is(sent.message.action, 'drop');

  clock.advance(13 * 3600_000); // Tuesday 07:00 UTC = 08:00 Berlin: the window has just closed
  sent = await sendText(t.call, '!night000');
  assert.is(sent.message.decision.rule_id, fallback.id);

  // active_until in the past: never fires again, and the reason says why when nothing else decides.
  await t.call('DELETE', `/api/access-rules/${fallback.id}`);
  const put = await t.call('PUT', `/api/access-rules/${night.id}`, { body: {
    name: 'night-only', match: { direction: 'outbound', to: ['!night000'] }, action: 'drop',
    schedule: { timezone: 'UTC', windows: [{ days: ['tue'], start: '00:00', end: '00:00' }], active_until: '2026-01-06T06:00:00Z' },
  } });
  assert.is(put.status, 200, put.text);
  sent = await sendText(t.call, '!night000');
  assert.is(sent.message.decision.rule_id, null);
  assert.match(sent.message.decision.reason, /rule 'night-only' matched but is off schedule: schedule ended at active_until/);
  assert.is((await t.call('GET', `/api/access-rules/${night.id}/stats`)).body.fired, 1);
  await t.call('DELETE', `/api/access-rules/${night.id}`);
});

test('the rule list is in evaluation order and a deleted rule is gone from it', async () => {
  const x = await createRule(t.call, 'x-rule');
  const y = await createRule(t.call, 'y-rule');
  assert.is((await t.call('DELETE', `/api/access-rules/${x.id}`)).status, 204);
  assertProblem(await t.call('DELETE', `/api/access-rules/${x.id}`), 404);
  const items = (await t.call('GET', '/api/access-rules')).body.items;
  assert.equal(items.map((r: any) => [r.id, r.priority]), [[y.id, 1]]);
});

test.run();
