import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';

// routing.rate_limit (docs/config.md): a token bucket over API sends, so a runaway script
// cannot empty a satellite budget. `burst` sends may go at once; the bucket refills at
// sends_per_minute. 0 turns the limit off. Read on every call, so a config change applies
// at once.

export interface RateLimit {
  sends_per_minute: number;
  burst: number;
}

export class SendRateLimiter {
  readonly #clock: Clock;
  readonly #limits: () => RateLimit;
  #tokens: number | undefined;
  #at = 0;

  constructor(clock: Clock, limits: () => RateLimit) {
    this.#clock = clock;
    this.#limits = limits;
  }

  /** Takes one send from the bucket or throws 429 with the seconds to wait. */
  take(): void {
    const { sends_per_minute: perMinute, burst } = this.#limits();
    if (perMinute === 0) return;
    const now = this.#clock.monotonic();
    const perMs = perMinute / 60_000;
    this.#tokens = Math.min(burst, (this.#tokens ?? burst) + (now - this.#at) * perMs);
    this.#at = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return;
    }
    const waitS = Math.max(1, Math.ceil((1 - this.#tokens) / perMs / 1000));
    throw new AppError('ERR_RATE_LIMITED', 429, `more than ${perMinute} sends per minute (burst ${burst}); try again in ${waitS} s, or raise routing.rate_limit`, {
      headers: { 'Retry-After': String(waitS) },
    });
  }
}
