import type { Clock } from '../../lib/clock.ts';
import type { DriverState } from '../bearer.ts';

// The credit ledger of an iridium interface (docs/iridium.md, "Credits and budget"): what each
// billed session cost, by UTC day and calendar month, kept in the driver's state (the
// database), so a restart or a power cut never hands a spent budget back. Sessions are charged
// after the modem reports success (failed sessions are not billed: iridium-sbd.md 3.6), and
// only started when the ledger allows their cost, so no retry storm can overspend.

const KEY = 'credits';
const DAY_MS = 86_400_000;

export interface CreditLimits {
  perDay: number | null;
  perMonth: number | null;
}

interface Ledger {
  day: number;
  dayUsed: number;
  /** UTC year * 12 + month. */
  month: number;
  monthUsed: number;
  total: number;
}

export type CreditCheck = { ok: true } | { ok: false; reason: string; untilMs: number };

/** What the ledger shows in health, stats and GET /api/interfaces/{id}. */
export interface CreditView {
  credits_today: number;
  credits_this_month: number;
  credits_total: number;
  credits_left_today: number | null;
  credits_left_this_month: number | null;
}

export class CreditLedger {
  readonly #clock: Clock;
  readonly #state: Pick<DriverState, 'get'> & Partial<Pick<DriverState, 'set'>>;
  readonly #limits: CreditLimits;

  /** `state` without `set` reads only (the API showing a stopped interface's ledger). */
  constructor(clock: Clock, state: Pick<DriverState, 'get'> & Partial<Pick<DriverState, 'set'>>, limits: CreditLimits) {
    this.#clock = clock;
    this.#state = state;
    this.#limits = limits;
  }

  /** Whether a session costing `credits` may start now. `share` < 1 keeps the rest of each
   *  budget for sends: periodic mailbox checks stop first (docs/iridium.md). */
  allows(credits: number, share = 1): CreditCheck {
    const l = this.#current();
    const now = this.#clock.now();
    const { perDay, perMonth } = this.#limits;
    if (perMonth !== null && l.monthUsed + credits > perMonth * share) {
      return { ok: false, untilMs: nextMonthMs(now), reason: `this month's budget of ${perMonth} credits ${share < 1 ? 'is half spent (mailbox checks may use half)' : `has ${Math.max(0, perMonth - l.monthUsed)} left`}, ${credits} needed` };
    }
    if (perDay !== null && l.dayUsed + credits > perDay * share) {
      return { ok: false, untilMs: (Math.floor(now / DAY_MS) + 1) * DAY_MS, reason: `today's budget of ${perDay} credits ${share < 1 ? 'is half spent (mailbox checks may use half)' : `has ${Math.max(0, perDay - l.dayUsed)} left`}, ${credits} needed` };
    }
    return { ok: true };
  }

  /** Whether a session of this cost could ever start (a budget smaller than one message). */
  everFits(credits: number): boolean {
    const { perDay, perMonth } = this.#limits;
    return (perDay === null || credits <= perDay) && (perMonth === null || credits <= perMonth);
  }

  /** Charges a billed session; written to the database at once. */
  spend(credits: number): void {
    const l = this.#current();
    l.dayUsed += credits;
    l.monthUsed += credits;
    l.total += credits;
    this.#state.set?.(KEY, JSON.stringify(l));
  }

  view(): CreditView {
    const l = this.#current();
    const { perDay, perMonth } = this.#limits;
    return {
      credits_today: l.dayUsed,
      credits_this_month: l.monthUsed,
      credits_total: l.total,
      credits_left_today: perDay === null ? null : Math.max(0, perDay - l.dayUsed),
      credits_left_this_month: perMonth === null ? null : Math.max(0, perMonth - l.monthUsed),
    };
  }

  /** The stored ledger, rolled to today and this month; a damaged value starts from zero
   *  (it is only ever written by this class). */
  #current(): Ledger {
    const now = this.#clock.now();
    const day = Math.floor(now / DAY_MS);
    const date = new Date(now);
    const month = date.getUTCFullYear() * 12 + date.getUTCMonth();
    const l = parse(this.#state.get(KEY));
    if (l.day !== day) {
      l.day = day;
      l.dayUsed = 0;
    }
    if (l.month !== month) {
      l.month = month;
      l.monthUsed = 0;
    }
    return l;
  }
}

function parse(raw: string | null): Ledger {
  const zero: Ledger = { day: -1, dayUsed: 0, month: -1, monthUsed: 0, total: 0 };
  if (raw === null) return zero;
  try {
    const v = JSON.parse(raw) as Partial<Ledger>;
    const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);
    return { day: n(v.day), dayUsed: n(v.dayUsed), month: n(v.month), monthUsed: n(v.monthUsed), total: n(v.total) };
  } catch {
    return zero;
  }
}

function nextMonthMs(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}
