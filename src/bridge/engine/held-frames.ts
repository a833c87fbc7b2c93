import type { DatabaseSync } from 'node:sqlite';
import type { InboundFrame } from '../../bearers/bearer.ts';
import { LOCK_POLL_MS, withBusyWait } from '../../db/busy.ts';
import { commitMark, committed, isLockHeldError, pendingCommit, transaction, withoutBusyWait } from '../../db/sqlite.ts';
import type { Logger } from '../../lib/log.ts';
import type { Pipeline } from './pipeline.ts';

// Frames heard while another process holds the database's write lock
// (docs/decisions.md "Issue 14: body depth, secrets, disk full, busy database"). Storing a frame
// would wait for the lock inside SQLite, and the whole bridge with it. Instead each frame is
// stored in one transaction taken without waiting: every part an inbound transform cut it into,
// or none. A frame that finds the lock taken waits here, in memory and in the order heard, and
// goes through the pipeline once the lock is free; radio frames heard meanwhile queue behind
// it. A device that can keep a frame (an SMS on the SIM, an Iridium message in the modem's MT
// buffer) is told "not stored" and offers it again: it is safer there than in memory.
//
// A held frame's answer (HeldFrame.stored) settles once it is on disk: a driver that proves
// receipt (LXMF) proves only what is stored.

/** Frames that may wait in memory; later ones are refused (lost for a radio, counted). */
export const MAX_HELD_FRAMES = 1000;

export interface HeldFrameCounters {
  /** Frames that found the lock taken and waited (since start). */
  held: number;
  /** Frames refused because MAX_HELD_FRAMES were waiting (since start). */
  overflow: number;
}

/** The lock was taken: nothing of the frame was stored. */
const LOCKED = Symbol('locked');

/** receive()'s answer for a frame that waits in memory. */
export class HeldFrame {
  /** True once the frame is stored and committed; false when it was lost (its store or its
   *  group's COMMIT failed, or the bridge stopped with the lock still taken). Never rejects. */
  readonly stored: Promise<boolean>;
  readonly settle: (stored: Promise<boolean> | boolean) => void;
  constructor() {
    let settle!: (stored: Promise<boolean> | boolean) => void;
    this.stored = new Promise<boolean>((resolve) => (settle = resolve));
    this.settle = settle;
  }
}

interface Waiting {
  interfaceId: string;
  frame: InboundFrame;
  notRepeated: boolean;
  answer: HeldFrame;
}

export class HeldFrames {
  readonly #db: DatabaseSync;
  readonly #pipeline: Pipeline;
  readonly #log: Logger;
  readonly #waiting: Waiting[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** Refused in this episode of the lock: logged once when it starts, and when it ends. */
  #overflowNow = 0;
  readonly counters: HeldFrameCounters = { held: 0, overflow: 0 };

  constructor(deps: { db: DatabaseSync; pipeline: Pipeline; log: Logger }) {
    this.#db = deps.db;
    this.#pipeline = deps.pipeline;
    this.#log = deps.log;
  }

  /** Frames waiting for the lock. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** True while what receive() stored waits in an open group for its commit (db/transaction.ts). */
  pending(): boolean {
    return pendingCommit(this.#db);
  }

  /** How to wait for what receive() just stored: the returned function settles once it is
   *  committed, and rejects if its group's COMMIT failed, even when it is called after that
   *  (a group lost since this call counts). Asking costs nothing until the function is called. */
  whenCommitted(options: { hurry?: boolean } = {}): () => Promise<void> {
    const mark = commitMark(this.#db);
    return () => committed(this.#db, mark, options);
  }

  /**
   * Stores a heard frame now, or keeps it until the lock is free. Answers 'duplicate' for a
   * repeat, a HeldFrame when it waits, false when it was not taken (the device keeps it, or too
   * many wait, or the bridge is stopping); other errors are thrown, as before. A device that
   * keeps its frames is tried at once even while radio frames wait: their order does not
   * concern it. A frame stored in a group that has not committed yet (group commit, issue
   * 22) is not on disk until its commit (pending() says so; whenCommitted()): the bearer host
   * answers the driver then. A duplicate too: the copy it repeats may be in that group.
   * `notRepeated`: the sender will not send the frame again (a radio acknowledged it over the
   * air before the bridge had it, DriverModule.framesNotRepeated): it is committed as soon as it
   * is stored, with whatever group is open, never left waiting for a window.
   */
  receive(interfaceId: string, frame: InboundFrame, deviceKeeps = false, notRepeated = false): unknown {
    if (this.#closed) return false;
    if (this.#waiting.length === 0 || deviceKeeps) {
      const stored = this.#store(interfaceId, frame, notRepeated);
      if (stored !== LOCKED) return stored;
    }
    if (deviceKeeps) return false;
    if (this.#waiting.length >= MAX_HELD_FRAMES) {
      this.counters.overflow++;
      if (this.#overflowNow++ === 0) this.#log.error('held_frames_overflow', { waiting: this.#waiting.length, reason: 'the database stayed locked by another process; frames heard now are lost' });
      return false;
    }
    if (this.#waiting.length === 0) this.#log.warn('frames_held', { reason: 'another process holds the database lock; heard frames wait in memory until it is free' });
    this.counters.held++;
    const answer = new HeldFrame();
    this.#waiting.push({ interfaceId, frame, notRepeated, answer });
    this.#schedule();
    return answer;
  }

  /** One transaction for the whole frame, begun without waiting: the lock is ours for all its
   *  parts, or the frame waits (LOCKED) with nothing of it stored. A frame whose sender repeats
   *  may group on the window's evidence (db/transaction.ts); one whose sender will not is
   *  committed at once. */
  #store(interfaceId: string, frame: InboundFrame, notRepeated: boolean, wait = false): unknown {
    const store = () => transaction(this.#db, () => this.#pipeline.receive(interfaceId, frame), { group: notRepeated ? false : 'paced' });
    try {
      return wait ? withBusyWait(this.#db, store) : withoutBusyWait(this.#db, store, { joinGroup: true });
    } catch (error) {
      if (isLockHeldError(error)) return LOCKED;
      throw error;
    }
  }

  /** Stores what waits, in order, while the lock stays free. */
  #drain(wait = false): void {
    this.#timer = undefined;
    while (this.#waiting.length > 0) {
      const next = this.#waiting[0];
      const mark = commitMark(this.#db);
      try {
        if (this.#store(next.interfaceId, next.frame, next.notRepeated, wait) === LOCKED) return this.#schedule();
        // On disk once its group commits. Not an acknowledgement that hurries the group: the
        // frame waited already, and nobody may be asking.
        next.answer.settle(committed(this.#db, mark, { hurry: false }).then(() => true, () => false));
      } catch (error) {
        // Not the lock (the interface was deleted meanwhile, a full disk): this frame is lost,
        // the ones behind it are not held up.
        this.#log.error('held_frame_failed', { interface_id: next.interfaceId, error: (error as Error).message });
        next.answer.settle(false);
      }
      this.#waiting.shift();
    }
    if (this.#overflowNow > 0) this.#log.warn('held_frames_recovered', { lost: this.#overflowNow });
    this.#overflowNow = 0;
    this.#log.info('frames_released', { note: 'the database lock is free again; the held frames are stored' });
  }

  #schedule(): void {
    if (this.#timer || !this.#db.isOpen) return;
    this.#timer = setTimeout(() => this.#drain(), LOCK_POLL_MS);
  }

  /** The bridge is stopping: frames still waiting are stored, waiting up to SQLite's full
   *  busy wait for the lock (nothing else needs the event loop now), or logged as lost. */
  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#waiting.length > 0 && this.#db.isOpen) this.#drain(true);
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#waiting.length > 0) this.#log.error('held_frames_lost', { count: this.#waiting.length, reason: 'the database was still locked at shutdown' });
    for (const w of this.#waiting) w.answer.settle(false);
    this.#waiting.length = 0;
  }
}
