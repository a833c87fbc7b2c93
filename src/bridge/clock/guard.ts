import type { DatabaseSync } from 'node:sqlite';
import { type CommitRider, rideNextCommit, transaction } from '../../db/sqlite.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import { SteadyClock } from '../../lib/steady-clock.ts';
import { ClockStore, type Rebased, type TimeSource } from './store.ts';
import { type InterfaceKind, TIME_TELLING_KINDS } from '../../bearers/drivers.ts';

const isTimeTellingKind = (kind: string): kind is InterfaceKind => (TIME_TELLING_KINDS as readonly string[]).includes(kind);

// The bridge's clock on a machine whose clock cannot be trusted (docs/decisions.md,
// "Issue 30: a clock a Raspberry Pi cannot trust"). A Raspberry Pi has no real-time clock: it
// boots with the time saved at the last shutdown (or 1970) and jumps when NTP arrives, if it
// ever does. Every time the bridge reads comes from `clock`, a SteadyClock that:
//
// - starts at the system's time, or at the last time this bridge knew to be good when the
//   system's is behind it (a start 30 days behind sends its waiting retries within their
//   backoff, not a month later);
// - then moves with the monotonic clock only: a step of the system clock changes nothing until
//   check() sees it;
// - adopts a system clock that moved ahead (NTP arrived), after re-basing everything written
//   under the old time by the same amount, so no delivery expires, no retry waits and no
//   message is pruned because of the jump;
// - never follows the system clock backwards beyond a few seconds: a backward step is logged
//   and shown, and the bridge keeps counting its own time (ids stay increasing, deadlines keep
//   their length);
// - may take a radio's time (offer()) when the operator allows that source, only forwards.
//
// The last good time is written at start, at each adoption, at stop, and at most once a minute
// with a commit that happens anyway: an idle bridge writes nothing.

/** Differences up to this are followed silently (NTP's own steps, timer jitter). */
export const FOLLOW_MS = 30_000;
/** How often the system clock is compared with ours. */
export const CHECK_EVERY_MS = 10_000;
/** The last good time rides a commit at most this often. */
const PERSIST_EVERY_MS = 60_000;

export interface ClockJump {
  at: string;
  when: 'start' | 'running';
  /** Signed: positive when the new time is ahead of the bridge's. */
  seconds: number;
  source: TimeSource;
  action: string;
}

export interface ClockStatus {
  time: string;
  source: TimeSource;
  /** The system clock minus the bridge's, in seconds (0 when they agree). */
  system_offset_s: number;
  last_good_at: string;
  last_jump: ClockJump | null;
}

export interface ClockGuardHooks {
  /** Called inside the re-base's transaction before its writes (the write-behind flushes). */
  beforeRebase?(): void;
  /** After a re-base committed: queues and deadlines read their times again. */
  rebased?(deltaMs: number, moved: Rebased): void;
  /** Whether the operator allows a radio's time (bridge.clock.radio_time). */
  allows?(source: TimeSource): boolean;
}

export class ClockGuard {
  readonly clock: SteadyClock;
  readonly #db: DatabaseSync;
  readonly #store: ClockStore;
  readonly #source: Clock;
  readonly #log: Logger;
  #hooks: ClockGuardHooks = {};
  #timeSource: TimeSource;
  /** Our time when the current frame began (start, last adoption): what a re-base moves. */
  #frameStart: number;
  #lastGood: number;
  #persistedAt: number;
  #riding = false;
  #lastJump: ClockJump | null = null;
  /** The backward offset last told, so a system clock that stays behind is logged once. */
  #toldBehind = 0;
  #timer: TimerHandle | undefined;

  constructor(db: DatabaseSync, source: Clock, log: Logger) {
    this.#db = db;
    this.#store = new ClockStore(db);
    this.#source = source;
    this.#log = log;
    const stored = this.#store.read();
    const lastGood = Math.max(stored?.last_good_ms ?? -Infinity, this.#store.newestMessageMs() ?? -Infinity);
    const system = source.now();
    let start = system;
    this.#timeSource = 'system';
    if (Number.isFinite(lastGood) && system < lastGood - FOLLOW_MS) {
      start = lastGood;
      this.#timeSource = 'last_good';
      this.#jump('start', system - lastGood, 'last_good', 'the system clock is behind the last time this bridge knew to be good: the bridge counts on from that time until a later time arrives (NTP, or a radio the operator allows)');
      this.#toldBehind = system - lastGood;
    } else if (Number.isFinite(lastGood) && system > lastGood + FOLLOW_MS) {
      // Time the bridge was off, or a clock set ahead while it was: nothing tells them apart.
      this.#log.info('clock_ahead_of_last_run', { seconds: Math.round((system - lastGood) / 1000), last_good_at: new Date(lastGood).toISOString(), note: 'taken as time the bridge was off' });
    }
    this.clock = new SteadyClock(source, start);
    this.#frameStart = start;
    this.#lastGood = start;
    this.#persistedAt = source.monotonic();
    this.#store.write(start, this.#timeSource);
  }

  /** Starts the periodic comparison with the system clock. */
  start(hooks: ClockGuardHooks): void {
    this.#hooks = hooks;
    this.#schedule();
  }

  stop(): void {
    if (this.#timer) this.#source.clearTimeout(this.#timer);
    this.#timer = undefined;
    try {
      if (this.#db.isOpen) transaction(this.#db, () => this.#store.write(this.clock.now(), this.#timeSource));
    } catch (error) {
      this.#log.warn('clock_state_unwritten', { error: (error as Error).message });
    }
  }

  status(): ClockStatus {
    const now = this.clock.now();
    return {
      time: new Date(now).toISOString(),
      source: this.#timeSource,
      system_offset_s: Math.round(this.clock.drift() / 1000),
      last_good_at: new Date(Math.max(this.#lastGood, now)).toISOString(),
      last_jump: this.#lastJump,
    };
  }

  /** Compares the system clock with ours and acts on what it finds (the timer calls it). */
  check(): void {
    this.#persistSoon();
    const drift = this.clock.drift();
    if (Math.abs(drift) <= FOLLOW_MS) {
      // Small steps and slews are followed as they come; the frame does not change.
      if (this.#timeSource === 'system' || drift > 0) {
        if (Math.abs(drift) >= 1000) this.clock.shift(drift);
        if (this.#timeSource !== 'system' && drift > 0) this.#timeSource = 'system';
      }
      this.#toldBehind = 0;
      return;
    }
    if (drift > 0) {
      this.#adopt(drift, 'system');
      return;
    }
    // Behind: keep our own time. Told again only when it moves by more than FOLLOW_MS.
    if (Math.abs(drift - this.#toldBehind) > FOLLOW_MS) {
      this.#toldBehind = drift;
      this.#jump('running', drift, 'system', 'the system clock went back: the bridge keeps counting its own time (ids, deadlines, retention and rate limits are not moved)');
    }
  }

  /** A radio's idea of the time (a Meshtastic board's, the Iridium network's, the cellular
   *  network's). Taken only when the operator allows the source and it is ahead of ours by
   *  more than FOLLOW_MS: the bridge's time never goes back. Answers whether it was taken. */
  offer(source: string, ms: number): boolean {
    if (!Number.isFinite(ms) || !isTimeTellingKind(source) || !this.#hooks.allows?.(source)) return false;
    const ahead = ms - this.clock.now();
    if (ahead <= FOLLOW_MS) return false;
    return this.#adopt(ahead, source);
  }

  #adopt(deltaMs: number, source: TimeSource): boolean {
    let moved: Rebased;
    const now = this.clock.now();
    try {
      moved = transaction(this.#db, () => {
        this.#hooks.beforeRebase?.();
        const r = this.#store.rebase(this.#frameStart, deltaMs);
        this.#store.write(now + deltaMs, source);
        return r;
      });
    } catch (error) {
      // The database is busy or failing: our clock stays as it is and the next check tries again.
      this.#log.error('clock_rebase_failed', { seconds: Math.round(deltaMs / 1000), error: (error as Error).message, action: `trying again in ${CHECK_EVERY_MS / 1000} s` });
      return false;
    }
    this.clock.shift(deltaMs);
    this.#frameStart = now + deltaMs;
    this.#lastGood = now + deltaMs;
    this.#timeSource = source;
    this.#toldBehind = 0;
    this.#jump('running', deltaMs, source, `adopted; re-based what this run wrote under the old time: ${moved.deliveries} deliveries, ${moved.fallbacks} fallback lists, ${moved.messages} messages`);
    try {
      this.#hooks.rebased?.(deltaMs, moved);
    } catch (error) {
      this.#log.error('clock_rebase_wake_failed', { error: (error as Error).message });
    }
    return true;
  }

  #jump(when: ClockJump['when'], deltaMs: number, source: TimeSource, action: string): void {
    this.#lastJump = { at: new Date(this.#source.now()).toISOString(), when, seconds: Math.round(deltaMs / 1000), source, action };
    this.#log.warn('clock_jump', { when, seconds: this.#lastJump.seconds, source, action });
  }

  /** The last good time rides the next commit, at most once a minute. */
  #persistSoon(): void {
    if (this.#riding || this.#source.monotonic() - this.#persistedAt < PERSIST_EVERY_MS) return;
    this.#riding = true;
    const rider: CommitRider = {
      ride: () => this.#store.write(this.clock.now(), this.#timeSource),
      committed: () => {
        this.#riding = false;
        this.#persistedAt = this.#source.monotonic();
        this.#lastGood = Math.max(this.#lastGood, this.clock.now());
      },
      failed: () => {
        this.#riding = false;
      },
    };
    rideNextCommit(this.#db, rider);
  }

  #schedule(): void {
    this.#timer = this.#source.setTimeout(() => {
      try {
        this.check();
      } finally {
        this.#schedule();
      }
    }, CHECK_EVERY_MS);
  }
}
