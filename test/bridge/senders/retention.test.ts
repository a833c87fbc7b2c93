import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RetentionWorker, USAGE_KEEP_DAYS } from '../../../src/bridge/messages/retention.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { silentLogger } from '../../../src/lib/log.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';

// The senders view and the cost view do not grow for ever (issue 17 leftovers): the daily
// retention run forgets senders not heard within SERVICE_RETENTION_DAYS, deletes token buckets
// that have refilled under the current policy (a missing bucket starts full, so a limited
// sender stays limited until then), and keeps USAGE_KEEP_DAYS days of usage.

const DAY = 86_400_000;
const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const clock = new FakeClock(T0);
let t: TestBridge;

test.before(async () => {
  t = await startTestBridge({ clock });
  const ok = async (method: string, path: string, body: unknown) => {
    const r = await t.call(method, path, { body });
    assert.ok(r.status < 300, r.text);
  };
  await ok('POST', '/api/interfaces', { name: 'mesh-0', kind: 'sim', settings: {}, device: 'sim://retention-senders' });
  await ok('POST', '/api/interfaces', { name: 'out', kind: 'sim', settings: {}, device: 'sim://retention-out' });
  await ok('POST', '/api/access-rules', { name: 'fwd', match: {}, action: 'forward', destinations: [{ interface: 'out', to: '!ffffffff' }] });
  // One forward a day per sender: a spent bucket takes a day to refill.
  await ok('PUT', '/api/senders/policy', { limits: [{ kinds: ['sim'], per_hour: 1 / 24, burst: 1 }] });
});
test.after(async () => {
  await t.stop();
});

const heard = async (from: string) => {
  const r = await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { interface: 'mesh-0', from, text: 'hello' } });
  assert.is(r.status, 202, r.text);
  return r.body.message.action as string;
};
const senders = async () => ((await t.call('GET', '/api/senders?limit=1000')).body.items as Array<{ address: string }>).map((s) => s.address).sort();
const count = (table: string) => (t.bridge.services.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

function worker(days: number, at: number): RetentionWorker {
  const s = t.bridge.services;
  return new RetentionWorker({ db: s.db, messages: s.messages, deliveries: s.deliveries, seen: s.core.seen, senders: s.senders.store, usage: s.usage, clock: new FakeClock(at), log: silentLogger, days });
}

test('a spent bucket stays until it has refilled; senders go with the retention; usage days after USAGE_KEEP_DAYS', async () => {
  assert.is(await heard('!aaa1'), 'forward');
  assert.is(await heard('!aaa1'), 'store', 'limited');
  clock.advance(20 * DAY);
  assert.is(await heard('!bbb1'), 'forward');
  assert.is(await heard('!bbb1'), 'store');
  await new Promise((r) => setTimeout(r, 200));
  assert.is((await senders()).length, 2);
  // The bridge's own daily run (its clock moved 20 days) deleted !aaa1's refilled bucket;
  // !bbb1's, spent just now, is there.
  assert.is(count('sender_buckets'), 1);
  assert.ok(t.logs.some((l) => l.includes('"retention_pruned"') && l.includes('"buckets":1')), t.logs.filter((l) => l.includes('retention')).join('\n'));
  assert.ok(count('usage_daily') >= 2, 'two days of usage');

  // An hour later: !bbb1's bucket has not refilled and stays; both senders were heard within 30 days.
  const first = worker(30, clock.now() + 3_600_000).runOnce();
  assert.equal({ buckets: first.buckets, senders: first.senders }, { buckets: 0, senders: 0 });
  assert.is(count('sender_buckets'), 1);
  clock.advance(3_600_000);
  assert.is(await heard('!bbb1'), 'store', 'still limited: its bucket was kept');

  // 15 days later !aaa1 (35 days quiet) is forgotten, !bbb1 (15) is not; with 0 days both stay.
  const later = clock.now() + 15 * DAY;
  assert.is(worker(0, later).runOnce().senders, 0, '0 days keeps every sender');
  assert.is(worker(30, later).runOnce().senders, 1);
  assert.is((await senders()).length, 1);
  assert.is(count('sender_buckets'), 0, 'refilled after a day');

  // Usage: a day older than USAGE_KEEP_DAYS goes, the rest stays.
  const rows = count('usage_daily');
  const far = T0 + (USAGE_KEEP_DAYS + 1) * DAY;
  const pruned = worker(0, far).runOnce();
  assert.is(pruned.usage_days, 1, 'the first day only');
  assert.is(count('usage_daily'), rows - 1);
});

test('without limits in the policy every bucket goes at the next run', async () => {
  assert.is((await t.call('PUT', '/api/senders/policy', { body: { limits: [] } })).status, 200);
  await heard('!ccc1');
  t.bridge.services.db.prepare("INSERT INTO sender_buckets (address, limit_key, tokens, at_ms) VALUES ('!0000ccc1', 'old-limit', 0, ?)").run(clock.now());
  assert.ok(count('sender_buckets') >= 1);
  worker(30, clock.now()).runOnce();
  assert.is(count('sender_buckets'), 0);
});

test.run();
