import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { SendResult } from '../bearer.ts';

// The host's transmit queue and flow control (docs/protocols/rnode.md 1.5; docs/api.md 2.7 "flow control waits
// for the radio's READY signal before the next frame"). With flow control on, a DATA frame
// goes out only after a READY 01 that came after the previous DATA frame. Current firmware
// never volunteers READY, so the queue asks with a READY query (0F) whenever a frame waits
// and no answer is outstanding, and asks again after READY 00 (queue full) or silence.
// Without flow control frames are written in order as they come.

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
  readyQueries = 0;

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

  /** The link went away: every waiting frame fails, retryable. */
  detach(reason: string): void {
    this.#io = null;
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
    const p = this.#queue.shift()!;
    this.#ready = false;
    this.#writing = true;
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
