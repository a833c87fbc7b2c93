import { z } from 'zod';

// An interface's delivery policy (its `retry` field): retry timing (docs/design.md section 6:
// exponential backoff with full jitter, per interface; defaults base 5 s, cap 15 min, 5
// attempts, TTL 24 h), what a held delivery's TTL does, and the queue's caps (docs/routing.md,
// "Delivery policy"). Full jitter draws the
// wait uniformly from [0, min(cap, base * 2^(attempt-1))): deliveries that failed together
// (a modem that lost signal with 200 queued) spread out instead of retrying in one burst.

export const RetryPolicy = z
  .strictObject({
    base_s: z.number({ error: 'base_s must be a number of seconds' }).positive({ error: 'base_s must be more than 0' }).max(3600, { error: 'base_s must be at most 3600' }).default(5)
      .describe('Upper bound of the first wait, in seconds; doubles with every attempt'),
    cap_s: z.number({ error: 'cap_s must be a number of seconds' }).positive({ error: 'cap_s must be more than 0' }).max(86400, { error: 'cap_s must be at most 86400' }).default(900)
      .describe('Largest upper bound of a wait, in seconds'),
    max_attempts: z.number({ error: 'max_attempts must be a whole number' }).int({ error: 'max_attempts must be a whole number' }).min(1, { error: 'max_attempts must be at least 1' }).max(100, { error: 'max_attempts must be at most 100' }).default(5)
      .describe('Attempts before the delivery is dead (the first attempt counts)'),
    ttl_s: z.number({ error: 'ttl_s must be a whole number of seconds' }).int({ error: 'ttl_s must be a whole number of seconds' }).min(1, { error: 'ttl_s must be at least 1' }).max(30 * 86400, { error: 'ttl_s must be at most 2592000 (30 days)' }).default(86400)
      .describe('Seconds after the message was created when an undelivered delivery expires'),
    ttl_while_held: z.enum(['paused', 'running'], { error: 'ttl_while_held must be paused or running' }).default('paused')
      .describe('While the interface is down its deliveries are held: paused keeps their TTL for when it returns; running lets it run out (traffic worthless when late)'),
    queue_max_deliveries: z.number({ error: 'queue_max_deliveries must be a whole number' }).int({ error: 'queue_max_deliveries must be a whole number' }).min(1, { error: 'queue_max_deliveries must be at least 1' }).max(1_000_000, { error: 'queue_max_deliveries must be at most 1000000' }).default(1000)
      .describe('Most deliveries waiting for this interface; a newcomer over it evicts the lowest-precedence, oldest one to the dead letters (override and flash never)'),
    queue_max_bytes: z.number({ error: 'queue_max_bytes must be a whole number' }).int({ error: 'queue_max_bytes must be a whole number' }).min(1024, { error: 'queue_max_bytes must be at least 1024' }).max(1_073_741_824, { error: 'queue_max_bytes must be at most 1073741824' }).default(4_194_304)
      .describe('Most bytes of text and payload waiting for this interface (default 4 MiB)'),
  })
  .superRefine((p, ctx) => {
    if (p.cap_s < p.base_s) ctx.addIssue({ code: 'custom', path: ['cap_s'], message: `cap_s (${p.cap_s}) must not be less than base_s (${p.base_s})` });
  });
export type RetryPolicy = z.infer<typeof RetryPolicy>;

export const DEFAULT_RETRY_POLICY: RetryPolicy = RetryPolicy.parse({});

/** An interface's stored retry policy (validated when it was written) with the defaults
 *  filled in: no parse on the hot path. */
export function retryPolicyOf(stored: Partial<RetryPolicy> | Record<string, unknown> | undefined): RetryPolicy {
  return { ...DEFAULT_RETRY_POLICY, ...stored };
}

/**
 * Milliseconds to wait after failed attempt number `attempt` (1 = the first attempt) before
 * the next one. `random` returns [0, 1) like Math.random; tests pass their own.
 */
export function nextRetryDelayMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const n = Number.isFinite(attempt) ? Math.max(1, Math.floor(attempt)) : 1;
  // 2 ** 1100 is Infinity, and min() then picks the cap: no overflow to guard.
  const ceilingMs = Math.min(policy.cap_s * 1000, policy.base_s * 1000 * 2 ** (n - 1));
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
  return Math.floor(unit * ceilingMs);
}

/** True when `attempts` made so far leave no attempt for this policy. */
export function attemptsExhausted(attempts: number, policy: RetryPolicy): boolean {
  return attempts >= policy.max_attempts;
}

/** The instant (ms) a delivery of a message created at createdMs expires. */
export function expiresAtMs(createdMs: number, policy: RetryPolicy): number {
  return createdMs + policy.ttl_s * 1000;
}
