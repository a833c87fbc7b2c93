import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { iridiumSimGateway } from '../../src/bearers/iridium/simulator/link.ts';
import { FakeClock } from '../../src/lib/clock.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';
import { createIridiumInterface, health, interfaceStats, keepProcessAlive, waitUntil } from '../helpers/iridium.ts';
import { createRule } from '../helpers/routing.ts';

// The credit budget through a whole bridge on a fake clock (docs/iridium.md, "Credits and
// budget"): an iridium interface on sim:// with credits_per_day 3 and ten 60-byte messages
// (2 credits each) to send. Each UTC day exactly one goes; the other messages wait without
// spending an attempt, with the reason in health, until the next midnight. A restart on the
// same database keeps the day's spent credits. Only the bridge's clock is fake: the
// simulated gateway keeps the system clock, which no check here depends on.

const DAY_MS = 86_400_000;
const clock = new FakeClock(Date.parse('2026-03-10T09:00:00.000Z'));
const CHANNEL = `iridium-budget-${process.pid}`;
const gateway = iridiumSimGateway(CHANNEL);
const dir = mkdtempSync(join(tmpdir(), 'fb-iridium-budget-'));
const TEXTS = Array.from({ length: 10 }, (_, i) => `Messwert ${String(i + 1).padStart(2, '0')}: `.padEnd(60, '.'));
let t: TestBridge;
let ifc: string;
let release: () => void;

const iso = (ms: number) => new Date(ms).toISOString();
const nextMidnight = () => (Math.floor(clock.now() / DAY_MS) + 1) * DAY_MS;
const budgetWait = () => `ERR_IRIDIUM_BUDGET: today's budget of 3 credits has 1 left, 2 needed; waiting until ${iso(nextMidnight())}`;

async function deliveries(): Promise<any[]> {
  const r = await t.call('GET', `/api/deliveries?interface=${ifc}&limit=100`);
  assert.is(r.status, 200, r.text);
  return r.body.items;
}

/** Waits until `delivered` deliveries are delivered and every other one waits (in one of
 *  `waiting`) for the next midnight; returns them all. */
function settled(delivered: number, waitingStates = ['retrying']): Promise<any[]> {
  return waitUntil(`${delivered} delivered, the rest waiting for midnight`, async () => {
    const all = await deliveries();
    const done = all.filter((d) => d.state === 'delivered').length;
    const waiting = all.filter((d) => waitingStates.includes(d.state) && d.next_attempt_at === iso(nextMidnight())).length;
    return done === delivered && waiting === all.length - delivered && all;
  }, 10_000);
}

/** What a day ends with: `day` messages delivered in all, one more today, the rest waiting
 *  for the budget with no attempt spent; 2 credits spent today, 1 left. */
async function dayEnds(day: number, waitingStates = ['retrying']): Promise<void> {
  const all = await settled(day, waitingStates);
  assert.is(all.length, 10);
  for (const d of all.filter((x) => x.state !== 'delivered')) {
    assert.is(d.attempts, 0, `no attempt spent: ${JSON.stringify(d)}`);
    assert.is(d.last_error, budgetWait());
  }
  const today = all.filter((d) => d.state === 'delivered' && d.finished_at.slice(0, 10) === iso(clock.now()).slice(0, 10));
  assert.is(today.length, 1, 'one delivered today');
  assert.is(today[0].attempts, 1);
  assert.equal(today[0].result, { momsn: gateway.received.at(-1)!.momsn, mo_status: 0, credits: 2 });
  assert.is(gateway.received.length, day);
  const s = await interfaceStats(t, ifc);
  assert.equal([s.credits_today, s.credits_left_today, s.credits_this_month, s.credits_total], [2, 1, 2 * day, 2 * day]);
}

/** Moves the bridge's clock a second past the next UTC midnight. */
function toNextDay(): void {
  clock.advance(nextMidnight() - clock.now() + 1000);
}

test.before(async () => {
  release = keepProcessAlive();
  t = await startTestBridge({ clock, dir });
  const created = await createIridiumInterface(t, 'sat', `sim://${CHANNEL}`, { credits_per_day: 3 }, { base_s: 1, cap_s: 1, max_attempts: 3, ttl_s: 10 * 86_400 });
  ifc = created.id;
  await createRule(t.call, 'out-to-sat', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'sat', to: 'gateway' }] });
  await waitUntil('sat online and registered', async () => {
    const h = await health(t, 'sat');
    return h.phase === 'online' && h.device.registered === true;
  });
});

test.after(async () => {
  try {
    await t?.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
    release?.();
  }
});

test('day 1: of ten 60-byte messages one goes (2 credits of 3); nine wait for the budget, no attempt spent', async () => {
  for (const text of TEXTS) {
    assert.is(Buffer.byteLength(text), 60);
    const r = await t.call('POST', '/api/messages/send', { body: { to: 'gateway', text } });
    assert.is(r.status, 202, r.text);
  }
  await dayEnds(1);
  const h = await health(t, 'sat');
  assert.is(h.connected, true);
  assert.is(h.phase, 'waiting');
  assert.is(h.last_error, budgetWait());
  assert.is(h.device.waiting, budgetWait());
  assert.equal([h.device.credits_today, h.device.credits_left_today], [2, 1]);
});

test('day 2: past midnight the next one goes, and again only one', async () => {
  toNextDay();
  await dayEnds(2);
});

test('a restart on day 2 keeps the spent credits: a waiting message retried at once still waits', async () => {
  await t.stop();
  t = await startTestBridge({ clock, dir });
  const h = await waitUntil('sat online and registered again', async () => {
    const x = await health(t, 'sat');
    return x.phase === 'online' && x.device.registered === true && x;
  });
  assert.equal([h.device.credits_today, h.device.credits_left_today, h.device.credits_total], [2, 1, 4]);
  // While the bridge was down its waiting deliveries were held; released, the ones never
  // tried are `pending` again, still due at midnight.
  const WAITING = ['pending', 'retrying'];
  const waiting = (await settled(2, WAITING)).find((d) => d.state !== 'delivered');
  const r = await t.call('POST', `/api/deliveries/${waiting.id}/retry`);
  assert.is(r.status, 200, r.text);
  assert.is(r.body.next_attempt_at, iso(clock.now()), 'due now');
  // Tried now, it meets the ledger the first bridge wrote: back to waiting, nothing sent.
  await waitUntil('the retried message to wait again', async () => {
    const d = (await t.call('GET', `/api/deliveries/${waiting.id}`)).body;
    return d.state === 'retrying' && d.next_attempt_at === iso(nextMidnight());
  }, 10_000);
  await dayEnds(2, WAITING);
  const after = await health(t, 'sat');
  assert.is(after.phase, 'waiting');
  assert.is(after.device.waiting, budgetWait());
});

test('day 3: one more; after three days 3 delivered, 6 credits, never more than 3 a day, none dead', async () => {
  toNextDay();
  await dayEnds(3);
  const all = await deliveries();
  const days = all.filter((d) => d.state === 'delivered').map((d) => d.finished_at.slice(0, 10)).sort();
  assert.equal(days, ['2026-03-10', '2026-03-11', '2026-03-12']);
  assert.is(all.filter((d) => d.state === 'retrying').length, 7);
  assert.is(all.filter((d) => d.state === 'dead' || d.state === 'expired').length, 0);
  const sent = gateway.received.map((m) => Buffer.from(m.payload).toString('utf8'));
  assert.is(new Set(sent).size, 3, 'three different messages, none sent twice');
  assert.ok(sent.every((s) => TEXTS.includes(s)));
  const s = await interfaceStats(t, ifc);
  assert.equal([s.sessions, s.sessions_failed, s.sent, s.mailbox_checks, s.credits_total], [1, 0, 1, 0, 6], 'counters since the restart; the ledger since the start');
});

test.run();
