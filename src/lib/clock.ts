// Time is passed in, not read from globals, so timers (retries, keep-alives, purges) can be
// tested with a fake clock instead of by sleeping (docs/style.md habit 5).
//
// Two times: now() is the wall clock (ids, stored times, schedules), monotonic() counts
// milliseconds that never jump (rate limits, uptime, how long something took). Timers run on
// the monotonic clock, as Node's do: a wall-clock step moves neither their delay nor their order.

export interface Clock {
  now(): number;
  /** Milliseconds from an arbitrary origin that only ever advance at the pace of real time. */
  monotonic(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export type TimerHandle = { readonly id: number } | ReturnType<typeof setTimeout>;

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, Math.max(0, Math.min(ms, 2 ** 31 - 1)));
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** A clock for tests: time moves only when advance() (both clocks) or stepWall() (the wall
 *  clock alone, as when NTP or an operator sets the time) is called. */
export class FakeClock implements Clock {
  #now: number;
  #mono = 0;
  #nextId = 1;
  #timers = new Map<number, { at: number; fn: () => void }>();

  constructor(startMs = Date.parse('2026-01-01T00:00:00.000Z')) {
    this.#now = startMs;
  }
  now(): number {
    return this.#now;
  }
  monotonic(): number {
    return this.#mono;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#mono + Math.max(0, ms), fn });
    return { id };
  }
  clearTimeout(handle: TimerHandle): void {
    if (handle && typeof handle === 'object' && 'id' in handle) this.#timers.delete(handle.id as number);
  }
  /** Moves time forward, firing due timers in order (timers set by timers fire too). */
  advance(ms: number): void {
    const target = this.#mono + ms;
    for (;;) {
      let due: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.#timers) if (entry[1].at <= target && (!due || entry[1].at < due[1].at)) due = entry;
      if (!due) break;
      this.#timers.delete(due[0]);
      if (due[1].at > this.#mono) {
        this.#now += due[1].at - this.#mono;
        this.#mono = due[1].at;
      }
      due[1].fn();
    }
    this.#now += target - this.#mono;
    this.#mono = target;
  }
  /** Steps the wall clock by `ms` (negative: backwards) without time passing: no timer fires. */
  stepWall(ms: number): void {
    this.#now += ms;
  }
  pending(): number {
    return this.#timers.size;
  }
}

/** True when `p` settled within `ms` on `clock`; the timer is cleared either way. */
export function settlesWithin(clock: Clock, p: Promise<void>, ms: number): Promise<boolean> {
  let timer: TimerHandle | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = clock.setTimeout(() => resolve(false), ms)));
  return Promise.race([p.then(() => true), timeout]).finally(() => timer && clock.clearTimeout(timer));
}
