import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openBridgeDatabase } from '../../../src/bridge/app.ts';
import { CHECK_EVERY_MS, ClockGuard } from '../../../src/bridge/clock/guard.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { idTime } from '../../../src/lib/ids.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { createRule, createSim, sendText, settle } from '../../helpers/routing.ts';

// Issue 30, the wall clock: a Raspberry Pi without a real-time clock boots with a saved time and
// jumps when NTP arrives. The bridge's own clock (src/bridge/clock/guard.ts) must neither expire,
// retry late nor prune because of a jump, keep its ids increasing, and say what happened.

const DAY = 86_400_000;
const REAL = Date.parse('2026-06-15T12:00:00.000Z');

async function deliveriesOf(t: TestBridge): Promise<any[]> {
  return (await t.call('GET', '/api/deliveries?limit=100')).body.items;
}

/** A sim that always fails, retrying every `retryS` seconds for up to `ttlS`, and a rule to it. */
async function flaky(t: TestBridge, retryS: number, ttlS: number): Promise<void> {
  await createSim(t.call, 'flaky', { device: 'sim://clock-flaky', settings: { behaviour: 'fail' }, retry: { base_s: retryS, cap_s: retryS, ttl_s: ttlS, max_attempts: 100 } });
  await createRule(t.call, 'to-flaky', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'flaky', to: '{to}' }] });
}

/** Advances the fake clock in steps, letting the bridge's promises run between them. */
async function pass(clock: FakeClock, ms: number, step = 1000): Promise<void> {
  for (let done = 0; done < ms; done += step) {
    clock.advance(Math.min(step, ms - done));
    await settle();
  }
}

test('NTP arriving 30 days ahead while running: nothing expires, nothing is pruned, health shows the jump', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-clock-'));
  // The Pi booted 30 days behind and ran like that.
  const clock = new FakeClock(REAL - 30 * DAY);
  let t = await startTestBridge({ clock, dir, retentionDays: 7 });
  try {
    await flaky(t, 60, 3600);
    for (let i = 0; i < 4; i++) await sendText(t.call, `!node${i}`, `before the jump ${i}`);
    await pass(clock, 5000);
    assert.ok((await deliveriesOf(t)).every((d) => d.state === 'retrying'), JSON.stringify(await deliveriesOf(t)));
    const before = (await deliveriesOf(t)).map((d) => d.attempts);

    clock.stepWall(30 * DAY);
    await pass(clock, CHECK_EVERY_MS);
    const health = (await t.call('GET', '/api/health', { key: null })).body;
    assert.is(health.clock.source, 'system');
    assert.is(health.clock.last_jump.when, 'running');
    assert.ok(Math.abs(health.clock.last_jump.seconds - 30 * 86_400) < 60, JSON.stringify(health.clock));
    assert.match(health.clock.last_jump.action, /4 deliveries.*4 messages/);
    assert.ok(Math.abs(Date.parse(health.clock.time) - clock.now()) < 1000, 'the bridge took the new time');

    // Each keeps retrying (the waits are drawn up to a minute): not expired at the jump.
    await pass(clock, 65_000);
    const after = await deliveriesOf(t);
    assert.ok(after.every((d) => d.state === 'retrying'), JSON.stringify(after));
    after.forEach((d, i) => assert.ok(d.attempts > before[i], `attempts ${before[i]} -> ${d.attempts}`));
    // A message sent now sorts after the ones before the jump.
    const late = await sendText(t.call, '!node9', 'after the jump');
    assert.ok(Math.abs(idTime(late.message.id) - clock.now()) < 2000);

    // The TTL still counts, from the real age: gone an hour after they were made.
    await pass(clock, 3600_000, 60_000);
    assert.ok((await deliveriesOf(t)).filter((d) => d.message_id !== late.message.id).every((d) => d.state === 'expired'));

    // Retention (7 days) at the next start keeps what is minutes old.
    await t.stop();
    t = await startTestBridge({ clock, dir, retentionDays: 7 });
    const messages = (await t.call('GET', '/api/messages?limit=100')).body.items;
    assert.is(messages.length, 5, 'no message pruned because of the jump');
  } finally {
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('restarted 30 days behind the last good time: waiting retries go within their backoff, health says why', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-clock-'));
  const first = new FakeClock(REAL);
  let t = await startTestBridge({ clock: first, dir });
  try {
    await flaky(t, 120, 86_400);
    await sendText(t.call, '!node1', 'waiting');
    await pass(first, 2000);
    const [d] = await deliveriesOf(t);
    assert.is(d.state, 'retrying');
    await t.stop();

    // Power cut, and the Pi comes back with a clock a month behind.
    const second = new FakeClock(REAL - 30 * DAY + 10_000);
    t = await startTestBridge({ clock: second, dir });
    const health = (await t.call('GET', '/api/health', { key: null })).body;
    assert.is(health.clock.source, 'last_good');
    assert.is(health.clock.last_jump.when, 'start');
    assert.ok(health.clock.last_jump.seconds < -29 * 86_400, JSON.stringify(health.clock));
    assert.ok(Date.parse(health.clock.time) >= REAL, 'the bridge counts on from the last good time');

    await pass(second, 125_000, 5000);
    const [again] = await deliveriesOf(t);
    assert.ok(again.attempts > d.attempts, `tried again within its 120 s backoff: ${d.attempts} -> ${again.attempts}`);
    // Ids made now sort after the ones made before the restart.
    const sent = await sendText(t.call, '!node2', 'after');
    assert.ok(sent.message.id > d.message_id);
  } finally {
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a 30-day backward step while running: sends are not refused, ids keep increasing, a fallback deadline escalates on time', async () => {
  const clock = new FakeClock(REAL);
  const t = await startTestBridge({ clock, rateLimit: true });
  try {
    await createSim(t.call, 'mute', { device: 'sim://clock-mute', settings: { behaviour: 'never_ack' } });
    await createSim(t.call, 'ok', { device: 'sim://clock-ok' });
    await createRule(t.call, 'fallback', {
      match: { direction: 'outbound' }, action: 'forward',
      destinations: [{ strategy: 'ordered', fallback: [{ interface: 'mute', to: '{to}', ack_within_s: 6 }, { interface: 'ok', to: '{to}' }] }],
    });
    const first = await sendText(t.call, '!node1', 'before');
    await pass(clock, 1000);

    clock.stepWall(-30 * DAY);
    await pass(clock, CHECK_EVERY_MS);
    const health = (await t.call('GET', '/api/health', { key: null })).body;
    assert.ok(health.clock.system_offset_s < -29 * 86_400, JSON.stringify(health.clock));
    assert.ok(health.clock.last_jump.seconds < -29 * 86_400);
    assert.match(health.clock.last_jump.action, /keeps counting its own time/);

    // The first message's deadline (6 s) fell during those 10 s: it went through the second member.
    const legs = (await t.call('GET', `/api/deliveries/message/${first.message.id}`)).body.items;
    assert.ok(legs.some((d: any) => d.interface_name === 'ok' || d.state === 'delivered'), JSON.stringify(legs));

    const sent = [];
    for (let i = 0; i < 5; i++) {
      const r = await t.call('POST', '/api/messages/send', { body: { to: `!n${i}`, text: 'after the step' } });
      assert.is(r.status, 202, r.text);
      sent.push(r.body.message.id);
    }
    assert.ok(sent.every((id) => id > first.message.id), 'ids made after the step sort after the ones before');
    await pass(clock, 7000);
    for (const id of sent) {
      const items = (await t.call('GET', `/api/deliveries/message/${id}`)).body.items;
      assert.ok(items.some((d: any) => d.state === 'delivered'), `escalated to the second member on time: ${JSON.stringify(items)}`);
    }
  } finally {
    await t.stop();
  }
});

test('a radio\'s time is taken only when the operator allows its kind, only forwards, and health names it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-clock-'));
  const db = openBridgeDatabase(join(dir, 'bridge.db'));
  try {
    const clock = new FakeClock(Date.parse('1970-01-02T00:00:00.000Z'));
    const lines: string[] = [];
    const guard = new ClockGuard(db, clock, createLogger({ format: 'json', write: (l) => lines.push(l) }));
    const allowed = new Set<string>();
    guard.start({ allows: (source) => allowed.has(source) });
    assert.not.ok(guard.offer('iridium', REAL), 'not allowed: ignored');
    allowed.add('iridium');
    assert.not.ok(guard.offer('iridium', guard.clock.now() - DAY), 'behind: ignored');
    assert.not.ok(guard.offer('iridium', guard.clock.now() + 5000), 'within 30 s: ignored');
    assert.ok(guard.offer('iridium', REAL));
    assert.ok(Math.abs(guard.clock.now() - REAL) < 10);
    const status = guard.status();
    assert.is(status.source, 'iridium');
    assert.is(status.last_jump?.source, 'iridium');
    assert.ok(lines.some((l) => l.includes('clock_jump')));
    // The system clock (still 1970) is behind now: the bridge keeps the radio's time.
    clock.advance(CHECK_EVERY_MS);
    assert.ok(guard.clock.now() >= REAL);
    assert.is(guard.status().source, 'iridium');
    guard.stop();
    // And the next start counts on from it.
    const again = new ClockGuard(db, new FakeClock(Date.parse('1970-01-02T00:00:00.000Z')), createLogger({ write: () => {} }));
    assert.ok(again.clock.now() >= REAL);
    assert.is(again.status().source, 'last_good');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
