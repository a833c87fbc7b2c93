import type { DatabaseSync } from 'node:sqlite';
import { isBusyError, withoutBusyWait } from '../../db/sqlite.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { DeliveryStore } from '../deliveries/store.ts';
import type { SeenFrameStore } from '../router/seen-frames.ts';
import { DEDUPE_WINDOW_MS } from '../router/seen-frames.ts';
import type { MessageStore } from './store.ts';

// docs/api.md section 8: a daily worker deletes messages (telemetry and positions are messages of
// those kinds) older than SERVICE_RETENTION_DAYS, and deliveries already resolved (delivered,
// expired, cancelled). Dead letters stay until an operator retries or cancels them;
// configuration, contacts and keys are never pruned. 0 days keeps everything. Audit entries
// have their own bounds (bridge.audit.retention_days, max_rows: src/bridge/audit/retention.ts).

export const DAY_MS = 86_400_000;

/** A run that met a lock or an error is tried again after this long. */
const RETRY_MS = 60_000;

export class RetentionWorker {
  readonly #db: DatabaseSync;
  readonly #messages: MessageStore;
  readonly #deliveries: DeliveryStore;
  readonly #seen: SeenFrameStore;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #days: number;
  #timer: TimerHandle | undefined;

  constructor(deps: { db: DatabaseSync; messages: MessageStore; deliveries: DeliveryStore; seen: SeenFrameStore; clock: Clock; log: Logger; days: number }) {
    this.#db = deps.db;
    this.#messages = deps.messages;
    this.#deliveries = deps.deliveries;
    this.#seen = deps.seen;
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
   *  run failed otherwise (a full disk): the deletes do not wait for a lock on the event loop
   *  (issue 14, item 7), and a run put off is only a run later. */
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

  runOnce(): { messages: number; deliveries: number } {
    this.#seen.deleteOlderThan(this.#clock.now() - DEDUPE_WINDOW_MS);
    if (this.#days === 0) return { messages: 0, deliveries: 0 };
    const cutoff = new Date(this.#clock.now() - this.#days * DAY_MS).toISOString();
    const messages = this.#messages.deleteOlderThan(cutoff);
    const deliveries = this.#deliveries.deleteResolvedOlderThan(cutoff);
    if (messages + deliveries > 0) this.#log.info('retention_pruned', { messages, deliveries, older_than: cutoff });
    return { messages, deliveries };
  }
}
