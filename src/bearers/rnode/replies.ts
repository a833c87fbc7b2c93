import type { Clock } from '../../lib/clock.ts';
import { DeviceError } from '../device-error.ts';
import type { DeviceMessage } from './protocol.ts';

// The latest frame of each kind the radio sent, and the bring-up steps waiting for some of
// them (docs/protocols/rnode.md 1.4 steps 3 and 6). Waiting is event-driven with a deadline instead of
// Reticulum's fixed sleeps: the step ends as soon as every answer is in, and fails at the
// deadline naming what never came. A fatal ERROR frame fails whatever is waiting.

type MessageType = DeviceMessage['type'];

interface Waiter {
  types: readonly MessageType[];
  resolve: () => void;
  reject: (e: Error) => void;
}

export class ReplyBook {
  readonly #clock: Clock;
  readonly #latest = new Map<MessageType, DeviceMessage>();
  #waiters: Waiter[] = [];

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  clear(): void {
    this.#latest.clear();
  }

  get<T extends MessageType>(type: T): Extract<DeviceMessage, { type: T }> | undefined {
    return this.#latest.get(type) as Extract<DeviceMessage, { type: T }> | undefined;
  }

  record(m: DeviceMessage): void {
    this.#latest.set(m.type, m);
    this.#check();
  }

  /** Resolves once a frame of every type has arrived (since the last clear()). */
  wait(types: readonly MessageType[], timeoutMs: number, code: string, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = this.#clock.setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        const missing = types.filter((t) => !this.#latest.has(t));
        reject(new DeviceError(code, `${what} within ${timeoutMs} ms (no reply to: ${missing.join(', ')})`, { retryable: true }));
      }, timeoutMs);
      const waiter: Waiter = {
        types,
        resolve: () => {
          this.#clock.clearTimeout(timer);
          resolve();
        },
        reject: (e) => {
          this.#clock.clearTimeout(timer);
          reject(e);
        },
      };
      this.#waiters.push(waiter);
      this.#check();
    });
  }

  /** The link went away: every step waiting fails with the reason. */
  failAll(e: Error): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w.reject(e);
  }

  #check(): void {
    const error = this.get('error');
    if (error?.fatal && this.#waiters.length) {
      this.failAll(new DeviceError('ERR_RNODE_DEVICE', `RNode reported ${error.name}: ${error.meaning}`, { retryable: true, facts: { radioError: error.code } }));
      return;
    }
    for (const w of [...this.#waiters]) {
      if (w.types.every((t) => this.#latest.has(t))) {
        this.#waiters = this.#waiters.filter((x) => x !== w);
        w.resolve();
      }
    }
  }
}
