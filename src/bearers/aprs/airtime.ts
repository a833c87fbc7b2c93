import type { Clock, TimerHandle } from '../../lib/clock.ts';

// The RF transmit queue (docs/aprs.md, "Airtime"): at least `minGapMs` between two frames and
// at most `maxPer10Min` in any ten minutes, so the bridge never floods a shared channel.
// Acknowledgements go before everything else that waits; the rest keep their order.

const WINDOW_MS = 10 * 60_000;
/** Frames that may wait; beyond this new ones are refused (the channel cannot carry them). */
export const QUEUE_LIMIT = 200;

export class Airtime {
  readonly #clock: Clock;
  readonly #minGapMs: number;
  readonly #max: number;
  readonly #write: (frame: Uint8Array) => void;
  readonly #queue: Array<{ frame: Uint8Array; urgent: boolean }> = [];
  readonly #sentAt: number[] = [];
  #timer: TimerHandle | null = null;
  #last = -Infinity;
  deferred = 0;

  constructor(clock: Clock, limits: { minGapMs: number; maxPer10Min: number }, write: (frame: Uint8Array) => void) {
    this.#clock = clock;
    this.#minGapMs = limits.minGapMs;
    this.#max = limits.maxPer10Min;
    this.#write = write;
  }

  /** Queues a frame; false when the queue is full. */
  enqueue(frame: Uint8Array, urgent = false): boolean {
    if (this.#queue.length >= QUEUE_LIMIT) return false;
    if (urgent) {
      const at = this.#queue.findIndex((q) => !q.urgent);
      this.#queue.splice(at < 0 ? this.#queue.length : at, 0, { frame, urgent });
    } else this.#queue.push({ frame, urgent });
    this.#pump();
    return true;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  clear(): void {
    this.#queue.length = 0;
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
  }

  #pump(): void {
    if (this.#timer) return;
    while (this.#queue.length > 0) {
      const now = this.#clock.monotonic();
      while (this.#sentAt.length > 0 && now - this.#sentAt[0] >= WINDOW_MS) this.#sentAt.shift();
      const wait = Math.max(this.#last + this.#minGapMs - now, this.#sentAt.length >= this.#max ? this.#sentAt[0] + WINDOW_MS - now : 0);
      if (wait > 0) {
        this.deferred++;
        this.#timer = this.#clock.setTimeout(() => {
          this.#timer = null;
          this.#pump();
        }, wait);
        return;
      }
      const { frame } = this.#queue.shift()!;
      this.#last = now;
      this.#sentAt.push(now);
      this.#write(frame);
    }
  }
}
