import { isIPv6 } from 'node:net';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import type { Counter, MetricsRegistry } from '../lib/metrics.ts';

// Requests without a valid key. They must cost no disk: they are not
// audited, they are counted in <prefix>_auth_failures_total{reason}, and they are logged at most
// once a minute per source address (the line says how many were folded into it). Each source
// has a leaky bucket of failures: FAILURES_PER_MINUTE may come at once and are answered 401, the
// allowance refills at that rate, and a failure beyond it is answered 429 with Retry-After.
// A valid key is still accepted from a source over its allowance: keys carry 256 random bits,
// so the limit is not what stops guessing; refusing good keys would let anyone lock out every
// client behind the same address (NAT, a reverse proxy, the Pi itself) with one bad request
// every 3 s (docs/decisions.md, "Issue 14").

export const FAILURES_PER_MINUTE = 20;
/** Sources remembered at once; past this the one not heard from longest is forgotten. */
export const MAX_SOURCES = 10_000;
const LOG_EVERY_MS = 60_000;

export type AuthFailureReason = 'no_key' | 'bad_key';

interface SourceState {
  /** Failures in the bucket at `at` (drains at perMinute per minute). */
  level: number;
  at: number;
  /** When the last log line for this source was written (-Infinity: never). */
  loggedAt: number;
  /** Refusals (401 and 429) since that line. */
  unlogged: number;
}

export interface AuthFailureOptions {
  clock: Clock;
  log: Logger;
  metrics: MetricsRegistry;
  /** Metric name prefix: `fieldbridge` gives fieldbridge_auth_failures_total. */
  prefix: string;
  perMinute?: number;
  maxSources?: number;
}

export class AuthFailureLimiter {
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #counter: Counter;
  readonly #perMinute: number;
  readonly #maxSources: number;
  /** Insertion order is last-touched order: a touched source is moved to the end. */
  readonly #sources = new Map<string, SourceState>();

  constructor(options: AuthFailureOptions) {
    this.#clock = options.clock;
    this.#log = options.log;
    this.#perMinute = options.perMinute ?? FAILURES_PER_MINUTE;
    this.#maxSources = options.maxSources ?? MAX_SOURCES;
    this.#counter = options.metrics.counter(
      `${options.prefix}_auth_failures_total`,
      'Requests refused for want of a valid API key, by reason (no_key, bad_key, rate_limited). They are not audited.',
    );
  }

  /**
   * Records a request refused for want of a valid key. Answers null when it is within the
   * source's allowance (answer 401; counted under its reason), or the seconds until the next
   * failure would be (answer 429; counted as rate_limited, and not spending the allowance
   * further, so Retry-After stays a few seconds however hard a client keeps trying).
   */
  failed(source: string, reason: AuthFailureReason): number | null {
    const now = this.#clock.monotonic();
    let state = this.#sources.get(source);
    if (state) {
      this.#sources.delete(source);
    } else {
      this.#makeRoom();
      state = { level: 0, at: now, loggedAt: -Infinity, unlogged: 0 };
    }
    this.#sources.set(source, state);
    const level = this.#drained(state);
    if (level + 1 > this.#perMinute) {
      this.#counter.inc({ reason: 'rate_limited' });
      this.#note(source, state, 'rate_limited');
      const perMs = this.#perMinute / 60_000;
      // The epsilon keeps float noise (2000.0000001 ms) from adding a whole second.
      return Math.max(1, Math.ceil((level + 1 - this.#perMinute) / perMs / 1000 - 1e-6));
    }
    state.level = level + 1;
    state.at = now;
    this.#counter.inc({ reason });
    this.#note(source, state, reason);
    return null;
  }

  /** Sources currently remembered (tests check the bound). */
  get size(): number {
    return this.#sources.size;
  }

  #drained(state: SourceState): number {
    const elapsed = Math.max(0, this.#clock.monotonic() - state.at);
    return Math.max(0, state.level - (elapsed * this.#perMinute) / 60_000);
  }

  #note(source: string, state: SourceState, reason: AuthFailureReason | 'rate_limited'): void {
    state.unlogged++;
    const now = this.#clock.monotonic();
    if (now - state.loggedAt < LOG_EVERY_MS) return;
    this.#log.warn('auth_failed', {
      source,
      reason,
      refused: state.unlogged,
      note: `requests without a valid key from this source since its last line (at most one line a minute per source); ${this.#perMinute} failures a minute are answered 401, more 429`,
    });
    state.loggedAt = now;
    state.unlogged = 0;
  }

  #makeRoom(): void {
    if (this.#sources.size < this.#maxSources) return;
    // Forget every source whose bucket has drained and whose line is older than a minute; if
    // that frees nothing, the one not heard from longest (the first in the map).
    const now = this.#clock.monotonic();
    for (const [source, state] of this.#sources) {
      if (this.#drained(state) === 0 && now - state.loggedAt >= LOG_EVERY_MS) this.#sources.delete(source);
    }
    if (this.#sources.size >= this.#maxSources) this.#sources.delete(this.#sources.keys().next().value!);
  }
}

/**
 * The address failures are counted against: IPv4 as is (an IPv4-mapped IPv6 address is its
 * IPv4 address), IPv6 by its /64 prefix, because one host usually holds a whole /64 and could
 * otherwise take a fresh address for every attempt. X-Forwarded-For is not read: anyone can
 * write it.
 */
export function sourceOf(remoteAddress: string | undefined): string {
  if (!remoteAddress) return 'unknown';
  const address = remoteAddress.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!isIPv6(address)) return address;
  const [head, tail = ''] = address.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = address.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return `${groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
