import type { Clock, TimerHandle } from '../../lib/clock.ts';

// Positions per node, latest only (docs/tak.md, "Rate and outages"): at most one event per node
// every interval; a newer fix meanwhile replaces the one waiting and goes out when the interval
// is over; a fix older than the last one sent for the node is not sent (the marker never moves
// back). After the link comes up, positions gather for a moment first, so a backlog held while
// the TAK end was down sends each node's newest fix, not its oldest.

export type Offer = 'sent' | 'waiting' | 'older';

interface Node {
  lastSentAt: number;
  lastFixMs: number;
  waiting: { fixMs: number; xml: string } | null;
  timer: TimerHandle | null;
}

export class LatestOnly {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #send: (xml: string) => boolean;
  readonly #nodes = new Map<string, Node>();
  #gatherUntil = 0;
  /** Fixes replaced by a newer one before they went out. */
  superseded = 0;

  /** `send` writes an event; false when the link is down (the fix keeps waiting). */
  constructor(clock: Clock, intervalMs: number, send: (xml: string) => boolean) {
    this.#clock = clock;
    this.#intervalMs = intervalMs;
    this.#send = send;
  }

  offer(uid: string, fixMs: number, xml: string): Offer {
    const now = this.#clock.now();
    const n = this.#nodes.get(uid) ?? { lastSentAt: -Infinity, lastFixMs: -Infinity, waiting: null, timer: null };
    this.#nodes.set(uid, n);
    if (fixMs < n.lastFixMs || (n.waiting && fixMs < n.waiting.fixMs)) return 'older';
    if (!n.waiting && now >= this.#gatherUntil && now - n.lastSentAt >= this.#intervalMs && this.#send(xml)) {
      n.lastSentAt = now;
      n.lastFixMs = fixMs;
      return 'sent';
    }
    if (n.waiting) this.superseded++;
    n.waiting = { fixMs, xml };
    this.#schedule(n);
    return 'waiting';
  }

  /** The link came up: gather for `ms`, then send what waits. */
  gather(ms: number): void {
    this.#gatherUntil = this.#clock.now() + ms;
    for (const [uid, n] of this.#nodes) if (n.waiting) this.#schedule(n);
  }

  get waiting(): number {
    let count = 0;
    for (const n of this.#nodes.values()) if (n.waiting) count++;
    return count;
  }

  stop(): void {
    for (const n of this.#nodes.values()) if (n.timer) this.#clock.clearTimeout(n.timer);
    this.#nodes.clear();
  }

  #schedule(n: Node): void {
    if (n.timer) this.#clock.clearTimeout(n.timer);
    const due = Math.max(n.lastSentAt + this.#intervalMs, this.#gatherUntil);
    n.timer = this.#clock.setTimeout(() => {
      n.timer = null;
      const w = n.waiting;
      // Still down: it waits for the next gather.
      if (!w || !this.#send(w.xml)) return;
      n.waiting = null;
      n.lastSentAt = this.#clock.now();
      n.lastFixMs = w.fixMs;
    }, Math.max(0, due - this.#clock.now()));
  }
}
