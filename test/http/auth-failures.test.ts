import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../src/lib/clock.ts';
import { createLogger } from '../../src/lib/log.ts';
import { MetricsRegistry } from '../../src/lib/metrics.ts';
import { startTestBridge } from '../helpers/bridge.ts';
import { assertProblem } from '../helpers/routing.ts';

// Requests without a valid key (issue 14, item 1): 20 failures a minute per source are answered
// 401, more are answered 429 with Retry-After; a valid key is still accepted; each is counted
// in fieldbridge_auth_failures_total and logged at most once a minute per source.

const BAD_KEY = 'fbb_aaaaaaaaaaaa_' + 'x'.repeat(43);

test('over HTTP: the 21st failure in a minute is a 429 problem with Retry-After; a valid key still passes; the allowance refills', async () => {
  const clock = new FakeClock();
  const t = await startTestBridge({ clock });
  try {
    for (let i = 0; i < 20; i++) {
      const r = await t.call('DELETE', `/api/interfaces/x${i}`, { key: i % 2 ? BAD_KEY : null });
      assertProblem(r, 401);
    }
    const limited = await t.call('DELETE', '/api/interfaces/x', { key: null });
    assertProblem(limited, 429, [], /too many requests without a valid API key from 127\.0\.0\.1; wait 3 s/);
    assert.is(limited.body.type, 'https://fieldbridge.dev/problems/auth-rate-limited');
    assert.is(limited.headers.get('retry-after'), '3');
    assertProblem(await t.call('GET', '/api/interfaces', { key: BAD_KEY }), 429, [], /wait 3 s/);

    // Not a lockout: the owner's key works from the same address meanwhile, and is audited.
    assert.is((await t.call('POST', '/api/interfaces', { body: { name: 'ok', kind: 'sim', settings: {} } })).status, 201);
    const audit = (await t.call('GET', '/api/audit?limit=1000')).body.items as Array<{ status: number; key_id: string | null }>;
    assert.equal(audit.map((e) => e.status), [201], 'only the call with a valid key was audited');

    clock.advance(3000); // one failure's worth of allowance back (20 a minute)
    assertProblem(await t.call('DELETE', '/api/interfaces/x', { key: null }), 401);
    assertProblem(await t.call('DELETE', '/api/interfaces/x', { key: null }), 429);
    clock.advance(60_000);
    for (let i = 0; i < 20; i++) assertProblem(await t.call('DELETE', '/api/interfaces/x', { key: null }), 401);

    const metrics = (await t.call('GET', '/metrics')).text;
    assert.match(metrics, /fieldbridge_auth_failures_total\{reason="no_key"\} 31\n/);
    assert.match(metrics, /fieldbridge_auth_failures_total\{reason="bad_key"\} 10\n/);
    assert.match(metrics, /fieldbridge_auth_failures_total\{reason="rate_limited"\} 3\n/);
    const lines = t.logs.map((l) => JSON.parse(l)).filter((l) => l.event === 'auth_failed');
    assert.equal(lines.map((l) => [l.level, l.source, l.refused]), [['warn', '127.0.0.1', 1], ['warn', '127.0.0.1', 24]],
      'one line at the first failure, the next a minute later counting the 24 refusals since the first');
  } finally {
    await t.stop();
  }
});

test('the limiter: a burst of 20, refilled at 20 a minute; Retry-After until the next failure fits; sources are separate', async () => {
  const { AuthFailureLimiter } = await import('../../src/http/auth-failures.ts');
  const clock = new FakeClock();
  const lines: string[] = [];
  const metrics = new MetricsRegistry();
  const limiter = new AuthFailureLimiter({ clock, log: createLogger({ format: 'json', write: (l) => lines.push(l) }), metrics, prefix: 'x' });
  for (let i = 0; i < 20; i++) assert.is(limiter.failed('10.0.0.1', 'no_key'), null, `failure ${i + 1}`);
  assert.is(limiter.failed('10.0.0.1', 'no_key'), 3);
  assert.is(limiter.failed('10.0.0.2', 'bad_key'), null, 'another source has its own allowance');
  clock.advance(1000);
  assert.is(limiter.failed('10.0.0.1', 'no_key'), 2, 'Retry-After shrinks as the bucket drains');
  clock.advance(2000);
  assert.is(limiter.failed('10.0.0.1', 'no_key'), null);
  assert.is(limiter.failed('10.0.0.1', 'no_key'), 3, 'refusals do not spend the allowance: the wait stays short');
  assert.match(metrics.render(), /x_auth_failures_total\{reason="no_key"\} 21\nx_auth_failures_total\{reason="rate_limited"\} 3\nx_auth_failures_total\{reason="bad_key"\} 1\n/);
  assert.is(lines.length, 2, 'one line per source so far');
});

test('the limiter remembers at most maxSources sources', async () => {
  const { AuthFailureLimiter } = await import('../../src/http/auth-failures.ts');
  const clock = new FakeClock();
  const limiter = new AuthFailureLimiter({ clock, log: createLogger({ write: () => {} }), metrics: new MetricsRegistry(), prefix: 'x', maxSources: 100 });
  for (let i = 0; i < 1000; i++) limiter.failed(`10.0.${i >> 8}.${i & 255}`, 'no_key');
  assert.is(limiter.size, 100);
  for (let i = 0; i < 20; i++) limiter.failed('10.9.9.9', 'no_key');
  assert.is(limiter.failed('10.9.9.9', 'no_key'), 3, 'the source being refused is the newest, not the one forgotten');
});

test('sources: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64', async () => {
  const { sourceOf } = await import('../../src/http/auth-failures.ts');
  assert.is(sourceOf('192.168.1.20'), '192.168.1.20');
  assert.is(sourceOf('::ffff:192.168.1.20'), '192.168.1.20');
  assert.is(sourceOf('2001:db8:0:1:aaaa:bbbb:cccc:dddd'), '2001:db8:0:1::/64');
  assert.is(sourceOf('2001:DB8:0:1::5'), '2001:db8:0:1::/64');
  assert.is(sourceOf('2001:db8::1'), '2001:db8:0:0::/64');
  assert.is(sourceOf('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.is(sourceOf('::1'), '0:0:0:0::/64');
  assert.is(sourceOf(undefined), 'unknown');
});

test.run();
