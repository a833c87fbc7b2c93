import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { DriverState } from '../bearer.ts';

// Messages waiting for their acknowledgement (docs/protocols/aprs.md 2.1): each is sent again on
// the decaying schedule until the addressee's `ack` (delivered) or `rej` (refused) arrives, or
// the schedule runs out. Ids come from a counter kept across restarts, so a station that still
// remembers an old id does not take a new message for a duplicate.

/** Seconds to wait after each transmission; six transmissions, the last waited on longest. */
export const RETRY_WAITS_S = [30, 60, 120, 240, 480, 480] as const;
/** The longest a message can wait: every wait. */
export const ACK_WINDOW_MS = RETRY_WAITS_S.reduce((a, b) => a + b, 0) * 1000;

export type AckOutcome = { type: 'ack' | 'rej'; transmissions: number } | { type: 'timeout'; transmissions: number } | { type: 'cancelled'; why: string };

interface Pending {
  addressee: string;
  transmit: () => void;
  done: (o: AckOutcome) => void;
  timer: TimerHandle | null;
  sent: number;
}

const ID_KEY = 'aprs.next_message_id';
const ID_LIMIT = 99_999;

export class AckTracker {
  readonly #clock: Clock;
  readonly #state: DriverState;
  readonly #pending = new Map<string, Pending>();

  constructor(clock: Clock, state: DriverState) {
    this.#clock = clock;
    this.#state = state;
  }

  /** The next message id: 1 to 99999, then round again. */
  nextId(): string {
    const stored = Number(this.#state.get(ID_KEY) ?? '1');
    const id = Number.isInteger(stored) && stored >= 1 && stored <= ID_LIMIT ? stored : 1;
    this.#state.set(ID_KEY, String(id === ID_LIMIT ? 1 : id + 1));
    return String(id);
  }

  /** Sends by `transmit` now and on the schedule; resolves on ack, rej, the end of the schedule,
   *  or a cancel. */
  track(addressee: string, id: string, transmit: () => void): Promise<AckOutcome> {
    return new Promise((resolve) => {
      const key = `${addressee.toUpperCase()}|${id}`;
      const p: Pending = { addressee, transmit, done: resolve, timer: null, sent: 0 };
      this.#pending.set(key, p);
      const next = () => {
        if (this.#pending.get(key) !== p) return;
        if (p.sent === RETRY_WAITS_S.length) {
          this.#finish(key, { type: 'timeout', transmissions: p.sent });
          return;
        }
        p.transmit();
        p.timer = this.#clock.setTimeout(next, RETRY_WAITS_S[p.sent++] * 1000);
      };
      next();
    });
  }

  /** An ack or rej from `from` for `id`; true when it matched a waiting message. */
  answer(type: 'ack' | 'rej', from: string, id: string): boolean {
    const key = `${from.toUpperCase()}|${id}`;
    const p = this.#pending.get(key);
    if (!p) return false;
    this.#finish(key, { type, transmissions: p.sent });
    return true;
  }

  get waiting(): number {
    return this.#pending.size;
  }

  cancelAll(why: string): void {
    for (const key of [...this.#pending.keys()]) this.#finish(key, { type: 'cancelled', why });
  }

  #finish(key: string, outcome: AckOutcome): void {
    const p = this.#pending.get(key);
    if (!p) return;
    this.#pending.delete(key);
    if (p.timer) this.#clock.clearTimeout(p.timer);
    p.done(outcome);
  }
}
