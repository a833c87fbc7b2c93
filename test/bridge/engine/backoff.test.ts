import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { attemptsExhausted, DEFAULT_RETRY_POLICY, expiresAtMs, nextRetryDelayMs, RetryPolicy } from '../../../src/bridge/engine/backoff.ts';

const always = (value: number) => () => value;
const policy = DEFAULT_RETRY_POLICY;

test('defaults: base 5 s, cap 15 min, 5 attempts, TTL 24 h paused while held, queue caps 1000 deliveries and 4 MiB', () => {
  assert.equal(RetryPolicy.parse({}), { base_s: 5, cap_s: 900, max_attempts: 5, ttl_s: 86400, ttl_while_held: 'paused', queue_max_deliveries: 1000, queue_max_bytes: 4_194_304 });
  assert.equal(policy, RetryPolicy.parse({}));
});

test('bad policies are refused naming the field', () => {
  const cases: [unknown, string, RegExp][] = [
    [{ base_s: 0 }, 'base_s', /base_s must be more than 0/],
    [{ base_s: '5' }, 'base_s', /base_s must be a number/],
    [{ cap_s: -1 }, 'cap_s', /cap_s must be more than 0/],
    [{ max_attempts: 0 }, 'max_attempts', /at least 1/],
    [{ max_attempts: 2.5 }, 'max_attempts', /whole number/],
    [{ max_attempts: 101 }, 'max_attempts', /at most 100/],
    [{ ttl_s: 0 }, 'ttl_s', /at least 1/],
    [{ ttl_s: 31 * 86400 }, 'ttl_s', /30 days/],
    [{ base_s: 60, cap_s: 30 }, 'cap_s', /cap_s \(30\) must not be less than base_s \(60\)/],
    [{ retries: 3 }, '', /retries/],
  ];
  for (const [raw, path, message] of cases) {
    const r = RetryPolicy.safeParse(raw);
    assert.ok(!r.success, JSON.stringify(raw));
    if (!r.success) {
      assert.is(r.error.issues[0].path.join('.'), path, JSON.stringify(raw));
      assert.match(r.error.issues[0].message, message);
    }
  }
});

test('the ceiling doubles with each attempt from base', () => {
  // random() just under 1 shows the ceiling of each attempt.
  const top = always(0.999999);
  const ceilings = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => Math.round(nextRetryDelayMs(n, policy, top) / 1000));
  assert.equal(ceilings, [5, 10, 20, 40, 80, 160, 320, 640]);
});

test('the ceiling stops at the cap, even for absurd attempt numbers', () => {
  const top = always(0.999999);
  assert.is(Math.round(nextRetryDelayMs(9, policy, top) / 1000), 900);
  assert.is(Math.round(nextRetryDelayMs(50, policy, top) / 1000), 900);
  assert.is(Math.round(nextRetryDelayMs(5000, policy, top) / 1000), 900);
  const tight = RetryPolicy.parse({ base_s: 10, cap_s: 15 });
  assert.is(nextRetryDelayMs(2, tight, always(0.5)), 7500);
});

test('full jitter: the wait is random() times the ceiling, in whole milliseconds', () => {
  assert.is(nextRetryDelayMs(1, policy, always(0)), 0);
  assert.is(nextRetryDelayMs(1, policy, always(0.5)), 2500);
  assert.is(nextRetryDelayMs(3, policy, always(0.25)), 5000);
  assert.is(nextRetryDelayMs(3, policy, always(0.12345)), Math.floor(0.12345 * 20000));
});

test('a seeded sequence spreads waits across the whole range', () => {
  let seed = 42;
  const lcg = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const waits = Array.from({ length: 1000 }, () => nextRetryDelayMs(4, policy, lcg));
  for (const w of waits) assert.ok(w >= 0 && w < 40_000 && Number.isInteger(w));
  assert.ok(Math.min(...waits) < 4000 && Math.max(...waits) > 36_000);
});

test('odd inputs give a wait within bounds, never NaN or negative', () => {
  for (const attempt of [0, -3, 1.7, Number.NaN, Number.POSITIVE_INFINITY]) {
    const w = nextRetryDelayMs(attempt, policy, always(0.5));
    assert.ok(Number.isInteger(w) && w >= 0 && w <= 900_000, `${attempt} -> ${w}`);
  }
  assert.is(nextRetryDelayMs(0, policy, always(0.5)), 2500); // treated as attempt 1
  for (const r of [-1, 2, Number.NaN]) {
    const w = nextRetryDelayMs(1, policy, always(r));
    assert.ok(w >= 0 && w <= 5000, `${r} -> ${w}`);
  }
});

test('attempts are exhausted at max_attempts; expiry is created + ttl', () => {
  assert.not.ok(attemptsExhausted(4, policy));
  assert.ok(attemptsExhausted(5, policy));
  assert.ok(attemptsExhausted(6, policy));
  assert.is(expiresAtMs(Date.parse('2026-01-01T00:00:00Z'), policy), Date.parse('2026-01-02T00:00:00Z'));
});

test.run();
