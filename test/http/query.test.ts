import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isoTimeQuery, NO_QUERY } from '../../src/http/query.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';
import { assertProblem, createRule, createSim } from '../helpers/routing.ts';

// Query parameters (src/http/query.ts, issue 14): a route reads only the parameters its query
// schema names, and refuses every other one with 400, so a typo (`?befor=`) or a parameter
// this route does not have (`?limit=` on a list that is not paged) never passes unnoticed.

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
});
test.after(async () => {
  await t.stop();
});

test('a route without query parameters refuses any, naming them, and does nothing', async () => {
  const ifc = await createSim(t.call, 'q-sim');
  const rule = await createRule(t.call, 'q-rule');
  const refused: Array<[string, string, RegExp]> = [
    ['POST', '/api/interfaces/q-sim/disable?force=1', /takes no query parameters; got "force"/],
    ['DELETE', `/api/access-rules/${rule.id}?cascade=true`, /takes no query parameters; got "cascade"/],
    ['DELETE', `/api/interfaces/${ifc.id}?x=1&y=2`, /unknown query parameter "x", "y"; this endpoint takes "cascade"/],
    ['GET', '/api/health?verbose=1', /takes no query parameters/],
    ['GET', '/api/deliveries/stats?state=dead', /takes no query parameters/],
  ];
  for (const [method, path, detail] of refused) assertProblem(await t.call(method, path), 400, ['query'], detail);
  assert.is((await t.call('GET', '/api/interfaces/q-sim')).body.enabled, true, 'the refused disable changed nothing');
  assert.is((await t.call('GET', `/api/access-rules/${rule.id}`)).status, 200, 'the refused delete deleted nothing');
  assert.is((await t.call('GET', `/api/interfaces/${ifc.id}`)).status, 200);
});

test('the small collections are not paged: ?limit= and ?cursor= are refused with a reason', async () => {
  for (const base of ['/api/interfaces', '/api/access-rules', '/api/contacts', '/api/object-groups']) {
    assert.is((await t.call('GET', base)).status, 200);
    for (const q of ['limit=5', 'cursor=abc']) assertProblem(await t.call('GET', `${base}?${q}`), 400, ['query'], /not paged: it answers every item/);
  }
});

test('isoTimeQuery: a plain date is midnight UTC, an offset or missing milliseconds are normalised', () => {
  const s = isoTimeQuery('since');
  assert.is(s.parse('2026-11-22'), '2026-11-22T00:00:00.000Z');
  assert.is(s.parse('2026-11-22T08:00:00Z'), '2026-11-22T08:00:00.000Z');
  assert.is(s.parse('2026-11-22T09:30:00+01:00'), '2026-11-22T08:30:00.000Z');
  assert.is(s.parse('2026-11-22T08:00:00.123Z'), '2026-11-22T08:00:00.123Z');
  for (const bad of ['yesterday', '2026-02-30', '2026-11-22T24:00:00Z', '22.11.2026', '']) {
    const r = s.safeParse(bad);
    assert.not.ok(r.success, bad);
    assert.match(r.error!.issues[0].message, /since must be a date such as 2026-11-22 \(midnight UTC\) or a time such as 2026-11-22T08:00:00Z/);
  }
  assert.ok(NO_QUERY.safeParse({}).success);
});

test.run();
