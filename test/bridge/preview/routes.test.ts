import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { expectOk } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createSim } from '../../helpers/routing.ts';

// POST /api/messages/preview (issue 17, docs/routing.md "Preview"): a forward rule to an SMS and
// an Iridium interface is previewed with its parts and credits while nothing is stored, sent or
// counted; a time outside a rule's schedule shows that rule skipped and the next one deciding.

// Friday 2026-11-27 12:00 UTC.
const clock = new FakeClock(Date.parse('2026-11-27T12:00:00.000Z'));
let t: TestBridge;
test.before(async () => {
  t = await startTestBridge({ clock, rateLimit: true });
  // One send a minute, burst 1: a preview that took from the bucket would leave none for the send at the end.
  t.bridge.services.config.write('routing', { rate_limit: { sends_per_minute: 1, burst: 1 } }, 'test');
});
test.after(async () => {
  await t.stop();
});

const ok = (method: string, path: string, body?: unknown) => expectOk(t.call, method, path, body);

/** Everything a preview must leave alone. */
async function snapshot() {
  t.bridge.services.audit.flush();
  const rules = (await ok('GET', '/api/access-rules')).items.map((r: any) => [r.name, r.fired, r.last_fired_at]);
  return {
    messages: (await ok('GET', '/api/messages')).items.length,
    deliveries: (await ok('GET', '/api/deliveries')).items.length,
    audit: (await ok('GET', '/api/audit')).items.length,
    rules,
    sms: (await ok('GET', '/api/interfaces/sms-0/stats')).stats,
    sat: (await ok('GET', '/api/interfaces/iridium-0/stats')).stats,
  };
}

test('a forward rule to SMS and Iridium: both deliveries with parts and credits; nothing stored, sent or counted', async () => {
  await createSim(t.call, 'mesh-0', { device: 'sim://preview' });
  await ok('POST', '/api/interfaces', { name: 'sms-0', kind: 'sms', settings: { parts_per_day: 5 } });
  await ok('POST', '/api/interfaces', { name: 'iridium-0', kind: 'iridium', settings: { credits_per_day: 3 } });
  await ok('POST', '/api/object-groups', { name: 'field-team', members: ['!a1b2c3d4'] });
  await ok('POST', '/api/contacts', { name: 'duty-officer', addresses: { sms: '+4915112345678' } });
  await ok('POST', '/api/access-rules', {
    name: 'sat-alerts', match: { direction: 'inbound', from: ['@field-team'], text: { contains: 'SOS' } }, schedule: null, action: 'forward',
    destinations: [{ interface: 'iridium-0', to: 'gateway' }, { interface: 'sms-0', to: '@duty-officer' }],
  });
  const before = await snapshot();
  const text = `SOS ${'x'.repeat(200)}`; // 204 GSM-7 characters: 2 SMS parts; 204 bytes: 5 credits
  const r = await t.call('POST', '/api/messages/preview', { body: { mode: 'mesh-rx', interface: 'mesh-0', from: '!A1B2C3D4', text } });
  assert.is(r.status, 200, r.text);
  assert.is(r.body.mode, 'mesh-rx');
  assert.is(r.body.at, '2026-11-27T12:00:00.000Z');
  assert.is(r.body.parts.length, 1);
  const part = r.body.parts[0];
  assert.is(part.message.text, text);
  assert.is(part.message.interface, 'mesh-0');
  assert.is(part.decision.rule, 'sat-alerts');
  assert.is(part.decision.action, 'forward');
  assert.match(part.decision.reason, /rule 'sat-alerts' matched: direction inbound, from in @field-team, text contains 'SOS'/);
  assert.equal(part.rules.map((x: any) => [x.name, x.outcome]), [['sat-alerts', 'decided']]);
  const [sat, sms] = part.deliveries;
  assert.equal([sat.interface, sat.kind, sat.state, sat.to, sat.address], ['iridium-0', 'iridium', 'unbound', 'gateway', 'gateway']);
  assert.equal(sat.frames.map((f: any) => [f.bytes, f.credits, f.fits]), [[204, 5, true]]);
  assert.is(sat.mtu, 340);
  assert.is(sat.fits_mtu, true);
  assert.equal(sat.budget.allows, false, 'five credits are more than a day of three');
  assert.match(sat.budget.reason, /ERR_IRIDIUM_BUDGET/);
  assert.equal(sat.cost, { unit: 'iridium_credits', amount: 5, money: null });
  assert.equal([sms.interface, sms.kind, sms.state, sms.to, sms.address], ['sms-0', 'sms', 'unbound', '+4915112345678', '+4915112345678']);
  assert.equal(sms.frames.map((f: any) => [f.bytes, f.encoding, f.parts, f.fits]), [[204, 'gsm7', 2, true]]);
  assert.equal(sms.budget, { allows: true, reason: null });
  assert.equal(sms.cost, { unit: 'sms_parts', amount: 2, money: null });
  assert.match(sms.waiting_for, /unbound/);

  // The same through mode send, and a few more: still nothing changes.
  for (let i = 0; i < 3; i++) {
    const s = await t.call('POST', '/api/messages/preview', { body: { mode: 'send', to: '+4915112345678', text: 'hello' } });
    assert.is(s.status, 200, s.text);
  }
  assert.equal(await snapshot(), before, 'no message, delivery, audit entry, rule count or budget changed');
  // The send rate bucket (burst 1) is untouched: the one real send goes through.
  assert.is((await t.call('POST', '/api/messages/send', { body: { to: 'nobody', text: 'real' } })).status, 202);
});

test('at a time outside a rule\'s schedule: that rule is skipped for its schedule and the next decides', async () => {
  await ok('POST', '/api/access-rules', {
    name: 'office-hours', match: { direction: 'outbound', text: { contains: 'report' } }, action: 'forward',
    schedule: { timezone: 'UTC', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' }] },
    destinations: [{ interface: 'sms-0', to: '+4915112345678' }],
  });
  await ok('POST', '/api/access-rules', { name: 'keep', match: { direction: 'outbound' }, action: 'store' });
  const at = (when?: string) => t.call('POST', '/api/messages/preview', { body: { mode: 'send', to: 'ops', text: 'daily report', ...(when ? { at: when } : {}) } });
  const now = (await at()).body.parts[0];
  assert.is(now.decision.rule, 'office-hours', 'Friday noon is inside the window');
  const sunday = await at('2026-11-29T03:00:00Z');
  assert.is(sunday.status, 200, sunday.text);
  const part = sunday.body.parts[0];
  assert.is(sunday.body.at, '2026-11-29T03:00:00.000Z');
  const office = part.rules.find((x: any) => x.name === 'office-hours');
  assert.is(office.outcome, 'off_schedule');
  assert.is(office.filters.matched, true);
  assert.equal(office.schedule, { active: false, reason: 'outside every window, now sun 03:00 UTC' });
  assert.is(part.decision.rule, 'keep');
  assert.is(part.decision.action, 'store');
  assert.equal(part.deliveries, []);
  const sat = part.rules.find((x: any) => x.name === 'sat-alerts');
  assert.equal([sat.outcome, sat.filters.failed], ['no_match', { filter: 'direction', reason: 'the message is outbound, the rule wants inbound' }]);
  // An offset is accepted and read as the instant it names.
  assert.is((await at('2026-11-29T04:00:00+01:00')).body.at, '2026-11-29T03:00:00.000Z');
});

test('bad bodies are 400 naming the field; mesh-rx checks its interface as simulate-mesh-rx does', async () => {
  assertProblem(await t.call('POST', '/api/messages/preview', { body: { to: 'x', text: 'a' } }), 400, [], /mode must be/);
  assertProblem(await t.call('POST', '/api/messages/preview', { body: { mode: 'send', to: 'x' } }), 400, ['body.text']);
  assertProblem(await t.call('POST', '/api/messages/preview', { body: { mode: 'send', to: 'x', text: 'a', at: 'sunday' } }), 400, ['body.at']);
  assertProblem(await t.call('POST', '/api/messages/preview', { body: { mode: 'mesh-rx', from: '!a', text: 'a', interface: 'sms-0' } }), 400, ['body.interface'], /sms interface/);
  assertProblem(await t.call('POST', '/api/messages/preview', { body: { mode: 'mesh-rx', from: '!a', text: 'a', interface: 'mesh-0', precedence: 'flash' } }), 400, ['body']);
  assertProblem(await t.call('POST', '/api/messages/preview', { key: null, body: { mode: 'send', to: 'x', text: 'a' } }), 401);
});

test('frames after outbound transforms, a fallback list, an MTU that does not fit', async () => {
  await ok('POST', '/api/interfaces', { name: 'sms-split', kind: 'sms', settings: { max_parts: 1 }, transforms: { inbound: [], outbound: [{ type: 'prefix', text: '[{from}] ' }, { type: 'split', max_bytes: 100 }] } });
  await createSim(t.call, 'sim-small', { device: 'sim://small', settings: { mtu: 20 } });
  await ok('POST', '/api/access-rules', {
    name: 'fan', match: { text: { contains: 'fan' } }, action: 'forward',
    destinations: [{ interface: 'sms-split', to: '+4915112345678' }, { interface: 'sim-small', to: '!0000beef' },
      { strategy: 'ordered', fallback: [{ interface: 'iridium-0', to: 'RB1234' }, { interface: 'mesh-0', to: '{to}' }] }],
  });
  const order = (await ok('GET', '/api/access-rules')).items.map((r: any) => r.name);
  await ok('POST', '/api/access-rules/reorder', { order: ['fan', ...order.filter((n: string) => n !== 'fan')] });
  const r = await t.call('POST', '/api/messages/preview', { body: { mode: 'send', to: '!a1b2c3d4', text: `fan ${'ж'.repeat(120)}` } });
  assert.is(r.status, 200, r.text);
  const part = r.body.parts[0];
  assert.is(part.decision.rule, 'fan');
  const [sms, sim] = part.deliveries;
  // "[local] fan " + 120 ж = 252 bytes: split into 100-byte parts, each one UCS-2 SMS (max_parts 1).
  assert.is(sms.frames.length, 3);
  assert.ok(sms.frames.every((f: any) => f.encoding === 'ucs2' && f.parts === 1 && f.fits), JSON.stringify(sms.frames));
  assert.match(sms.frames[0].text, /^\(1\/3\) \[local\] fan ж/);
  assert.equal(sms.cost, { unit: 'sms_parts', amount: 3, money: null });
  assert.equal([sim.state, sim.mtu, sim.fits_mtu], ['connected', 20, false]);
  assert.match(sim.frames[0].error, /larger than the interface's MTU of 20/);
  const [list] = part.fallback_lists;
  assert.is(list.strategy, 'ordered');
  assert.equal(list.members.map((m: any) => [m.interface, m.to, m.cannot_take, m.would_start]), [['iridium-0', 'RB1234', 'unbound', false], ['mesh-0', '!a1b2c3d4', null, true]]);
  assert.equal(list.members[0].delivery.frames.map((f: any) => [f.bytes, f.credits]), [[9 + 4 + 240, 6]], 'a RockBLOCK destination adds its 9-byte prefix');
});

test.run();
