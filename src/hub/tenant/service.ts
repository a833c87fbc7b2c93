import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import type { HubStore } from '../store/store.ts';

// docs/api.md section 3 (tenant row) and 4.2: DELETE /api/tenant marks the tenant for deletion; its
// keys stop working at once (src/hub/keys/service.ts); 30 days later the purge job removes
// its rows from every tenant table found in the catalogue. Until then an owner can restore it.

export const SOFT_DELETE_MS = 30 * 24 * 3600 * 1000;
/** How often the purge job looks for tenants whose 30 days are over. */
export const PURGE_CHECK_MS = 3600 * 1000;

export interface TenantDeletion {
  id: string;
  deleted_at: string;
  purge_after: string;
}

export class TenantService {
  readonly #store: HubStore;
  readonly #clock: Clock;
  readonly #log: Logger;

  constructor(store: HubStore, clock: Clock, log: Logger) {
    this.#store = store;
    this.#clock = clock;
    this.#log = log;
  }

  async markDeleted(tenantId: string): Promise<TenantDeletion> {
    const now = this.#clock.now();
    const deletedAt = new Date(now).toISOString();
    const purgeAfter = new Date(now + SOFT_DELETE_MS).toISOString();
    await this.#store.markTenantDeleted(tenantId, deletedAt, purgeAfter);
    // A repeated DELETE (the first answer lost on the way) answers with the first marking.
    const row = await this.#store.getTenant(tenantId);
    if (!row?.deleted_at || !row.purge_after) throw new AppError('ERR_NOT_FOUND', 404, `tenant '${tenantId}' does not exist`);
    this.#log.warn('tenant_marked_deleted', { tenant: tenantId, purge_after: row.purge_after, note: 'keys stop working now; POST /api/tenant/restore with an owner key undoes it until the purge' });
    return { id: tenantId, deleted_at: row.deleted_at, purge_after: row.purge_after };
  }

  async restore(tenantId: string): Promise<{ id: string; restored: boolean }> {
    const restored = await this.#store.restoreTenant(tenantId);
    if (restored) this.#log.info('tenant_restored', { tenant: tenantId });
    return { id: tenantId, restored };
  }

  /** Purges every tenant whose soft-deletion period is over; returns their ids. */
  async purgeDue(): Promise<string[]> {
    const now = new Date(this.#clock.now()).toISOString();
    const purged: string[] = [];
    for (const id of await this.#store.tenantsDueForPurge(now)) {
      const removed = await this.#store.purgeTenant(id, now);
      if (!removed) continue; // restored meanwhile
      purged.push(id);
      this.#log.warn('tenant_purged', { tenant: id, rows: Object.values(removed).reduce((a, b) => a + b, 0), tables: Object.keys(removed).length });
    }
    return purged;
  }
}

/**
 * Runs purgeDue at start and then every PURGE_CHECK_MS on the injected clock (a fake clock in
 * tests moves 30 days in one call). A failed run is logged and retried at the next check.
 */
export class TenantPurgeJob {
  readonly #tenants: TenantService;
  readonly #clock: Clock;
  readonly #log: Logger;
  #timer: ReturnType<Clock['setTimeout']> | undefined;
  #running: Promise<unknown> = Promise.resolve();
  #stopped = false;

  constructor(tenants: TenantService, clock: Clock, log: Logger) {
    this.#tenants = tenants;
    this.#clock = clock;
    this.#log = log;
  }

  start(): void {
    this.#tick();
  }

  /** Resolves when the run in progress (if any) has finished. */
  idle(): Promise<void> {
    return this.#running.then(() => {});
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
    await this.idle();
  }

  #tick(): void {
    if (this.#stopped) return;
    this.#running = this.#tenants.purgeDue().catch((error) => this.#log.error('tenant_purge_failed', { error: (error as Error).message, next_try_ms: PURGE_CHECK_MS }));
    this.#running.then(() => {
      if (!this.#stopped) this.#timer = this.#clock.setTimeout(() => this.#tick(), PURGE_CHECK_MS);
    });
  }
}
