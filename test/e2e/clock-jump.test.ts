import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { expectStatus, liftSendLimit, type RestartableBridge, startBridgeProcess, waitUntil } from '../helpers/api.ts';

// Issue 30 acceptance, on the real process: its wall clock is moved under it with libfaketime
// (Debian's faketime, reading the offset from a file the test rewrites), the monotonic clock
// left real, as NTP or `date -s` would move it on a Raspberry Pi.
//
// 1. It runs 30 days behind, then the clock jumps to the real time (NTP arrives): its retrying
//    deliveries do not expire, and at the next start retention (7 days) prunes nothing.
// 2. Restarted 30 days behind the time it last knew: a waiting retry goes within its backoff.
// Health reports the jump both times.

const LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const dir = mkdtempSync(join(tmpdir(), 'fb-clock-jump-'));
const offsetFile = join(dir, 'faketime');
let bridge: RestartableBridge | undefined;

/** The environment that puts the process's wall clock at the offset in `offsetFile`. */
function shifted(): Record<string, string> {
  return {
    LD_PRELOAD: LIB, FAKETIME_TIMESTAMP_FILE: offsetFile, FAKETIME_CACHE_DURATION: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1',
    // An outer faketime (scripts/test.sh's second run) sets FAKETIME, which would win over the
    // file: left out of the child's environment (spawn drops undefined values).
    FAKETIME: undefined as unknown as string,
  };
}

test.after(async () => {
  await bridge?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function health(b: RestartableBridge): Promise<any> {
  return (await b.call('GET', '/api/health', { key: null })).body;
}

async function flaky(b: RestartableBridge, retryS: number, ttlS: number): Promise<void> {
  await expectStatus(b.call, 201, 'POST', '/api/interfaces', { name: 'flaky', kind: 'sim', device: 'sim://jump-flaky', settings: { behaviour: 'fail' }, retry: { base_s: retryS, cap_s: retryS, ttl_s: ttlS, max_attempts: 100 } });
  await expectStatus(b.call, 201, 'POST', '/api/access-rules', { name: 'to-flaky', match: { direction: 'outbound' }, schedule: null, action: 'forward', destinations: [{ interface: 'flaky', to: '{to}' }] });
}

const deliveries = async (b: RestartableBridge) => (await expectStatus(b.call, 200, 'GET', '/api/deliveries?limit=100')).items as any[];

test('libfaketime is installed (scripts/setup-services.sh installs Debian\'s faketime)', () => {
  assert.ok(existsSync(LIB), `${LIB} is missing: apt-get install faketime`);
});

test('30 days behind, then NTP sets the clock while running: nothing expires, retention prunes nothing at the next start', async () => {
  writeFileSync(offsetFile, '-30d\n');
  const dbPath = join(dir, 'ahead.db');
  bridge = await startBridgeProcess(dbPath, { ...shifted(), SERVICE_RETENTION_DAYS: '7' });
  await liftSendLimit(bridge.call);
  const behind = Date.parse((await health(bridge)).clock.time);
  await flaky(bridge, 30, 3600);
  for (let i = 0; i < 4; i++) await expectStatus(bridge.call, 202, 'POST', '/api/messages/send', { to: `!jump${i}`, text: `before the jump ${i}` });
  await waitUntil('all retrying', async () => ((await deliveries(bridge!)).every((d) => d.state === 'retrying') ? true : undefined), 10_000, 100);

  writeFileSync(offsetFile, '+0\n');
  const jump = await waitUntil('the jump seen', async () => (await health(bridge!)).clock.last_jump ?? undefined, 20_000, 250);
  assert.is(jump.when, 'running');
  assert.ok(Math.abs(jump.seconds - 30 * 86_400) < 120, JSON.stringify(jump));
  assert.match(jump.action, /4 deliveries/);
  const now = await health(bridge);
  assert.ok(Date.parse(now.clock.time) - behind > 29 * 86_400_000, 'the bridge took the new time');
  assert.is(now.clock.source, 'system');
  // The expiry check runs right after a re-base (the queues are read again): still retrying.
  await new Promise((r) => setTimeout(r, 1500));
  const after = await deliveries(bridge);
  assert.ok(after.every((d) => d.state === 'retrying'), JSON.stringify(after.map((d) => [d.state, d.last_error])));
  // Each delivery's expiry is still an hour after its message was made, by the new clock.
  for (const d of after) assert.ok(Date.parse(d.expires_at) - Date.parse(now.clock.time) > 3000_000, `${d.expires_at} vs ${now.clock.time}`);

  await bridge.stop();
  writeFileSync(offsetFile, '+0\n');
  bridge = await startBridgeProcess(dbPath, { ...shifted(), SERVICE_RETENTION_DAYS: '7' });
  const kept = await expectStatus(bridge.call, 200, 'GET', '/api/messages?limit=100');
  assert.is(kept.items.length, 4, 'retention pruned nothing that is minutes old');
  await bridge.stop();
  bridge = undefined;
});

test('restarted 30 days behind the time it last knew: the waiting retry goes within its backoff', async () => {
  writeFileSync(offsetFile, '+0\n');
  const dbPath = join(dir, 'behind.db');
  bridge = await startBridgeProcess(dbPath, shifted());
  await liftSendLimit(bridge.call);
  await flaky(bridge, 8, 86_400);
  await expectStatus(bridge.call, 202, 'POST', '/api/messages/send', { to: '!behind', text: 'waiting' });
  const [first] = await waitUntil('retrying', async () => {
    const list = await deliveries(bridge!);
    return list.length === 1 && list[0].state === 'retrying' ? list : undefined;
  }, 10_000, 100);
  const knew = Date.parse((await health(bridge)).clock.time);
  await bridge.stop();

  writeFileSync(offsetFile, '-30d\n');
  bridge = await startBridgeProcess(dbPath, shifted());
  const h = await health(bridge);
  assert.is(h.clock.source, 'last_good');
  assert.is(h.clock.last_jump.when, 'start');
  assert.ok(h.clock.last_jump.seconds < -29 * 86_400, JSON.stringify(h.clock));
  assert.ok(h.clock.system_offset_s < -29 * 86_400);
  assert.ok(Date.parse(h.clock.time) >= knew, 'counts on from the time it knew');
  // The backoff is drawn up to 8 s: well within 15 s, not a month.
  await waitUntil('tried again', async () => {
    const [d] = await deliveries(bridge!);
    return d.attempts > first.attempts ? d : undefined;
  }, 15_000, 250);
});

test.run();
