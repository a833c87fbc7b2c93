import type { Clock, TimerHandle } from './clock.ts';

/**
 * A wall clock that does not jump: it starts at a time it is given and then moves
 * with the source's monotonic clock, so a step of the system clock (NTP arriving on a Raspberry
 * Pi that booted with a saved time, an operator's `date -s`) changes nothing until its owner
 * decides what to do about it (bridge/system/clock-guard.ts): shift() adopts a new time.
 * drift() says how far the source's wall clock now is from this one.
 */
export class SteadyClock implements Clock {
  readonly #source: Clock;
  #offset: number;

  constructor(source: Clock, startMs: number) {
    this.#source = source;
    this.#offset = startMs - source.monotonic();
  }
  now(): number {
    return Math.floor(this.#source.monotonic() + this.#offset);
  }
  monotonic(): number {
    return this.#source.monotonic();
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.#source.setTimeout(fn, ms);
  }
  clearTimeout(handle: TimerHandle): void {
    this.#source.clearTimeout(handle);
  }
  /** The source's wall clock minus this one: positive when the system clock is ahead. */
  drift(): number {
    return this.#source.now() - this.now();
  }
  /** Moves this clock by `ms` (negative: back). */
  shift(ms: number): void {
    this.#offset += ms;
  }
}
