import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createRule, createSim, sendText, settle, until } from '../../helpers/routing.ts';

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

const STATES = ['pending', 'held', 'sending', 'retrying', 'delivered', 'dead', 'cancelled', 'expired'];
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

test('unknown ids: 404 for one delivery, retry, cancel and an unknown message; a message without deliveries lists none', async () => {
  for (const [method, path] of [['GET', '/api/deliveries/dlv_nope'], ['POST', '/api/deliveries/dlv_nope/retry'], ['POST', '/api/deliveries/dlv_nope/cancel'], ['GET', '/api/deliveries/message/msg_nope']]) {
    assertProblem(await t.call(method, path), 404, [], /does not exist/);
  }
  const stored = await sendText(t.call, '!nobody00');
  const r = await t.call('GET', `/api/deliveries/message/${stored.message.id}`);
  assert.is(r.status, 200, r.text);
  assert.equal(r.body.items, []);
});

test('every state is reached and counted; retry and cancel answer 409 in the wrong state', async () => {
  const ids: Record<string, string> = {
    delivered: await deliveryVia('ok', {}),
    dead: await deliveryVia('dead', { settings: { behaviour: 'fail' }, retry: { max_attempts: 1 } }),
    retrying: await deliveryVia('flaky', { settings: { behaviour: 'fail' }, retry: { base_s: 3600, cap_s: 3600 } }),
    sending: await deliveryVia('slow', { settings: { latency_ms: 60_000 } }),
    // Behind the one on the air.
    pending: (await sendText(t.call, '!slow')).deliveries[0].id,
    // A disabled interface holds what waits for it.
    held: await deliveryVia('parked', { enabled: false }),
    cancelled: await deliveryVia('parked-2', { enabled: false }),
    expired: await deliveryVia('stale', { enabled: false, retry: { ttl_s: 30, ttl_while_held: 'running' } }),
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
    ['cancel', 'delivered'], ['cancel', 'cancelled'], ['cancel', 'expired'], ['cancel', 'sending'],
  ];
  for (const [action, state] of refused) {
    const r = await t.call('POST', `/api/deliveries/${ids[state]}/${action}`);
    assertProblem(r, 409, [], new RegExp(`is ${state}`));
    assert.is((await get(ids[state])).state, state, `${action} on ${state} changed nothing`);
  }

  // The accepted moves: retry pending (front of the queue), retrying and dead; cancel pending,
  // held and retrying.
  const pendingRetry = await t.call('POST', `/api/deliveries/${ids.pending}/retry`);
  assert.is(pendingRetry.status, 200);
  assert.is(pendingRetry.body.state, 'pending', 'still waits behind the send on the air');
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

test('dead letters: cancel clears one, retry refuses when the interface is gone, bulk cancel and retry by filter', async () => {
  // Clear what the tests before left: every dead letter, no filter.
  const before = (await t.call('GET', '/api/deliveries?state=dead')).body.items.length;
  assert.equal((await t.call('POST', '/api/deliveries/dead/cancel', { body: {} })).body, { cancelled: before });
  const dead = { settings: { behaviour: 'fail' }, retry: { max_attempts: 1 } };
  const oldA = await deliveryVia('dl-a', dead);
  const oldB = await deliveryVia('dl-b', { settings: { behaviour: 'fail_after', ack_ms: 0, error: 'NO CARRIER from the modem' }, retry: { max_attempts: 1 } });
  clock.advance(2 * 3600_000);
  const newA = (await sendText(t.call, '!dl-a')).deliveries[0].id;
  const gone = await deliveryVia('dl-gone', dead);
  await settle();
  for (const id of [oldA, oldB, newA, gone]) assert.is((await get(id)).state, 'dead', JSON.stringify(await get(id)));
  assert.match((await get(oldB)).last_error, /NO CARRIER/);

  // One dead letter cancelled: it leaves the queue and keeps its last error in the reason.
  const c = await t.call('POST', `/api/deliveries/${newA}/cancel`);
  assert.is(c.status, 200, c.text);
  assert.is(c.body.state, 'cancelled');
  assert.match(c.body.last_error, /cancelled through the API.*simulated failure/);
  // Its interface deleted: a retry would wait forever, so it is refused with the reason.
  const goneIfc = (await get(gone)).interface_id;
  assert.is((await t.call('DELETE', '/api/interfaces/dl-gone?cascade=true')).status, 200);
  assertProblem(await t.call('POST', `/api/deliveries/${gone}/retry`), 409, [], /interface .* was deleted/);
  assert.is((await get(gone)).state, 'dead');

  // Bulk: bad filters are 400 naming the field and change nothing.
  for (const [body, path] of [[{ older_than_s: -1 }, 'body.older_than_s'], [{ interface: 'ghost' }, 'body.interface'], [{ error_contains: '' }, 'body.error_contains'], [{ state: 'dead' }, 'body']] as const) {
    assertProblem(await t.call('POST', '/api/deliveries/dead/cancel', { body }), 400, [path]);
  }
  // By error text (case-insensitive): one more attempt for oldB, which fails again.
  const byError = await t.call('POST', '/api/deliveries/dead/retry', { body: { error_contains: 'no carrier' } });
  assert.is(byError.status, 200, byError.text);
  assert.equal(byError.body, { retried: 1, refused: 0, reasons: [] });
  await settle();
  clock.advance(1); // fail_after fails on the bridge's clock
  await settle();
  assert.equal([(await get(oldB)).state, (await get(oldB)).attempts], ['dead', 2]);
  // By age: dead for at least an hour is oldA only (oldB died again just now).
  const byAge = await t.call('POST', '/api/deliveries/dead/cancel', { body: { older_than_s: 3600 } });
  assert.equal(byAge.body, { cancelled: 1 });
  assert.is((await get(oldA)).state, 'cancelled');
  // Everything dead, no body: the one whose interface is gone is refused, with how many and why.
  const all = await t.call('POST', '/api/deliveries/dead/retry');
  assert.is(all.status, 200, all.text);
  assert.is(all.body.retried, 1);
  assert.is(all.body.refused, 1);
  assert.equal(all.body.reasons.map((r: any) => [r.interface_id, r.count]), [[goneIfc, 1]]);
  assert.match(all.body.reasons[0].reason, /was deleted/);
  await settle();
  clock.advance(1);
  await settle();
  // The deleted interface's dead letters are cleared by its id.
  assert.equal((await t.call('POST', '/api/deliveries/dead/cancel', { body: { interface: goneIfc } })).body, { cancelled: 1 });
  assert.is((await get(gone)).state, 'cancelled');
  assert.equal((await t.call('POST', '/api/deliveries/dead/cancel', { body: { interface: 'dl-b' } })).body, { cancelled: 1 });
  assert.is((await t.call('GET', '/api/deliveries?state=dead&interface=dl-b')).body.items.length, 0);
});

test('waiting_for says why a delivery waits, from its interface\'s state when it is read', async () => {
  const off = await deliveryVia('wf-off', { enabled: false });
  assert.is((await get(off)).state, 'held');
  assert.is((await get(off)).waiting_for, "interface 'wf-off' is disabled");

  await createSim(t.call, 'wf-unbound');
  await createRule(t.call, 'to-wf-unbound', { match: { direction: 'outbound', to: ['!wf-unbound'] }, action: 'forward', destinations: [{ interface: 'wf-unbound', to: '{to}' }] });
  const unbound = await sendText(t.call, '!wf-unbound');
  assert.match(unbound.deliveries[0].waiting_for, /interface 'wf-unbound' is unbound/, 'the send answer says it too');

  const down = await deliveryVia('wf-down', {});
  assert.is((await get(down)).waiting_for, null, 'delivered: waits for nothing');
  assert.is((await t.call('POST', '/api/sim/wf-down/link', { body: { up: false } })).status, 200);
  const offline = (await sendText(t.call, '!wf-down')).deliveries[0].id;
  await settle();
  assert.is((await get(offline)).state, 'held');
  assert.match((await get(offline)).waiting_for, /^interface 'wf-down' is offline: ERR_SIM_OFFLINE/);

  await createSim(t.call, 'wf-heard', { device: 'sim://dlv-wf-heard' });
  await createRule(t.call, 'to-wf-heard', { match: { direction: 'outbound', to: ['!0000beef'] }, action: 'forward', destinations: [{ interface: 'wf-heard', to: '!0000beef', until_heard: true }] });
  const heard = (await sendText(t.call, '!0000beef')).deliveries[0];
  await settle();
  assert.is((await get(heard.id)).waiting_for, 'node !0000beef to be heard again');

  // Every answer that shows deliveries carries it: lists, a message's deliveries, retry.
  const listed = (await t.call('GET', '/api/deliveries?interface=wf-off')).body.items[0];
  assert.is(listed.waiting_for, "interface 'wf-off' is disabled");
  const byMessage = (await t.call('GET', `/api/deliveries/message/${listed.message_id}`)).body.items[0];
  assert.is(byMessage.waiting_for, "interface 'wf-off' is disabled");
  assert.is((await t.call('POST', `/api/deliveries/${off}/retry`)).body.waiting_for, "interface 'wf-off' is disabled");
  // Read at read time: enabling the interface clears it, nothing was stored.
  await t.call('POST', '/api/interfaces/wf-off/enable');
  await settle();
  assert.equal([(await get(off)).state, (await get(off)).waiting_for], ['delivered', null]);
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

test('a delivery that failed before it went out keeps no last_error once delivered; attempts count the tries', async () => {
  const id = await deliveryVia('flaky1', { settings: { behaviour: 'fail_then_deliver', fail_count: 1 } });
  const failed = await until('the first attempt to fail', async () => {
    const d = await get(id);
    return d.state === 'retrying' && d;
  });
  assert.match(failed.last_error, /simulated failure/);
  assert.is((await t.call('POST', `/api/deliveries/${id}/retry`)).status, 200);
  const done = await until('the delivery', async () => {
    const d = await get(id);
    return d.state === 'delivered' && d;
  });
  assert.is(done.last_error, null, 'an earlier failure does not read as the error of a success');
  assert.is(done.attempts, 2);
});

test.run();
