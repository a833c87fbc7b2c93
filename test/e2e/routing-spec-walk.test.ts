import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectStatus, liftSendLimit, type RestartableBridge, startBridgeProcess, waitUntil } from '../helpers/api.ts';

// Issue 4 acceptance: every row of docs/api.md section 3 for interfaces, access rules and deliveries,
// walked over HTTP against the real `fieldbridge` process, checking the "also happens" column.
// Every rule here matches outbound messages to its own address only, so frames the sim
// interfaces hear from each other (inbound) are stored and never forwarded again.

const dir = mkdtempSync(join(tmpdir(), 'fb-'));
let bridge: RestartableBridge;
const call = (method: string, path: string, body?: unknown) => bridge.call(method, path, body === undefined ? {} : { body });
const ok = (method: string, path: string, body?: unknown) => expectStatus(bridge.call, 200, method, path, body);
const created = (path: string, body: unknown) => expectStatus(bridge.call, 201, 'POST', path, body);

// How long a delivery to a stopped interface is watched to show it spends no attempt. The
// sim bearer with latency 0 answers within a few milliseconds once it may send.
const WAIT_MS = 400;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function createSim(name: string, extra: Record<string, unknown> = {}) {
  const r = await call('POST', '/api/interfaces', { name, kind: 'sim', settings: {}, ...extra });
  assert.is(r.status, 201, r.text);
  return r.body;
}

async function createRule(name: string, to: string, destinations: Array<{ interface: string; to: string }>, extra: Record<string, unknown> = {}) {
  const r = await call('POST', '/api/access-rules', { name, match: { direction: 'outbound', to: [to] }, schedule: null, action: 'forward', destinations, ...extra });
  assert.is(r.status, 201, r.text);
  return r.body;
}

async function send(to: string, text = `to ${to}`) {
  const r = await call('POST', '/api/messages/send', { to, text });
  assert.is(r.status, 202, r.text);
  return r.body as { message: any; deliveries: any[] };
}

const delivery = async (id: string) => (await ok('GET', `/api/deliveries/${id}`)) as any;
const untilState = (id: string, state: string, timeoutMs = 10_000) =>
  waitUntil(`delivery ${id} to be ${state}`, async () => {
    const d = await delivery(id);
    return d.state === state ? d : undefined;
  }, timeoutMs);

/** A delivery that waits for its interface is held and spends no attempt (docs/routing.md, "Held, not failed"). */
async function assertWaits(id: string, why: string) {
  await pause(WAIT_MS);
  const d = await delivery(id);
  assert.is(d.state, 'held', `${why}: held`);
  assert.is(d.attempts, 0, `${why}: no attempt spent`);
}

const messagesOn = async (iface: string) => ((await ok('GET', `/api/messages?interface=${iface}&direction=inbound`)) as any).items as any[];
const health = async (name: string) => ((await ok('GET', '/api/interfaces/health')) as any).items.find((h: any) => h.name === name);

test.before(async () => {
  bridge = await startBridgeProcess(join(dir, 'bridge.db'));
  await liftSendLimit(bridge.call);
});

test.after(async () => {
  await bridge?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('interface unbound -> bind: rules and pipeline stay attached; waiting sends go out without lost attempts', async () => {
  const outbound = [{ type: 'prefix', text: '[{interface}] ' }];
  const dst = await createSim('dst', { transforms: { inbound: [], outbound } });
  assert.is(dst.device, null);
  assert.is(dst.state.bound, false);
  await createSim('ear', { device: 'sim://walk' });
  const rule = await createRule('to-dst', 'walk-dst', [{ interface: 'dst', to: '{to}' }]);

  const sent = await send('walk-dst', 'hello');
  assert.is(sent.deliveries.length, 1);
  assert.is(sent.deliveries[0].interface_id, dst.id);
  await assertWaits(sent.deliveries[0].id, 'unbound interface');
  assert.is((await health('dst')).queue_depth, 1);

  const bound = await ok('POST', '/api/interfaces/dst/bind', { device: 'sim://walk' });
  assert.is(bound.device, 'sim://walk');
  assert.is(bound.state.bound, true);
  assert.equal(bound.transforms.outbound, outbound, 'pipeline still attached');
  assert.equal((await ok('GET', `/api/access-rules/${rule.id}`)).destinations, [{ interface: dst.id, interface_name: 'dst', to: '{to}' }], 'rule still attached');
  const done = await untilState(sent.deliveries[0].id, 'delivered');
  assert.is(done.attempts, 1);
  // The outbound pipeline ran: the peer on the channel heard the prefixed text.
  const heard = await waitUntil('the peer to hear the frame', async () => (await messagesOn('ear')).find((m) => m.text === '[dst] hello'));
  assert.is(heard.from, 'dst');
});

test('interface bound -> unbind: interface, rules and pipeline stay intact with nothing behind them; sends wait', async () => {
  const before = await ok('GET', '/api/interfaces/dst');
  const unbound = await ok('POST', '/api/interfaces/dst/unbind');
  assert.is(unbound.device, null);
  assert.is(unbound.state.bound, false);
  assert.is(unbound.state.connected, false);
  assert.equal(unbound.transforms, before.transforms);
  assert.equal(unbound.settings, before.settings);
  assert.equal(unbound.retry, before.retry);
  assert.ok((await ok('GET', '/api/access-rules')).items.some((r: any) => r.name === 'to-dst'), 'the rule naming it stays');

  const sent = await send('walk-dst', 'while unbound');
  assert.is(sent.message.decision.rule_id, (await ok('GET', '/api/access-rules/to-dst')).id, 'rules still route to it');
  await assertWaits(sent.deliveries[0].id, 'unbound interface');
  const h = await health('dst');
  assert.is(h.bound, false);
  assert.is(h.queue_depth, 1);

  await ok('POST', '/api/interfaces/dst/bind', { device: 'sim://walk' });
  assert.is((await untilState(sent.deliveries[0].id, 'delivered')).attempts, 1);
});

test('interface enabled -> disable: traffic stops both ways, configuration is kept', async () => {
  // Control first: enabled, dst hears a frame the peer sends.
  await createRule('to-ear', 'walk-ear', [{ interface: 'ear', to: '{to}' }]);
  const control = await send('walk-ear', 'heard while enabled');
  await untilState(control.deliveries[0].id, 'delivered');
  await waitUntil('dst to hear the control frame', async () => (await messagesOn('dst')).find((m) => m.text === 'heard while enabled'));
  const receivedBefore = (await health('dst')).counters.received;

  const before = await ok('GET', '/api/interfaces/dst');
  const disabled = await ok('POST', '/api/interfaces/dst/disable');
  assert.is(disabled.enabled, false);
  assert.is(disabled.device, 'sim://walk', 'binding kept');
  assert.equal(disabled.transforms, before.transforms, 'pipeline kept');
  assert.equal(disabled.settings, before.settings);
  assert.equal(disabled.retry, before.retry);
  await waitUntil('dst to disconnect', async () => (await health('dst')).connected === false);

  // Outbound stops: the delivery waits without spending attempts.
  const sent = await send('walk-dst', 'while disabled');
  await assertWaits(sent.deliveries[0].id, 'disabled interface');

  // Inbound stops: simulate-mesh-rx on it is refused, and a sim peer's frames are not accepted.
  const sim = await call('POST', '/api/messages/simulate-mesh-rx', { from: '!0000beef', text: 'injected', interface: 'dst' });
  assert.is(sim.status, 400, sim.text);
  assert.ok(sim.body.errors.some((e: any) => e.path === 'body.interface'), sim.text);
  const peer = await send('walk-ear', 'sent while dst is disabled');
  await untilState(peer.deliveries[0].id, 'delivered');
  await pause(WAIT_MS);
  assert.not.ok((await messagesOn('dst')).some((m) => m.text === 'sent while dst is disabled'), 'a disabled interface accepts no frames');
  assert.is((await health('dst')).counters.received, receivedBefore);

  // enabled -> enable: traffic resumes, the waiting delivery goes with one attempt.
  const enabled = await ok('POST', '/api/interfaces/dst/enable');
  assert.is(enabled.enabled, true);
  assert.is((await untilState(sent.deliveries[0].id, 'delivered')).attempts, 1);
  const again = await send('walk-ear', 'heard after enable');
  await untilState(again.deliveries[0].id, 'delivered');
  await waitUntil('dst to hear again', async () => (await messagesOn('dst')).find((m) => m.text === 'heard after enable'));
  const rx = await call('POST', '/api/messages/simulate-mesh-rx', { from: '!0000beef', text: 'injected after enable', interface: 'dst' });
  assert.is(rx.status, 202, rx.text);
  assert.is(rx.body.message.interface_id, enabled.id);
});

test('interface any -> DELETE: refused while rules or deliveries use it, saying which; with cascade its rules go with it and the response lists them', async () => {
  const gone = await createSim('gone', { transforms: { inbound: [{ type: 'truncate', max_bytes: 10 }], outbound: [] } });
  const r1 = await createRule('gone-out', 'walk-gone', [{ interface: 'gone', to: '{to}' }]);
  const r2 = await call('POST', '/api/access-rules', { name: 'gone-in', match: { direction: 'inbound', interfaces: ['gone'] }, schedule: null, action: 'store' });
  assert.is(r2.status, 201, r2.text);
  const r3 = await createRule('gone-mixed', 'walk-gone-2', [{ interface: 'ear', to: '{to}' }, { interface: 'gone', to: 'x' }]);
  const kept = await ok('GET', '/api/access-rules/to-ear');
  const waiting = await send('walk-gone');
  assert.is(waiting.deliveries[0].state, 'pending');

  const inUse = await call('DELETE', '/api/interfaces/gone');
  assert.is(inUse.status, 409, inUse.text);
  assert.is(inUse.body.detail,
    `interface 'gone' (${gone.id}) is used by rules 'gone-out' (${r1.id}), 'gone-in' (${r2.body.id}), 'gone-mixed' (${r3.id}) and 1 waiting delivery; `
    + 'to swap its radio, bind the new device (POST /api/interfaces/gone/bind), which keeps them; to delete it anyway with those rules and cancel the deliveries: DELETE /api/interfaces/gone?cascade=true');
  assert.equal(inUse.body.errors.map((e: any) => e.path), ['rules', 'rules', 'rules', 'deliveries']);
  assert.is((await call('GET', `/api/interfaces/${gone.id}`)).status, 200, 'the refused delete changed nothing');
  for (const id of [r1.id, r2.body.id, r3.id]) assert.is((await call('GET', `/api/access-rules/${id}`)).status, 200);
  assert.is((await delivery(waiting.deliveries[0].id)).state, 'held', 'still waiting (the unbound interface holds it)');

  const del = await ok('DELETE', '/api/interfaces/gone?cascade=true');
  assert.is(del.id, gone.id);
  assert.is(del.name, 'gone');
  assert.equal([...del.removed_rule_ids].sort(), [r1.id, r2.body.id, r3.id].sort());
  assert.equal(del.removed_rules.map((r: any) => r.name), ['gone-out', 'gone-in', 'gone-mixed']);
  assert.is(del.cancelled_deliveries, 1);
  assert.is((await call('GET', `/api/interfaces/${gone.id}`)).status, 404);
  for (const id of del.removed_rule_ids) assert.is((await call('GET', `/api/access-rules/${id}`)).status, 404, `rule ${id} removed`);
  const rules = (await ok('GET', '/api/access-rules')).items;
  assert.ok(rules.some((r: any) => r.id === kept.id), 'rules not naming it stay');
  assert.equal(rules.map((r: any) => r.priority), rules.map((_: unknown, i: number) => i + 1), 'no gaps left in the order');
  const after = await delivery(waiting.deliveries[0].id);
  assert.is(after.state, 'cancelled', 'its waiting deliveries are cancelled, not left forever');
  assert.match(after.last_error, /deleted/);

  // A new interface of the same name starts with no pipeline and no rules.
  const again = await createSim('gone');
  assert.is.not(again.id, gone.id);
  assert.equal(again.transforms, { inbound: [], outbound: [] });
  const stored = await send('walk-gone');
  assert.is(stored.deliveries.length, 0);
  assert.is(stored.message.decision.rule_id, null);
});

test('access rule enable/disable keeps its place and restores behaviour exactly; delete + recreate lands last', async () => {
  await createSim('left', { device: 'sim://walk' });
  await createSim('right', { device: 'sim://walk' });
  const body = (dest: string) => ({ match: { direction: 'outbound', to: ['walk-first'] }, schedule: null, action: 'forward', destinations: [{ interface: dest, to: '{to}' }] });
  const first = await created('/api/access-rules', { name: 'first-left', ...body('left') });
  const second = await created('/api/access-rules', { name: 'first-right', ...body('right') });
  const order = async () => (await ok('GET', '/api/access-rules')).items.map((r: any) => r.id);
  const firedBy = async () => (await send('walk-first')).message.decision.rule_id;
  const stats = async (id: string) => (await ok('GET', `/api/access-rules/${id}/stats`)).fired;

  assert.is(await firedBy(), first.id);
  const orderBefore = await order();
  const disabled = await ok('POST', `/api/access-rules/${first.id}/disable`);
  assert.is(disabled.enabled, false);
  assert.is(disabled.priority, first.priority, 'keeps its place');
  assert.equal(await order(), orderBefore);
  assert.is(await firedBy(), second.id, 'a disabled rule is skipped');
  assert.is(await stats(first.id), 1, 'not counted while disabled');

  const enabled = await ok('POST', `/api/access-rules/${first.id}/enable`);
  assert.is(enabled.priority, first.priority);
  const { enabled: _e, updated_at: _u, ...same } = enabled;
  const { enabled: _e2, updated_at: _u2, ...original } = first;
  assert.equal(same, original, 'the rule is exactly as before');
  assert.is(await firedBy(), first.id, 'previous behaviour restored');
  assert.is(await stats(first.id), 2, 'stats kept across disable and enable');

  await expectStatus(bridge.call, 204, 'DELETE', `/api/access-rules/${first.id}`);
  assert.is((await call('GET', `/api/access-rules/${first.id}`)).status, 404);
  assert.is(await firedBy(), second.id);
  const recreated = await created('/api/access-rules', { name: 'first-left', ...body('left') });
  const all = await order();
  assert.is(all[all.length - 1], recreated.id, 'a recreated rule lands last');
  assert.is(recreated.priority, all.length);
  assert.is(await firedBy(), second.id, 'so it no longer decides');
  assert.is(await stats(recreated.id), 0, 'a new rule starts counting from zero');

  // ... unless reordered.
  const reordered = await ok('POST', '/api/access-rules/reorder', { order: [recreated.id, ...all.filter((id: string) => id !== recreated.id)] });
  assert.is(reordered.items[0].id, recreated.id);
  assert.is(await firedBy(), recreated.id);
});

test('delivery pending -> retry: moves to the front of its queue, skipping its backoff', async () => {
  // A queue of three on a disabled interface; retrying the last puts it first.
  await createSim('queue', { device: 'sim://walk', settings: { latency_ms: 30 } });
  await createRule('to-queue', 'walk-queue', [{ interface: 'queue', to: '{to}' }]);
  await ok('POST', '/api/interfaces/queue/disable');
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await send('walk-queue', `q${i}`)).deliveries[0].id);
  for (const id of ids) await untilState(id, 'held');
  const retried = await ok('POST', `/api/deliveries/${ids[2]}/retry`);
  assert.is(retried.state, 'held', 'waits for its interface, at the front');
  assert.is(retried.attempts, 0);
  await ok('POST', '/api/interfaces/queue/enable');
  const done = await Promise.all(ids.map((id) => untilState(id, 'delivered')));
  const finished = done.map((d) => Date.parse(d.finished_at));
  assert.ok(finished[2] < finished[0] && finished[0] < finished[1], `retried one first, then the rest in order: ${done.map((d) => d.finished_at).join(', ')}`);
});

test('delivery retrying -> retry: attempt now, skipping a long backoff', async () => {
  await createSim('flaky', { device: 'sim://walk', settings: { behaviour: 'fail_then_deliver', fail_count: 1 }, retry: { base_s: 3600, cap_s: 3600 } });
  await createRule('to-flaky', 'walk-flaky', [{ interface: 'flaky', to: '{to}' }]);
  const sent = await send('walk-flaky');
  const failed = await untilState(sent.deliveries[0].id, 'retrying');
  assert.is(failed.attempts, 1);
  assert.match(failed.last_error, /simulated failure/);
  // Full jitter draws the wait from [0, 3600 s): almost always far longer than this test.
  assert.ok(Date.parse(failed.next_attempt_at) > Date.parse(failed.updated_at), 'a backoff was scheduled');
  const retried = await ok('POST', `/api/deliveries/${failed.id}/retry`);
  // The queue was idle, so the attempt may already be under way when the answer is written.
  assert.ok(retried.state === 'sending' || Date.parse(retried.next_attempt_at) <= Date.now(), `due now: ${JSON.stringify(retried)}`);
  const done = await untilState(failed.id, 'delivered', 5000);
  assert.is(done.attempts, 2);
});

test('delivery pending/retrying -> cancel: no further attempts', async () => {
  // Retrying, with an hour of backoff ahead: cancel ends it where it stands.
  await createSim('broken', { device: 'sim://walk', settings: { behaviour: 'fail' }, retry: { base_s: 3600, cap_s: 3600 } });
  await createRule('to-broken', 'walk-broken', [{ interface: 'broken', to: '{to}' }]);
  const sent = await send('walk-broken');
  await untilState(sent.deliveries[0].id, 'retrying');
  const cancelled = await ok('POST', `/api/deliveries/${sent.deliveries[0].id}/cancel`);
  assert.is(cancelled.state, 'cancelled');
  assert.is(cancelled.next_attempt_at, null);
  assert.is(cancelled.attempts, 1);

  // Pending on a disabled interface: enabling it later sends the others, never the cancelled one.
  await ok('POST', '/api/interfaces/queue/disable');
  const a = (await send('walk-queue', 'cancel me')).deliveries[0].id;
  const b = (await send('walk-queue', 'send me')).deliveries[0].id;
  assert.is((await ok('POST', `/api/deliveries/${a}/cancel`)).state, 'cancelled');
  await ok('POST', '/api/interfaces/queue/enable');
  await untilState(b, 'delivered');
  const after = await delivery(a);
  assert.is(after.state, 'cancelled');
  assert.is(after.attempts, 0, 'never attempted');

  // Finished deliveries cannot be cancelled or retried (409).
  for (const [id, action] of [[a, 'cancel'], [a, 'retry'], [b, 'cancel'], [b, 'retry']]) {
    const r = await call('POST', `/api/deliveries/${id}/${action}`);
    assert.is(r.status, 409, `${action} ${id}: ${r.text}`);
  }
});

test('delivery retrying -> retries exhausted: dead letter with its last error, still listed after a restart', async () => {
  await createSim('dead-end', { device: 'sim://walk', settings: { behaviour: 'fail' }, retry: { base_s: 0.01, cap_s: 0.05, max_attempts: 3 } });
  await createRule('to-dead-end', 'walk-dead', [{ interface: 'dead-end', to: '{to}' }]);
  const sent = await send('walk-dead');
  const dead = await untilState(sent.deliveries[0].id, 'dead');
  assert.is(dead.attempts, 3);
  assert.match(dead.last_error, /simulated failure \(behaviour fail\).*3 attempts/);
  assert.ok(dead.finished_at);
  const letters = (await ok('GET', '/api/deliveries?state=dead')).items;
  assert.ok(letters.some((d: any) => d.id === dead.id), 'in the dead letter queue');

  assert.is(await bridge.stop(), 0);
  await bridge.start();
  const afterRestart = (await ok('GET', '/api/deliveries?state=dead')).items.find((d: any) => d.id === dead.id);
  assert.ok(afterRestart, 'still listed after a restart');
  assert.is(afterRestart.last_error, dead.last_error);
  assert.is(afterRestart.attempts, 3);
  assert.is((await ok('GET', '/api/deliveries/stats')).dead, letters.length);

  // A dead letter may be retried by hand: one more attempt, here failing again.
  const retried = await ok('POST', `/api/deliveries/${dead.id}/retry`);
  assert.ok(['retrying', 'sending'].includes(retried.state), retried.state);
  const deadAgain = await untilState(dead.id, 'dead');
  assert.is(deadAgain.attempts, 4);
});

test.run();
