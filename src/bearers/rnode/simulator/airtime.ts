import type { Clock } from '../../../lib/clock.ts';

// Airtime and channel load as the RNode firmware reports them in STAT_CHTM (docs/protocols/rnode.md
// 1.6): short-term over about 15 s (two 7.5 s bins), long-term over 3600 s; airtime counts
// the radio's own transmissions, channel load counts them plus what it heard, capped at 100 %.
// The firmware samples in bins; here each transmission is an interval and a window sums
// the part of each interval inside it, which is the figure the bins approximate.

export const SHORT_WINDOW_MS = 15_000;
export const LONG_WINDOW_MS = 3_600_000;

interface Span {
  start: number;
  end: number;
  own: boolean;
}

export interface AirtimePercent {
  airtime_short_pct: number;
  airtime_long_pct: number;
  channel_load_short_pct: number;
  channel_load_long_pct: number;
}

export class AirtimeLedger {
  readonly #clock: Clock;
  #spans: Span[] = [];

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Own transmission starting now and lasting ms. */
  transmitted(ms: number): void {
    const now = this.#clock.now();
    this.#add({ start: now, end: now + ms, own: true });
  }

  /** Someone else's transmission that ended now after ms on air. */
  heard(ms: number): void {
    const now = this.#clock.now();
    this.#add({ start: now - ms, end: now, own: false });
  }

  percent(): AirtimePercent {
    const now = this.#clock.now();
    const sum = (window: number, own: boolean) => {
      const from = now - window;
      let ms = 0;
      for (const s of this.#spans) {
        if (own && !s.own) continue;
        ms += Math.max(0, Math.min(s.end, now) - Math.max(s.start, from));
      }
      return Math.min(100, (ms / window) * 100);
    };
    return {
      airtime_short_pct: sum(SHORT_WINDOW_MS, true),
      airtime_long_pct: sum(LONG_WINDOW_MS, true),
      channel_load_short_pct: sum(SHORT_WINDOW_MS, false),
      channel_load_long_pct: sum(LONG_WINDOW_MS, false),
    };
  }

  #add(span: Span): void {
    // Spans older than the long window no longer count: memory stays bounded by traffic.
    const horizon = this.#clock.now() - LONG_WINDOW_MS;
    this.#spans = this.#spans.filter((s) => s.end > horizon);
    this.#spans.push(span);
  }
}
