import type { DatabaseSync } from 'node:sqlite';
import { isBusyError, withoutBusyWait } from '../../db/sqlite.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { DeliveryStore } from '../engine/delivery-store.ts';
import { EMPTY_POLICY, refillMs } from '../senders/policy.ts';
import type { SenderStore } from '../senders/store.ts';
import type { UsageStore } from './usage.ts';
import type { SeenFrameStore } from '../engine/seen-frames.ts';
import { DEDUPE_WINDOW_MS } from '../engine/seen-frames.ts';
import type { MessageStore } from '../engine/message-store.ts';

// docs/api.md section 8: a daily worker deletes messages (telemetry and positions are messages of
// those kinds) older than SERVICE_RETENTION_DAYS, and deliveries already resolved (delivered,
// expired, cancelled). Dead letters stay until an operator retries or cancels them;
// configuration, contacts and keys are never pruned. 0 days keeps everything. Audit entries
// have their own bounds (bridge.audit.retention_days, max_rows: src/bridge/audit/retention.ts).
// The senders view goes the same way: a sender not heard within the retention is
// forgotten with its counters. Whatever the retention, a sender's token bucket is deleted once
// it has refilled under the current policy (a missing bucket starts full: nothing changes), and
// the cost view's days (usage_daily, one row per interface and day) are kept USAGE_KEEP_DAYS.

export const DAY_MS = 86_400_000;

/** Days of the cost view kept: a year and a month, for month-on-month and year-on-year sums. */
export const USAGE_KEEP_DAYS = 400;

/** A run that met a lock or an error is tried again after this long. */
const RETRY_MS = 60_000;

export class RetentionWorker {
  readonly #db: DatabaseSync;
  readonly #messages: MessageStore;
  readonly #deliveries: DeliveryStore;
  readonly #seen: SeenFrameStore;
  readonly #senders: SenderStore | undefined;
  readonly #usage: UsageStore | undefined;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #days: number;
  #timer: TimerHandle | undefined;

  constructor(deps: { db: DatabaseSync; messages: MessageStore; deliveries: DeliveryStore; seen: SeenFrameStore; senders?: SenderStore; usage?: UsageStore; clock: Clock; log: Logger; days: number }) {
    this.#db = deps.db;
    this.#messages = deps.messages;
    this.#deliveries = deps.deliveries;
    this.#seen = deps.seen;
    this.#senders = deps.senders;
    this.#usage = deps.usage;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#days = deps.days;
  }

  /** Prunes once now, then once a day. Keys of repeated frames older than their 24-hour window
   *  are pruned whatever the retention. */
  start(): void {
    if (this.#days === 0) this.#log.info('retention_disabled', { note: 'SERVICE_RETENTION_DAYS=0 keeps every message' });
    this.#tick();
  }

  /** One run, then the next in a day; in a minute when another process held the lock, or the
   *  run failed otherwise (a full disk): the deletes do not wait for a lock on the event loop,
   *  and a run put off is only a run later. */
  #tick(): void {
    let nextMs = DAY_MS;
    try {
      withoutBusyWait(this.#db, () => this.runOnce());
    } catch (error) {
      nextMs = RETRY_MS;
      (isBusyError(error) ? this.#log.warn : this.#log.error)('retention_postponed', { error: (error as Error).message, action: 'trying again in a minute' });
    }
    this.#timer = this.#clock.setTimeout(() => this.#tick(), nextMs);
  }

  stop(): void {
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
  }

  runOnce(): { messages: number; deliveries: number; senders: number; buckets: number; usage_days: number } {
    const now = this.#clock.now();
    this.#seen.deleteOlderThan(now - DEDUPE_WINDOW_MS);
    const cutoff = this.#days === 0 ? null : new Date(now - this.#days * DAY_MS).toISOString();
    const pruned = { messages: 0, deliveries: 0, senders: 0, buckets: 0, usage_days: 0 };
    if (cutoff) {
      pruned.messages = this.#messages.deleteOlderThan(cutoff);
      pruned.deliveries = this.#deliveries.deleteResolvedOlderThan(cutoff);
    }
    if (this.#senders) {
      const policy = this.#senders.policy() ?? EMPTY_POLICY;
      // Without limits no bucket is read any more: all go.
      const bucketsBefore = policy.limits.length === 0 ? Number.MAX_SAFE_INTEGER : now - refillMs(policy);
      const { senders, buckets } = this.#senders.prune(cutoff, bucketsBefore);
      pruned.senders = senders;
      pruned.buckets = buckets;
    }
    if (this.#usage) pruned.usage_days = this.#usage.deleteBefore(new Date(now - USAGE_KEEP_DAYS * DAY_MS).toISOString().slice(0, 10));
    if (Object.values(pruned).some((n) => n > 0)) this.#log.info('retention_pruned', { ...pruned, older_than: cutoff ?? undefined });
    return pruned;
  }
}
