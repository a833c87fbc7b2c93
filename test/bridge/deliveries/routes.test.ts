import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createRule, createSim, sendText, settle } from '../../helpers/routing.ts';

// /api/deliveries (docs/api.md 4.7, issue 4): every state is reachable and counted, retry and cancel
// answer 409 in the wrong state, filters and pagination refuse bad input.

const clock = new FakeClock(Date.parse('2026-04-06T08:00:00.000Z'));
let t: TestBridge;
test.before(async () => {
  t = await startTestBridge({ clock });
});
test.after(async () => {
  await t.stop();
});

const STATES = ['pending', 'sending', 'retrying', 'delivered', 'dead', 'cancelled', 'expired'];
const get = async (id: string) => (await t.call('GET', `/api/deliveries/${id}`)).body;

/** One interface and one rule per case, so each delivery lands where its state is made. */
async function deliveryVia(name: string, iface: Record<string, unknown>): Promise<string> {
  await createSim(t.call, name, { device: `sim://dlv-${name}`, ...iface });
  await createRule(t.call, `to-${name}`, { match: { direction: 'outbound', to: [`!${name}`] }, action: 'forward', destinations: [{ interface: name, to: '{to}' }] });
  const sent = await sendText(t.call, `!${name}`);
  await settle();
  return sent.deliveries[0].id;
}

test('stats lists every state with zeros on a fresh bridge', async () => {
  const stats = (await t.call('GET', '/api/deliveries/stats')).body;
  assert.equal(Object.keys(stats).sort(), [...STATES].sort());
  assert.ok(Object.values(stats).every((n) => n === 0));
});

test('unknown ids: 404 for one delivery, retry and cancel; a message without deliveries lists none', async () => {
  for (const [method, path] of [['GET', '/api/deliveries/dlv_nope'], ['POST', '/api/deliveries/dlv_nope/retry'], ['POST', '/api/deliveries/dlv_nope/cancel']]) {
    assertProblem(await t.call(method, path), 404, [], /does not exist/);
  }
  const r = await t.call('GET', '/api/deliveries/message/msg_nope');
  assert.is(r.status, 200);
  assert.equal(r.body.items, []);
});

test('every state is reached and counted; retry and cancel answer 409 in the wrong state', async () => {
  const ids: Record<string, string> = {
    delivered: await deliveryVia('ok', {}),
    dead: await deliveryVia('dead', { settings: { behaviour: 'fail' }, retry: { max_attempts: 1 } }),
    retrying: await deliveryVia('flaky', { settings: { behaviour: 'fail' }, retry: { base_s: 3600, cap_s: 3600 } }),
    sending: await deliveryVia('slow', { settings: { latency_ms: 60_000 } }),
    pending: await deliveryVia('parked', { enabled: false }),
    cancelled: await deliveryVia('parked-2', { enabled: false }),
    expired: await deliveryVia('stale', { enabled: false, retry: { ttl_s: 30 } }),
  };
  assert.is((await t.call('POST', `/api/deliveries/${ids.cancelled}/cancel`)).status, 200);
  clock.advance(31_000);
  await settle();
  for (const [state, id] of Object.entries(ids)) assert.is((await get(id)).state, state, `${state}: ${JSON.stringify(await get(id))}`);
  const stats = (await t.call('GET', '/api/deliveries/stats')).body;
  for (const s of STATES) assert.is(stats[s], 1, `stats.${s}: ${JSON.stringify(stats)}`);
  assert.match((await get(ids.expired)).last_error, /TTL/);
  assert.match((await get(ids.dead)).last_error, /simulated failure/);

  const refused: Array<[string, string]> = [
    ['retry', 'delivered'], ['retry', 'cancelled'], ['retry', 'expired'], ['retry', 'sending'],
    ['cancel', 'delivered'], ['cancel', 'cancelled'], ['cancel', 'expired'], ['cancel', 'dead'], ['cancel', 'sending'],
  ];
  for (const [action, state] of refused) {
    const r = await t.call('POST', `/api/deliveries/${ids[state]}/${action}`);
    assertProblem(r, 409, [], new RegExp(`is ${state}`));
    assert.is((await get(ids[state])).state, state, `${action} on ${state} changed nothing`);
  }

  // The accepted moves: retry pending (front of the queue), retrying and dead; cancel pending and retrying.
  const pendingRetry = await t.call('POST', `/api/deliveries/${ids.pending}/retry`);
  assert.is(pendingRetry.status, 200);
  assert.is(pendingRetry.body.state, 'pending', 'still waits for its disabled interface');
  assert.is(pendingRetry.body.attempts, 0);
  const before = await get(ids.retrying);
  assert.ok(Date.parse(before.next_attempt_at) > clock.now(), 'waiting out its backoff');
  await t.call('POST', `/api/deliveries/${ids.retrying}/retry`);
  await settle();
  const after = await get(ids.retrying);
  assert.is(after.attempts, before.attempts + 1, 'attempted at once, without moving the clock');
  const deadRetry = await t.call('POST', `/api/deliveries/${ids.dead}/retry`);
  assert.is(deadRetry.status, 200);
  await settle();
  assert.is((await get(ids.dead)).attempts, 2, 'a dead letter gets one more attempt');
  assert.is((await get(ids.dead)).state, 'dead');
  const cancel = await t.call('POST', `/api/deliveries/${ids.retrying}/cancel`);
  assert.is(cancel.status, 200);
  assert.is(cancel.body.state, 'cancelled');
  clock.advance(4 * 3600_000);
  await settle();
  assert.is((await get(ids.retrying)).attempts, after.attempts, 'no attempts after cancel');
});

test('filters: state, interface, message; bad values are 400 naming the parameter', async () => {
  const list = async (q: string) => (await t.call('GET', `/api/deliveries?${q}`)).body.items;
  assert.is((await list('state=dead')).length, 1);
  assert.ok((await list('state=cancelled')).every((d: any) => d.state === 'cancelled'));
  const ok = (await t.call('GET', '/api/interfaces/ok')).body;
  assert.ok((await list('interface=ok')).every((d: any) => d.interface_id === ok.id));
  assert.is((await list(`interface=${ok.id}`)).length, 1);
  const one = (await list('interface=ok'))[0];
  assert.equal((await list(`message=${one.message_id}`)).map((d: any) => d.id), [one.id]);
  assert.equal((await list('message=msg_nope')), []);
  const bad: Array<[string, string]> = [
    ['state=lost', 'query.state'],
    ['interface=ghost', 'query.interface'],
    ['limit=0', 'query.limit'],
    ['limit=abc', 'query.limit'],
    ['cursor=%%%', 'query.cursor'],
    ['sort=asc', 'query'],
  ];
  for (const [q, path] of bad) assertProblem(await t.call('GET', `/api/deliveries?${q}`), 400, [path]);
});

test('pagination walks every delivery once, newest first, with a Link header', async () => {
  const total = (await t.call('GET', '/api/deliveries?limit=1000')).body.items.map((d: any) => d.id);
  const seen: string[] = [];
  let path = '/api/deliveries?limit=3';
  for (;;) {
    const r = await t.call('GET', path);
    seen.push(...r.body.items.map((d: any) => d.id));
    if (!r.body.next_cursor) break;
    path = /^<([^>]+)>; rel="next"$/.exec(r.headers.get('link') ?? '')![1];
  }
  assert.equal(seen, total);
  assert.equal([...seen].sort().reverse(), seen, 'newest first');
});

test.run();
