import type { Clock } from '../../lib/clock.ts';

// The daily send budget (docs/sms.md, "Costs"): at most `perDay` parts per UTC day. Kept in
// memory: a restart gives the day's budget back, so the figure is a guard against runaway
// rules, not an accounting of the operator's bill.

const DAY_MS = 86_400_000;

export class DailyBudget {
  readonly #clock: Clock;
  readonly #perDay: number | null;
  #day = -1;
  #used = 0;

  constructor(clock: Clock, perDay: number | null) {
    this.#clock = clock;
    this.#perDay = perDay;
  }

  #roll(): void {
    const day = Math.floor(this.#clock.now() / DAY_MS);
    if (day !== this.#day) {
      this.#day = day;
      this.#used = 0;
    }
  }

  /** Parts left today; null without a limit. */
  left(): number | null {
    this.#roll();
    return this.#perDay === null ? null : Math.max(0, this.#perDay - this.#used);
  }

  /** True when `parts` fit in what is left today. */
  fits(parts: number): boolean {
    const left = this.left();
    return left === null || parts <= left;
  }

  spend(parts: number): void {
    this.#roll();
    this.#used += parts;
  }

  get used(): number {
    this.#roll();
    return this.#used;
  }

  /** Epoch ms of the next UTC midnight, when the budget is full again. */
  nextDayMs(): number {
    return (Math.floor(this.#clock.now() / DAY_MS) + 1) * DAY_MS;
  }
}
