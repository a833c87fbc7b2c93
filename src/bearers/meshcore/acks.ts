import type { Clock, TimerHandle } from '../../lib/clock.ts';

// Direct messages waiting for their ack (docs/protocols/meshcore.md 6.5): SENT names the tag,
// the SEND_CONFIRMED push carries it back. An ack that comes before its SENT was read (both in
// one chunk) is kept for a moment, and so is a repeat (MyMesh.cpp processAck: "the same ACK
// can be received multiple times"). Waits outlive a reconnect: the radio keeps its table.

/** Unmatched acks kept for a SENT read after them. */
const EARLY_ACKS = 32;

export class AckBook {
  readonly #clock: Clock;
  readonly #waiting = new Map<number, (roundTripMs: number | null) => void>();
  readonly #early = new Map<number, number>();
  /** SEND_CONFIRMED pushes nobody waited for (yet). */
  unmatched = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  get size(): number {
    return this.#waiting.size;
  }

  /** Resolves with the round trip the radio measured when the ack `code` comes, null after `ms`. */
  wait(code: number, ms: number): Promise<number | null> {
    const early = this.#early.get(code);
    if (early !== undefined) {
      this.#early.delete(code);
      return Promise.resolve(early);
    }
    // Another send waiting for the same code (which #sendDirect avoids) cannot tell its ack
    // from this one's: it gives up now, so it is retried rather than left waiting for ever.
    this.#waiting.get(code)?.(null);
    return new Promise((resolve) => {
      let timer: TimerHandle | null = null;
      const settle = (roundTrip: number | null) => {
        if (this.#waiting.get(code) !== settle) return;
        this.#waiting.delete(code);
        if (timer) this.#clock.clearTimeout(timer);
        resolve(roundTrip);
      };
      this.#waiting.set(code, settle);
      timer = this.#clock.setTimeout(() => settle(null), ms);
    });
  }

  /** A SEND_CONFIRMED push. */
  confirm(code: number, roundTripMs: number): void {
    const settle = this.#waiting.get(code);
    if (settle) return settle(roundTripMs);
    this.unmatched++;
    this.#early.set(code, roundTripMs);
    if (this.#early.size > EARLY_ACKS) this.#early.delete(this.#early.keys().next().value!);
  }

  /** Ends every wait with null (the bearer stopped). */
  giveUpAll(): void {
    for (const settle of [...this.#waiting.values()]) settle(null);
  }
}
