// Which alert conditions are raised, and the hourly budget of alert messages (docs/alerts.md).
// One message when a condition is raised, one when it clears, never one per repetition; and
// at most `max_per_hour` in any hour, so a flapping radio cannot run up an SMS bill. Pure:
// the caller gives the time.

const HOUR_MS = 3_600_000;

export interface Raised {
  key: string;
  at: number;
}

export class AlertBook {
  readonly #raised = new Map<string, Raised>();
  /** Times of the messages sent in the last hour, oldest first. */
  #sent: number[] = [];
  suppressed = 0;

  isRaised(key: string): boolean {
    return this.#raised.has(key);
  }

  raised(): Raised[] {
    return [...this.#raised.values()];
  }

  /** Marks `key` raised; false when it already was (no new message). */
  raise(key: string, now: number): boolean {
    if (this.#raised.has(key)) return false;
    this.#raised.set(key, { key, at: now });
    return true;
  }

  /** Clears `key`; the raise it ends, or null when it was not raised. */
  clear(key: string): Raised | null {
    const was = this.#raised.get(key) ?? null;
    this.#raised.delete(key);
    return was;
  }

  /** Takes one message from the hour's budget; false (and counted) when it is spent. */
  take(now: number, maxPerHour: number): boolean {
    while (this.#sent.length > 0 && this.#sent[0] <= now - HOUR_MS) this.#sent.shift();
    if (this.#sent.length >= maxPerHour) {
      this.suppressed++;
      return false;
    }
    this.#sent.push(now);
    return true;
  }
}
