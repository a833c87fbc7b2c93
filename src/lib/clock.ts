// Time is passed in, not read from globals, so timers (retries, keep-alives, purges) can be
// tested with a fake clock instead of by sleeping (docs/style.md habit 5).

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export type TimerHandle = { readonly id: number } | ReturnType<typeof setTimeout>;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, Math.max(0, Math.min(ms, 2 ** 31 - 1)));
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** A clock for tests: time moves only when advance() is called. */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers = new Map<number, { at: number; fn: () => void }>();

  constructor(startMs = Date.parse('2026-01-01T00:00:00.000Z')) {
    this.#now = startMs;
  }
  now(): number {
    return this.#now;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn });
    return { id };
  }
  clearTimeout(handle: TimerHandle): void {
    if (handle && typeof handle === 'object' && 'id' in handle) this.#timers.delete(handle.id as number);
  }
  /** Moves time forward, firing due timers in order (timers set by timers fire too). */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      let due: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.#timers) if (entry[1].at <= target && (!due || entry[1].at < due[1].at)) due = entry;
      if (!due) break;
      this.#timers.delete(due[0]);
      this.#now = Math.max(this.#now, due[1].at);
      due[1].fn();
    }
    this.#now = target;
  }
  pending(): number {
    return this.#timers.size;
  }
}
