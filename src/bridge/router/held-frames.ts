import type { DatabaseSync } from 'node:sqlite';
import type { InboundFrame } from '../../bearers/bearer.ts';
import { LOCK_POLL_MS, writeLockFree } from '../../db/busy.ts';
import { isBusyError } from '../../db/sqlite.ts';
import type { Logger } from '../../lib/log.ts';
import type { Pipeline } from './pipeline.ts';

// Frames heard while another process holds the database's write lock (issue 14, item 7;
// docs/decisions.md "Issue 14: waiting for a lock off the event loop"). Storing a frame would
// wait for the lock inside SQLite, and the whole bridge with it. Instead, a frame that finds the
// lock taken waits here, in memory and in the order heard, and goes through the pipeline once
// the lock is free; frames heard meanwhile queue behind it. A device that can keep a frame (an
// SMS on the SIM, an Iridium message at the gateway) is told "not stored" and offers it again:
// it is safer there than in memory.

/** Frames that may wait in memory; later ones are refused (lost for a radio, counted). */
export const MAX_HELD_FRAMES = 1000;

export interface HeldFrameCounters {
  /** Frames that found the lock taken and waited. */
  held: number;
  /** Frames refused because MAX_HELD_FRAMES were waiting. */
  overflow: number;
}

export class HeldFrames {
  readonly #db: DatabaseSync;
  readonly #pipeline: Pipeline;
  readonly #log: Logger;
  readonly #waiting: Array<{ interfaceId: string; frame: InboundFrame }> = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
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

  /**
   * Stores a heard frame now, or keeps it until the lock is free. Answers 'duplicate' for a
   * repeat, 'held' when it waits, false when it was not taken (the device keeps it, or too many
   * wait); other errors are thrown, as before.
   */
  receive(interfaceId: string, frame: InboundFrame, deviceKeeps = false): unknown {
    if (this.#waiting.length === 0 && writeLockFree(this.#db)) {
      try {
        return this.#pipeline.receive(interfaceId, frame);
      } catch (error) {
        // The lock was taken between the look and the write (the message's transaction rolled
        // back whole): wait like any other.
        if (!isBusyError(error)) throw error;
      }
    }
    if (deviceKeeps) return false;
    if (this.#waiting.length >= MAX_HELD_FRAMES) {
      if (this.counters.overflow++ === 0) this.#log.error('held_frames_overflow', { waiting: this.#waiting.length, reason: 'the database stayed locked by another process; frames heard now are lost' });
      return false;
    }
    if (this.#waiting.length === 0) this.#log.warn('frames_held', { reason: 'another process holds the database lock; heard frames wait in memory until it is free' });
    this.counters.held++;
    this.#waiting.push({ interfaceId, frame });
    this.#schedule();
    return 'held';
  }

  /** Stores what waits, in order, while the lock stays free. */
  #drain(): void {
    this.#timer = undefined;
    while (this.#waiting.length > 0) {
      if (!writeLockFree(this.#db)) return this.#schedule();
      const next = this.#waiting[0];
      try {
        this.#pipeline.receive(next.interfaceId, next.frame);
      } catch (error) {
        if (isBusyError(error)) return this.#schedule();
        this.#log.error('held_frame_failed', { interface_id: next.interfaceId, error: (error as Error).message });
      }
      this.#waiting.shift();
    }
    if (this.counters.overflow > 0) this.#log.warn('held_frames_recovered', { lost: this.counters.overflow });
    this.#log.info('frames_released', { note: 'the database lock is free again; the held frames are stored' });
  }

  #schedule(): void {
    if (this.#timer || !this.#db.isOpen) return;
    this.#timer = setTimeout(() => this.#drain(), LOCK_POLL_MS);
  }

  /** The bridge is stopping: frames still waiting are tried once more, then logged as lost. */
  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#waiting.length > 0 && this.#db.isOpen) this.#drain();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#waiting.length > 0) this.#log.error('held_frames_lost', { count: this.#waiting.length, reason: 'the database was still locked at shutdown' });
    this.#waiting.length = 0;
  }
}
