import { isBusyError } from '../../db/sqlite.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import { DAY_MS } from '../messages/retention.ts';
import type { AuditLimits, AuditStore } from './store.ts';

// The audit log's retention (bridge.audit in docs/config.md): at start and then daily,
// like the message RetentionWorker beside it (messages/retention.ts), entries older than
// retention_days go (0: no age limit), and the table is cut to max_rows in case the bound was
// lowered since the last write (every write already keeps it, see AuditStore). Limits are read
// on every run, so a configuration change applies at the next one.

export class AuditRetention {
  readonly #store: AuditStore;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #limits: () => AuditLimits;
  #timer: TimerHandle | undefined;

  constructor(deps: { store: AuditStore; clock: Clock; log: Logger; limits: () => AuditLimits }) {
    this.#store = deps.store;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#limits = deps.limits;
  }

  start(): void {
    const tick = () => {
      // A run put off by another process's lock is tried again in a minute.
      const ran = this.runOnce();
      this.#timer = this.#clock.setTimeout(tick, ran.postponed ? 60_000 : DAY_MS);
    };
    tick();
  }

  stop(): void {
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  runOnce(): { old: number; excess: number; postponed?: boolean } {
    const { retention_days: days, max_rows: maxRows } = this.#limits();
    const cutoff = days === 0 ? null : new Date(this.#clock.now() - days * DAY_MS).toISOString();
    try {
      const old = cutoff === null ? 0 : this.#store.deleteOlderThan(cutoff);
      const excess = this.#store.pruneToRows(maxRows);
      if (old + excess > 0) this.#log.info('audit_pruned', { older_than: cutoff, old, excess, max_rows: maxRows });
      return { old, excess };
    } catch (error) {
      // A full database: the next daily run tries again; writes keep the row bound. A lock
      // another process holds: in a minute.
      const busy = isBusyError(error);
      this.#log.error('audit_prune_failed', { error: (error as Error).message, action: busy ? 'trying again in a minute' : 'trying again tomorrow' });
      return { old: 0, excess: 0, postponed: busy };
    }
  }
}
