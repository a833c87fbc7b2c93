import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../../src/lib/clock.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { createRule, createSim, settle, until } from '../../helpers/routing.ts';

// Delivery policy across bearers (docs/routing.md, "Delivery policy"), through the API of an
// in-process bridge on a fake clock, with sim interfaces whose acknowledgement behaviours and
// links the test sets: ordered fallback on acknowledgement deadlines, skipping an interface
// that cannot take it, a late acknowledgement, held deliveries and until_heard, precedence,
// bounded queues, and an SOS.

const clock = new FakeClock(Date.parse('2026-06-01T10:00:00.000Z'));
let t: TestBridge;
let n = 0;
// Its own folder, kept across a restart (the SOS test restarts the bridge on it).
const dir = mkdtempSync(join(tmpdir(), 'fb-policy-'));
test.before(async () => {
  t = await startTestBridge({ clock, dir });
});
test.after(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

const story = async (messageId: string) => (await t.call('GET', `/api/deliveries/message/${messageId}`)).body as { items: any[]; fallbacks: any[] };
const delivery = async (id: string) => (await t.call('GET', `/api/deliveries/${id}`)).body;

/** A sim interface on its own channel with a peer listening there, so frames are heard. */
async function sim(name: string, settings: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<any> {
  const iface = await createSim(t.call, name, { device: `sim://pol-${name}`, settings, ...extra });
  await until(`${name} connected`, async () => {
    const h = (await t.call('GET', '/api/interfaces/health')).body.items.find((i: any) => i.name === name);
    return h && (h.connected || extra.enabled === false);
  });
  return iface;
}

/** A rule sending messages to `to` through `destination`; answers the address to send to. */
async function routeTo(destination: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  const to = `dest-${++n}`;
  await createRule(t.call, `policy-${n}`, { match: { direction: 'outbound', to: [to] }, action: 'forward', destinations: [destination], ...extra });
  return to;
}

async function send(to: string, body: Record<string, unknown> = {}): Promise<any> {
  const r = await t.call('POST', '/api/messages/send', { body: { to, text: `hello ${to}`, ...body } });
  assert.is(r.status, 202, r.text);
  return r.body;
}

test('ordered: a member that never acknowledges is escalated after ack_within_s; the next delivers; the outcome says so', async () => {
  await sim('mute-a', { behaviour: 'never_ack' });
  await sim('ok-a');
  const to = await routeTo({ fallback: [{ interface: 'mute-a', to: 'peer', ack_within_s: 2 }, { interface: 'ok-a', to: 'peer' }], strategy: 'ordered' });
  const sent = await send(to);
  assert.is(sent.deliveries.length, 1, 'one member at a time');
  const first = sent.deliveries[0];
  await until('the first on the air', async () => (await delivery(first.id)).state === 'sending');
  clock.advance(1_900);
  await settle();
  assert.is((await story(sent.message.id)).items.length, 1, 'nothing else before the deadline');
  clock.advance(200);
  const s = await until('delivered via the second', async () => {
    const st = await story(sent.message.id);
    return st.fallbacks[0]?.state === 'delivered' && st;
  });
  assert.equal(s.items.map((d) => [d.fallback.position, d.state]), [[0, 'cancelled'], [1, 'delivered']]);
  assert.match(s.items[0].last_error, /^escalated: mute-a timed out at 2 s/);
  assert.is(s.fallbacks[0].outcome, 'delivered via ok-a after mute-a timed out at 2 s');
  assert.equal(s.fallbacks[0].trace.map((e: any) => `${e.event} ${e.interface}`), ['started mute-a', 'escalated mute-a', 'started ok-a', 'delivered ok-a']);
});

test('ordered: a member whose interface is disabled is skipped at once with the reason; the next starts immediately', async () => {
  await sim('off-b', {}, { enabled: false });
  await sim('ok-b');
  const to = await routeTo({ fallback: [{ interface: 'off-b', to: 'peer', ack_within_s: 2 }, { interface: 'ok-b', to: 'peer' }] });
  const sent = await send(to);
  assert.equal(sent.deliveries.map((d: any) => d.interface_id), [(await t.call('GET', '/api/interfaces/ok-b')).body.id]);
  const s = await until('delivered', async () => {
    const st = await story(sent.message.id);
    return st.fallbacks[0]?.state === 'delivered' && st;
  });
  assert.equal(s.fallbacks[0].trace[0], { at: s.fallbacks[0].trace[0].at, member: 0, interface: 'off-b', event: 'skipped', detail: 'disabled' });
  assert.is(s.fallbacks[0].outcome, 'delivered via ok-b after off-b was skipped (disabled)');
});

test('a late acknowledgement of the first member, after the second started: both recorded as delivered, nothing further started', async () => {
  await sim('late-c', { behaviour: 'ack_after', ack_ms: 3_000 });
  await sim('slow-c', { behaviour: 'ack_after', ack_ms: 2_000 });
  await sim('never-c');
  const to = await routeTo({ fallback: [{ interface: 'late-c', to: 'peer', ack_within_s: 2 }, { interface: 'slow-c', to: 'peer', ack_within_s: 10 }, { interface: 'never-c', to: 'peer' }] });
  const sent = await send(to);
  await until('the first on the air', async () => (await delivery(sent.deliveries[0].id)).state === 'sending');
  clock.advance(2_000); // deadline: the second starts
  await until('the second started', async () => (await story(sent.message.id)).items.length === 2);
  await until('the second on the air', async () => (await story(sent.message.id)).items[1].state === 'sending');
  clock.advance(1_000); // the first acknowledges, late
  await until('the first delivered', async () => (await story(sent.message.id)).items[0].state === 'delivered');
  clock.advance(1_000); // the second acknowledges too
  const s = await until('both delivered', async () => {
    const st = await story(sent.message.id);
    return st.items.every((d) => d.state === 'delivered') && st.fallbacks[0].trace.some((e: any) => e.event === 'late') && st;
  });
  assert.is(s.items.length, 2, 'the third member never started');
  assert.equal(s.fallbacks[0].trace.map((e: any) => `${e.event} ${e.interface}`), ['started late-c', 'escalated late-c', 'started slow-c', 'delivered late-c', 'late slow-c']);
  assert.is(s.fallbacks[0].outcome, 'delivered via late-c after its deadline (slow-c had started); also delivered via slow-c');
});

test('held: an interface offline longer than the TTL keeps its deliveries held, not expired; all go out when it returns', async () => {
  await sim('away-d', {}, { retry: { ttl_s: 5 } });
  const to = await routeTo({ interface: 'away-d', to: 'peer' });
  assert.is((await t.call('POST', '/api/sim/away-d/link', { body: { up: false } })).status, 200);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await send(to)).deliveries[0].id);
  await until('held', async () => (await Promise.all(ids.map(delivery))).every((d) => d.state === 'held'));
  clock.advance(60_000);
  await settle();
  assert.ok((await Promise.all(ids.map(delivery))).every((d) => d.state === 'held'), 'not expired after 12 TTLs offline');
  assert.is((await t.call('GET', '/api/deliveries/stats')).body.held >= 3, true);
  assert.is((await t.call('POST', '/api/sim/away-d/link', { body: { up: true } })).status, 200);
  await until('all delivered', async () => (await Promise.all(ids.map(delivery))).every((d) => d.state === 'delivered'));
});

test('until_heard: a direct message is held until its node is heard again, then goes out at once with its TTL counted from then', async () => {
  await sim('mesh-e');
  await sim('ear-e', {}, { device: 'sim://pol-ear' });
  // Written as 0xBEEF; heard as !0000BEEF: one node (node-key.ts).
  const to = await routeTo({ interface: 'mesh-e', to: '0xBEEF', until_heard: true });
  const sent = await send(to);
  const id = sent.deliveries[0].id;
  assert.is(sent.deliveries[0].state, 'held');
  assert.is(sent.deliveries[0].until_heard, '!0000beef');
  clock.advance(3_600_000);
  await settle();
  assert.is((await delivery(id)).state, 'held', 'not before the node is heard');
  const heard = await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!0000BEEF', text: 'back in range', interface: 'ear-e' } });
  assert.is(heard.status, 202, heard.text);
  const done = await until('delivered', async () => {
    const d = await delivery(id);
    return d.state === 'delivered' && d;
  });
  assert.is(done.attempts, 1);
});

test('precedence: behind 100 routine deliveries on a slow interface, a flash message is the next on the air', async () => {
  await sim('slow-f', { latency_ms: 1_000 }, { retry: { queue_max_deliveries: 500 } });
  const to = await routeTo({ interface: 'slow-f', to: 'peer' });
  const routine: string[] = [];
  for (let i = 0; i < 100; i++) routine.push((await send(to)).deliveries[0].id);
  await until('the first on the air', async () => (await delivery(routine[0])).state === 'sending');
  const flash = (await send(to, { precedence: 'flash' })).deliveries[0];
  assert.is(flash.precedence, 'flash');
  clock.advance(1_000);
  await until('the flash on the air', async () => (await delivery(flash.id)).state === 'sending');
  assert.is((await delivery(routine[1])).state, 'pending', 'the second routine still waits');
});

test('bounded queue: cap 50 on a down interface; 60 routine leave 50 held and 10 evicted; a flash evicts one more; nothing lost without a record', async () => {
  await sim('full-g', {}, { retry: { queue_max_deliveries: 50 } });
  const to = await routeTo({ interface: 'full-g', to: 'peer' });
  assert.is((await t.call('POST', '/api/sim/full-g/link', { body: { up: false } })).status, 200);
  const sent: any[] = [];
  for (let i = 0; i < 60; i++) sent.push(await send(to));
  const flash = await send(to, { precedence: 'flash' });
  const all = await Promise.all([...sent, flash].map((s) => delivery(s.deliveries[0].id)));
  const dead = all.filter((d) => d.state === 'dead');
  assert.is(dead.length, 11);
  assert.is(all.filter((d) => d.state === 'held' || d.state === 'pending').length, 50);
  assert.ok(dead.every((d) => /^evicted: queue full \(cap 50\) by message msg_/.test(d.last_error)), dead[0].last_error);
  assert.equal(dead.map((d) => d.id), sent.slice(0, 11).map((s) => s.deliveries[0].id), 'the oldest routine ones went');
  assert.is(all.at(-1).precedence, 'flash');
  assert.ok(['held', 'pending'].includes(all.at(-1).state));
  await t.call('POST', '/api/sim/full-g/link', { body: { up: true } });
});

test('SOS: override with no TTL on every member keeps trying past max_attempts, survives nothing but a cancel of the message', async () => {
  await sim('sos-h1', { behaviour: 'fail' }, { retry: { max_attempts: 2, base_s: 1, cap_s: 1 } });
  await sim('sos-h2', { behaviour: 'fail' }, { retry: { max_attempts: 2, base_s: 1, cap_s: 1 } });
  const to = await routeTo({ fallback: [{ interface: 'sos-h1', to: 'peer' }, { interface: 'sos-h2', to: 'peer' }], strategy: 'all' });
  const sent = await send(to, { precedence: 'override', ttl_s: null });
  assert.is(sent.deliveries.length, 2);
  assert.ok(sent.deliveries.every((d: any) => d.expires_at === null && d.precedence === 'override'));
  for (let i = 0; i < 5; i++) {
    clock.advance(5_000);
    await settle();
  }
  const legs = await until('several attempts on each leg', async () => {
    const st = await story(sent.message.id);
    return st.items.every((d) => d.attempts >= 3 && d.state === 'retrying') && st.items;
  });
  assert.is(legs.length, 2);
  const cancel = await t.call('POST', `/api/messages/${sent.message.id}/cancel`, { body: { reason: 'found safe' } });
  assert.is(cancel.status, 200, cancel.text);
  assert.is(cancel.body.cancelled.length, 2);
  const s = await story(sent.message.id);
  assert.ok(s.items.every((d) => d.state === 'cancelled' && /found safe/.test(d.last_error)));
  assert.is(s.fallbacks[0].state, 'cancelled');
  const attempts = s.items.map((d) => d.attempts);
  clock.advance(60_000);
  await settle();
  assert.equal((await story(sent.message.id)).items.map((d) => d.attempts), attempts, 'no attempt after cancel');
});

test('bad input: ttl_s null without override, unknown precedence, a group as a fallback member, strategy on a plain destination', async () => {
  await sim('bad-i');
  const r1 = await t.call('POST', '/api/messages/send', { body: { to: 'x', text: 'x', ttl_s: null } });
  assert.is(r1.status, 400);
  assert.match(JSON.stringify(r1.body.errors), /only for precedence override/);
  const r2 = await t.call('POST', '/api/messages/send', { body: { to: 'x', text: 'x', precedence: 'urgent' } });
  assert.is(r2.status, 400);
  assert.match(JSON.stringify(r2.body.errors), /precedence must be one of override, flash/);
  await t.call('POST', '/api/object-groups', { body: { name: 'crew', members: ['!00000001'] } });
  const r3 = await t.call('POST', '/api/access-rules', { body: { name: 'bad-fb', match: {}, schedule: null, action: 'forward', destinations: [{ fallback: [{ interface: 'bad-i', to: '@crew' }] }] } });
  assert.is(r3.status, 400);
  assert.match(JSON.stringify(r3.body.errors), /fallback\[0\]\.to.*object group/);
  const r4 = await t.call('POST', '/api/access-rules', { body: { name: 'bad-st', match: {}, schedule: null, action: 'forward', destinations: [{ interface: 'bad-i', to: 'x', strategy: 'all' }] } });
  assert.is(r4.status, 400);
  assert.match(JSON.stringify(r4.body.errors), /strategy belongs to a fallback list/);
  const r5 = await t.call('POST', '/api/access-rules', { body: { name: 'bad-mix', match: {}, schedule: null, action: 'forward', destinations: [{ interface: 'bad-i', fallback: [{ interface: 'bad-i', to: 'x' }] }] } });
  assert.is(r5.status, 400);
  assert.match(JSON.stringify(r5.body.errors), /no interface of its own/);
});

test('send-to-contact with a strategy: the contact\'s addresses in its preferred order become an ordered fallback list', async () => {
  // Named to come first: the list takes every enabled interface of the kind, by name.
  await sim('a0-c1', { behaviour: 'never_ack' });
  await sim('a0-c2');
  const c = await t.call('POST', '/api/contacts', { body: { name: 'hiker', addresses: { rnode: 'hiker-lora', mesh: '!00001234' }, prefer: ['mesh', 'rnode'] } });
  assert.is(c.status, 201, c.text);
  assert.equal(c.body.prefer, ['mesh', 'rnode']);
  const r = await t.call('POST', '/api/messages/send-to-contact', { body: { contact: 'hiker', text: 'where are you?', strategy: 'ordered', ack_within_s: 3 } });
  assert.is(r.status, 202, r.text);
  assert.match(r.body.message.decision.reason, /send-to-contact 'hiker' with strategy ordered: mesh, then rnode/);
  const first = r.body.deliveries[0];
  assert.equal([first.to, first.fallback.position], ['!00001234', 0]);
  await until('on the air', async () => (await delivery(first.id)).state === 'sending');
  clock.advance(3_000);
  const s = await until('delivered by the next mesh interface', async () => {
    const st = await story(r.body.message.id);
    return st.fallbacks[0]?.state === 'delivered' && st;
  });
  assert.is(s.fallbacks[0].outcome, 'delivered via a0-c2 after a0-c1 timed out at 3 s');
  const none = await t.call('POST', '/api/messages/send-to-contact', { body: { contact: 'nobody', text: 'x', strategy: 'ordered' } });
  assert.is(none.status, 400);
});

test('export, import and diff carry fallback lists, rule precedence and a contact\'s preferred order', async () => {
  await sim('x-1');
  await sim('x-2');
  await createRule(t.call, 'sos-relay', {
    match: { direction: 'outbound', to: ['sos'] }, action: 'forward', precedence: 'flash',
    destinations: [{ fallback: [{ interface: 'x-1', to: 'peer', ack_within_s: 60 }, { interface: 'x-2', to: 'peer', ack_within_s: 300 }], strategy: 'ordered', keep_trying: true }],
  });
  await t.call('POST', '/api/contacts', { body: { name: 'ranger', addresses: { mesh: '!0000aaaa', sms: '+4915100000001' }, prefer: ['sms', 'mesh'] } });
  const file = JSON.parse((await t.call('GET', '/api/config/export')).text);
  const rule = file.access_rules.find((r: any) => r.name === 'sos-relay');
  assert.equal(rule.destinations, [{ fallback: [{ interface: 'x-1', to: 'peer', ack_within_s: 60 }, { interface: 'x-2', to: 'peer', ack_within_s: 300 }], strategy: 'ordered', keep_trying: true }]);
  assert.is(rule.precedence, 'flash');
  assert.equal(file.contacts.find((c: any) => c.name === 'ranger').prefer, ['sms', 'mesh']);
  const diff = await t.call('POST', '/api/config/diff', { body: file });
  assert.is(diff.status, 200, diff.text);
  assert.equal(diff.body.changes, []);
  // Changing the order and the strategy shows in the diff and survives an import.
  const changed = structuredClone(file);
  changed.contacts.find((c: any) => c.name === 'ranger').prefer = ['mesh', 'sms'];
  changed.access_rules.find((r: any) => r.name === 'sos-relay').destinations[0].strategy = 'first_available';
  const d2 = await t.call('POST', '/api/config/diff', { body: changed });
  assert.equal(d2.body.changes.map((c: any) => c.path).sort(), ['access_rules[name=sos-relay].destinations[0].strategy', 'contacts[name=ranger].prefer[0]', 'contacts[name=ranger].prefer[1]'].sort());
  assert.is((await t.call('POST', '/api/config/import', { body: changed })).status, 200);
  const again = JSON.parse((await t.call('GET', '/api/config/export')).text);
  assert.equal(again.contacts.find((c: any) => c.name === 'ranger').prefer, ['mesh', 'sms']);
  assert.is(again.access_rules.find((r: any) => r.name === 'sos-relay').destinations[0].strategy, 'first_available');
  assert.equal((await t.call('GET', '/api/contacts/ranger')).body.prefer, ['mesh', 'sms']);
});

test('ordered: the last member past its deadline keeps trying (the list stays active) and its late delivery is the outcome', async () => {
  await sim('last-j', { behaviour: 'ack_after', ack_ms: 5_000 });
  const to = await routeTo({ fallback: [{ interface: 'last-j', to: 'peer', ack_within_s: 2 }] });
  const sent = await send(to);
  await until('on the air', async () => (await delivery(sent.deliveries[0].id)).state === 'sending');
  clock.advance(2_000);
  await until('the deadline passed', async () => (await story(sent.message.id)).fallbacks[0].trace.some((e: any) => e.event === 'escalated'));
  const mid = await story(sent.message.id);
  assert.equal([mid.fallbacks[0].state, mid.items[0].state], ['active', 'sending'], 'not given up, not cancelled');
  clock.advance(3_000);
  const s = await until('delivered', async () => {
    const st = await story(sent.message.id);
    return st.fallbacks[0].state === 'delivered' && st;
  });
  assert.is(s.fallbacks[0].outcome, 'delivered via last-j');
});

test('SOS across a restart: the legs keep trying after the bridge comes back, and the first acknowledgement stops the others', async () => {
  await sim('sos-r1', { behaviour: 'fail' }, { retry: { max_attempts: 1, base_s: 1, cap_s: 1 } });
  await sim('sos-r2', { behaviour: 'fail' }, { retry: { max_attempts: 1, base_s: 1, cap_s: 1 } });
  const to = await routeTo({ fallback: [{ interface: 'sos-r1', to: 'peer' }, { interface: 'sos-r2', to: 'peer' }], strategy: 'all' });
  const sent = await send(to, { precedence: 'override', ttl_s: null });
  clock.advance(5_000);
  await until('both legs retried past max_attempts 1', async () => (await story(sent.message.id)).items.every((d) => d.attempts >= 2 && d.state === 'retrying'));
  await t.stop();
  t = await startTestBridge({ clock, dir });
  const before = (await story(sent.message.id)).items.map((d) => d.attempts);
  for (let i = 0; i < 3; i++) {
    clock.advance(5_000);
    await settle();
  }
  await until('still trying after the restart', async () => {
    const items = (await story(sent.message.id)).items;
    return items.every((d, i) => d.attempts > before[i] && d.state !== 'dead') && items;
  });
  // sos-r2 gets through: it is delivered and sos-r1 stops.
  const put = await t.call('PUT', '/api/interfaces/sos-r2', { body: { name: 'sos-r2', settings: { behaviour: 'deliver' }, transforms: { inbound: [], outbound: [] }, retry: { max_attempts: 1, base_s: 1, cap_s: 1 } } });
  assert.is(put.status, 200, put.text);
  clock.advance(5_000);
  const s = await until('delivered on sos-r2, sos-r1 superseded', async () => {
    const st = await story(sent.message.id);
    return st.fallbacks[0].state === 'delivered' && st.items.some((d) => d.state === 'cancelled') && st;
  });
  const [r1, r2] = s.items;
  assert.equal([r1.state, r2.state], ['cancelled', 'delivered']);
  assert.match(r1.last_error, /^superseded: delivered via sos-r2/);
});

test.run();
