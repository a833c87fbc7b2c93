import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { expectOk } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createSim } from '../../helpers/routing.ts';

// Senders (issue 17, docs/senders.md): a sender over its limit is stored with the reason and
// not forwarded; a blocked node's messages are never forwarded; counters, paging, block,
// unblock and reset; API sends are not the policy's.

const clock = new FakeClock(Date.parse('2026-11-27T12:00:00.000Z'));
let t: TestBridge;
test.before(async () => {
  t = await startTestBridge({ clock });
});
test.after(async () => {
  await t.stop();
});

const ok = (method: string, path: string, body?: unknown) => expectOk(t.call, method, path, body);
const heard = (from: string, text = 'hello') => ok('POST', '/api/messages/simulate-mesh-rx', { interface: 'mesh-0', from, text });
const fired = async () => (await ok('GET', '/api/access-rules/relay/stats')).fired;

test('setup: a mesh interface, an SMS modem, a rule forwarding everything heard to SMS and to another mesh', async () => {
  await createSim(t.call, 'mesh-0', { device: 'sim://senders-a' });
  await createSim(t.call, 'mesh-1', { device: 'sim://senders-b' });
  await ok('POST', '/api/interfaces', { name: 'sms-0', kind: 'sms', settings: {} });
  await ok('POST', '/api/object-groups', { name: 'pranks', members: ['!bad2'] });
  await ok('POST', '/api/object-groups', { name: 'team', members: ['!a1', '!a2', '!bad'] });
  await ok('POST', '/api/access-rules', { name: 'relay', match: { direction: 'inbound' }, action: 'forward', destinations: [{ interface: 'sms-0', to: '+4915112345678' }, { interface: 'mesh-1', to: '^all' }] });
  assert.equal(await ok('GET', '/api/senders/policy'), { limits: [], blocklist: [], allowlist: null });
});

test('the policy is validated: every bad field at once, @names must exist', async () => {
  const r = await t.call('PUT', '/api/senders/policy', { body: { limits: [{ kinds: [], per_hour: 0, burst: 0 }], blocklist: [''], allowlist: [] } });
  assertProblem(r, 400, ['body.limits[0].kinds', 'body.limits[0].per_hour', 'body.limits[0].burst', 'body.blocklist[0]', 'body.allowlist']);
  assertProblem(await t.call('PUT', '/api/senders/policy', { body: { blocklist: ['@nobody'] } }), 400, ['body.blocklist[0]'], /no object group or contact named 'nobody'/);
  assertProblem(await t.call('PUT', '/api/senders/policy', { body: { limitz: [] } }), 400, ['body']);
});

test('over its limit a sender\'s message is stored with the reason and not forwarded; it refills with time', async () => {
  await ok('PUT', '/api/senders/policy', { limits: [{ kinds: ['sms', 'iridium'], per_hour: 2, burst: 2 }], blocklist: ['!bad'] });
  for (let i = 0; i < 2; i++) {
    const r = await heard('!A1');
    assert.is(r.message.action, 'forward');
    assert.is(r.deliveries.length, 2);
  }
  const before = await fired();
  // The preview says so first, and takes nothing.
  const p = await ok('POST', '/api/messages/preview', { mode: 'mesh-rx', interface: 'mesh-0', from: '!a1', text: 'third' });
  assert.match(p.parts[0].sender.over_limit, /sender !a1 is over its limit of 2 forwards per hour to sms, iridium \(burst 2\)/);
  assert.equal(p.parts[0].sender.limits, [{ kinds: ['sms', 'iridium'], per_hour: 2, burst: 2, tokens: 0 }]);
  assert.is(p.parts[0].decision.action, 'store');
  const third = await heard('!a1', 'third');
  assert.is(third.message.action, 'store');
  assert.match(third.message.decision.reason, /^rule 'relay' matched: direction inbound; sender !a1 is over its limit of 2 forwards per hour to sms, iridium \(burst 2\); the next forward is allowed in 1800 s: stored, not forwarded$/, third.message.decision.reason);
  assert.equal(third.deliveries, []);
  assert.is(await fired(), before + 1, 'the rule did decide');
  assert.is((await ok('GET', `/api/messages/${third.message.id}`)).action, 'store', 'kept in history');
  // Half an hour gives one forward back.
  clock.advance(30 * 60_000);
  assert.is((await heard('!a1')).message.action, 'forward');
  assert.is((await heard('!a1')).message.action, 'store');
  // A sender of its own has its own bucket; a limit on other kinds leaves mesh-only rules alone.
  assert.is((await heard('!a2')).message.action, 'forward');
  const sender = await ok('GET', '/api/senders/!a1');
  assert.equal([sender.messages_in, sender.forwards, sender.limited, sender.blocked, sender.blocked_now], [5, 3, 2, 0, null]);
  // Reset: every limit of the sender starts full again.
  // Addresses are kept in one spelling: a Meshtastic node as !%08x (docs/senders.md).
  assert.equal(await ok('POST', '/api/senders/!A1/reset'), { address: '!000000a1', buckets_reset: 1 });
  assert.is((await heard('!a1')).message.action, 'forward');
});

test('a blocked node\'s messages are never forwarded: dropped with the reason, no rule asked', async () => {
  const before = await fired();
  for (const text of ['one', 'SOS two']) {
    const r = await heard('!BAD', text);
    assert.is(r.message.action, 'drop');
    assert.is(r.message.decision.reason, 'sender !BAD is on the blocklist: not forwarded');
    assert.equal(r.deliveries, []);
  }
  assert.is(await fired(), before, 'no rule fired for a blocked sender');
  assert.equal((await ok('GET', '/api/senders/!bad')).blocked, 2);
  // Through a group too, and unblocking the address alone is refused while the group blocks it.
  await ok('POST', '/api/senders/!x9/block');
  const policy = await ok('GET', '/api/senders/policy');
  assert.equal(policy.blocklist, ['!bad', '!x9']);
  await ok('PUT', '/api/senders/policy', { ...policy, blocklist: [...policy.blocklist, '@pranks'] });
  assert.match((await heard('!bad2')).message.decision.reason, /^sender !bad2 is on the blocklist \(through @pranks\)/);
  const still = await t.call('POST', '/api/senders/!bad2/unblock');
  assertProblem(still, 409, [], /@pranks/);
  assert.is(still.body.type, 'https://fieldbridge.dev/problems/sender-still-blocked');
  // Unblocking !bad lets it through again.
  assert.equal((await ok('POST', '/api/senders/!bad/unblock')).blocklist, ['!x9', '@pranks']);
  assert.is((await heard('!bad')).message.action, 'forward');
});

test('an allowlist: only its senders are forwarded', async () => {
  const policy = await ok('GET', '/api/senders/policy');
  await ok('PUT', '/api/senders/policy', { ...policy, allowlist: ['@team'] });
  assert.is((await heard('!a2')).message.action, 'forward');
  const stranger = await heard('!c3');
  assert.equal([stranger.message.action, stranger.message.decision.reason], ['drop', 'sender !c3 is not on the allowlist: not forwarded']);
  assertProblem(await t.call('POST', '/api/senders/!c3/unblock'), 409, [], /allowlist/);
  await ok('PUT', '/api/senders/policy', { ...policy, allowlist: null });
});

test('messages sent through the API are not the senders policy\'s', async () => {
  await ok('POST', '/api/access-rules', { name: 'out', match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'sms-0', to: '+4915112345678' }] });
  for (let i = 0; i < 4; i++) assert.is((await ok('POST', '/api/messages/send', { to: 'x', text: 'api' })).message.action, 'forward');
  assertProblem(await t.call('GET', '/api/senders/local'), 404);
});

test('GET /api/senders is paged by address and filtered with q; bad queries are 400', async () => {
  const all = (await ok('GET', '/api/senders')).items.map((s: any) => s.address);
  assert.equal(all, ['!000000a1', '!000000a2', '!000000c3', '!00000bad', '!0000bad2']);
  const first = await t.call('GET', '/api/senders?limit=2');
  assert.equal(first.body.items.map((s: any) => s.address), ['!000000a1', '!000000a2']);
  assert.match(first.headers.get('link') ?? '', /rel="next"/);
  const second = await ok('GET', `/api/senders?limit=2&cursor=${first.body.next_cursor}`);
  assert.equal(second.items.map((s: any) => s.address), ['!000000c3', '!00000bad']);
  assert.equal((await ok('GET', '/api/senders?q=BAD')).items.map((s: any) => s.address), ['!00000bad', '!0000bad2']);
  assert.match((await ok('GET', '/api/senders?q=bad2')).items[0].blocked_now, /@pranks/);
  assertProblem(await t.call('GET', '/api/senders?cursor=nope'), 400, ['query.cursor']);
  assertProblem(await t.call('GET', '/api/senders?page=2'), 400);
});

test.run();
