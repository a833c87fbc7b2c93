import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { SendResult } from '../bearer.ts';
import { AIRTIME_LONG_MS, AIRTIME_SHORT_MS, firmwarePacketCostMs, fitsWhole, type FirmwareRadio, type QueueCapacity } from './firmware.ts';

// The host's transmit queue and flow control (docs/protocols/rnode.md 1.5; docs/api.md 2.7 "flow control waits
// for the radio's READY signal before the next frame"). With flow control on, a DATA frame
// goes out only after a READY 01 that came after the previous DATA frame. Current firmware
// never volunteers READY, so the queue asks with a READY query (0F) whenever a frame waits
// and no answer is outstanding, and asks again after READY 00 (queue full) or silence.
// Without flow control frames are written in order as they come.
// READY 01 only promises room for one byte (docs/protocols/rnode.md 1.10), so the queue also
// keeps its own view of the radio's packet queue: the frames it handed over and has not yet
// seen charged in a STAT_CHTM report. A frame goes only if it fits that queue whole and, with
// an airtime limit, if the last reported figure plus everything handed over plus this frame
// stays within the limit as the firmware counts it; otherwise it waits for the next report.
// A frame written under these rules was taken whole by the radio: that is `delivered`.

export interface FlowTiming {
  /** Ask READY again after this long without an answer, or after READY 00. */
  readyRetryMs: number;
  /** A frame that waited this long for READY fails (retryable). */
  sendTimeoutMs: number;
}

export interface FlowIo {
  writeData(payload: Uint8Array): Promise<void>;
  queryReady(): Promise<void>;
}

/** What the driver knows of the radio: queue size, radio settings and limits (percent, 0 = none). */
export interface RadioPlan {
  capacity: QueueCapacity;
  radio: FirmwareRadio;
  stLimitPct: number;
  ltLimitPct: number;
}

interface InFlight {
  bytes: number;
  costMs: number;
  at: number;
  /** Airtime of itself and every frame ahead of it when it was handed over. */
  queuedMs: number;
}

/** A frame handed over is taken as sent without a report that shows it (a bin change and its
 *  transmission fell between two reports) only once it and everything ahead of it when it was
 *  handed over had half again their airtime plus this long for channel access. */
const ASSUME_SENT_MARGIN_MS = 5_000;
/** Reported figures are cut to 0.01 %: the true short-term figure may be this much higher. */
const SHORT_CUT_MS = AIRTIME_SHORT_MS / 10_000;
const LONG_CUT_MS = AIRTIME_LONG_MS / 10_000;

interface Pending {
  payload: Uint8Array;
  resolve: (r: SendResult) => void;
  timer: TimerHandle;
}

export class TxQueue {
  readonly #clock: Clock;
  readonly #timing: FlowTiming;
  readonly #flowControl: boolean;
  #io: FlowIo | null = null;
  #queue: Pending[] = [];
  #ready = false;
  #asking: TimerHandle | null = null;
  #writing = false;
  #plan: RadioPlan | null = null;
  #inFlight: InFlight[] = [];
  /** Last STAT_CHTM airtime figures in ms of their windows; null until one came. */
  #reported: { shortMs: number; longMs: number } | null = null;
  /** The device's current bin as far as known (ms charged since its last bin change). */
  #currentBinMs: number | null = null;
  readyQueries = 0;
  /** Frames that waited for room in the radio's queue or for airtime. */
  heldForRoom = 0;

  constructor(clock: Clock, timing: FlowTiming, flowControl: boolean) {
    this.#clock = clock;
    this.#timing = timing;
    this.#flowControl = flowControl;
  }

  get depth(): number {
    return this.#queue.length;
  }

  /** A link came online: frames may go. READY state starts unknown (must be asked). */
  attach(io: FlowIo): void {
    this.#io = io;
    this.#ready = false;
    this.#drain();
  }

  /** What the radio is (set when it comes online; before that only READY gates frames). */
  plan(plan: RadioPlan): void {
    this.#plan = plan;
  }

  /** The radio's view as the driver keeps it (stats). */
  get radioQueue(): { packets: number; bytes: number } {
    return { packets: this.#inFlight.length, bytes: this.#inFlight.reduce((n, f) => n + f.bytes, 0) };
  }

  /** A STAT_CHTM report (percent): frames whose charge shows are off the radio's queue. */
  report(shortPct: number, longPct: number): void {
    const shortMs = (shortPct / 100) * AIRTIME_SHORT_MS;
    const longMs = (longPct / 100) * AIRTIME_LONG_MS;
    const prev = this.#reported;
    this.#reported = { shortMs, longMs };
    if (prev) {
      const delta = shortMs - prev.shortMs;
      let charged: number | null = null;
      if (delta >= -SHORT_CUT_MS) {
        // No bin change: the rise is what was sent since.
        charged = delta;
        if (this.#currentBinMs !== null) this.#currentBinMs += Math.max(0, delta);
      } else if (this.#currentBinMs !== null) {
        // A bin change: the figure is now the old current bin plus what was sent since.
        charged = shortMs - this.#currentBinMs;
        this.#currentBinMs = Math.max(0, charged);
      } else if (this.#inFlight.length === 0) {
        this.#currentBinMs = shortMs;
      }
      if (charged !== null) this.#settle(charged + 2 * SHORT_CUT_MS);
    }
    const now = this.#clock.now();
    while (this.#inFlight.length && now - this.#inFlight[0].at > 1.5 * this.#inFlight[0].queuedMs + ASSUME_SENT_MARGIN_MS) this.#inFlight.shift();
    this.#drain();
  }

  #settle(chargedMs: number): void {
    while (this.#inFlight.length && this.#inFlight[0].costMs <= chargedMs) {
      chargedMs -= this.#inFlight.shift()!.costMs;
    }
  }

  /** Room in the radio's queue and airtime within the limits for this frame. */
  #fits(n: number): boolean {
    const plan = this.#plan;
    if (!plan) return true;
    if (!fitsWhole(plan.capacity, this.radioQueue, n)) return false;
    if (!plan.stLimitPct && !plan.ltLimitPct) return true;
    const r = this.#reported;
    if (!r) return false;
    const pending = this.#inFlight.reduce((ms, f) => ms + f.costMs, 0) + firmwarePacketCostMs(n, plan.radio);
    const within = (limitPct: number, windowMs: number, usedMs: number, cutMs: number) =>
      !limitPct || usedMs + cutMs + pending <= (limitPct / 100) * windowMs;
    return within(plan.stLimitPct, AIRTIME_SHORT_MS, r.shortMs, SHORT_CUT_MS) && within(plan.ltLimitPct, AIRTIME_LONG_MS, r.longMs, LONG_CUT_MS);
  }

  /** The link went away: every waiting frame fails, retryable. */
  detach(reason: string): void {
    this.#io = null;
    this.#inFlight = [];
    this.#reported = null;
    this.#currentBinMs = null;
    this.#ready = false;
    this.#stopAsking();
    const waiting = this.#queue;
    this.#queue = [];
    for (const p of waiting) this.#finish(p, { ok: false, error: `ERR_RNODE_LINK: ${reason}`, retryable: true });
  }

  /** Resolves when the frame has been written to the radio, or with the reason it was not. */
  enqueue(payload: Uint8Array): Promise<SendResult> {
    return new Promise((resolve) => {
      const p: Pending = { payload, resolve, timer: null as unknown as TimerHandle };
      p.timer = this.#clock.setTimeout(() => {
        const i = this.#queue.indexOf(p);
        if (i < 0) return;
        this.#queue.splice(i, 1);
        resolve({ ok: false, error: `ERR_RNODE_NOT_READY: the radio did not signal READY within ${this.#timing.sendTimeoutMs} ms`, retryable: true });
      }, this.#timing.sendTimeoutMs);
      this.#queue.push(p);
      this.#drain();
    });
  }

  /** A READY frame arrived: 01 room, 00 full. */
  ready(room: boolean): void {
    this.#stopAsking();
    this.#ready = room;
    if (!room) this.#askLater();
    this.#drain();
  }

  /** ERROR 04 (queue full): same as READY 00. */
  full(): void {
    this.ready(false);
  }

  #drain(): void {
    const io = this.#io;
    if (!io || this.#writing || this.#queue.length === 0) return;
    if (this.#flowControl && !this.#ready) {
      if (!this.#asking) this.#ask(io);
      return;
    }
    if (this.#flowControl && !this.#fits(this.#queue[0].payload.length)) {
      // Waits for the next STAT_CHTM (about once a second), which calls drain again.
      this.heldForRoom++;
      return;
    }
    const p = this.#queue.shift()!;
    this.#ready = false;
    this.#writing = true;
    if (this.#plan) {
      const costMs = firmwarePacketCostMs(p.payload.length, this.#plan.radio);
      const queuedMs = this.#inFlight.reduce((ms, f) => ms + f.costMs, costMs);
      this.#inFlight.push({ bytes: p.payload.length, costMs, at: this.#clock.now(), queuedMs });
    }
    io.writeData(p.payload).then(
      () => this.#finish(p, { ok: true }),
      (e: unknown) => this.#finish(p, { ok: false, error: e instanceof Error ? e.message : String(e), retryable: true }),
    ).finally(() => {
      this.#writing = false;
      this.#drain();
    });
  }

  #ask(io: FlowIo): void {
    this.readyQueries++;
    this.#askLater();
    io.queryReady().catch(() => {});
  }

  #askLater(): void {
    this.#stopAsking();
    this.#asking = this.#clock.setTimeout(() => {
      this.#asking = null;
      this.#drain();
    }, this.#timing.readyRetryMs);
  }

  #stopAsking(): void {
    if (this.#asking) this.#clock.clearTimeout(this.#asking);
    this.#asking = null;
  }

  #finish(p: Pending, r: SendResult): void {
    this.#clock.clearTimeout(p.timer);
    p.resolve(r);
  }
}
