import type { DatabaseSync } from 'node:sqlite';
import type { DeferredWrites } from '../../db/busy.ts';
import { StatementCache } from '../../db/statement-cache.ts';

// SQL for what drivers keep across restarts (BearerContext.state; the driver_state table).
// Drivers write from their own callbacks, on the event loop: a write that meets another
// process's lock waits in `deferred` (db/busy.ts), and until it is written, reads see it here.
// Forgetting an interface goes through the same queue, so a write queued before it cannot
// bring the state back after it.

export class DriverStateStore {
  readonly #db: StatementCache;
  readonly #deferred: DeferredWrites | undefined;
  /** Values written but still waiting for the lock, by interface id and key (null: deleted). */
  readonly #waiting = new Map<string, Map<string, { value: string | null }>>();
  /** Interfaces forgotten: writes still queued for them are not made. Ids are never reused. */
  readonly #forgotten = new Set<string>();

  constructor(db: DatabaseSync, deferred?: DeferredWrites) {
    this.#db = new StatementCache(db);
    this.#deferred = deferred;
  }

  get(interfaceId: string, key: string): string | null {
    const waiting = this.#waiting.get(interfaceId)?.get(key);
    if (waiting) return waiting.value;
    const r = this.#db.prepare('SELECT value FROM driver_state WHERE interface_id = ? AND key = ?').get(interfaceId, key) as { value: string } | undefined;
    return r?.value ?? null;
  }

  set(interfaceId: string, key: string, value: string | null, nowIso: string): void {
    // Each write has its own entry: the one that ends the overlay is the latest one only.
    const entry = { value };
    let waiting = this.#waiting.get(interfaceId);
    if (!waiting) this.#waiting.set(interfaceId, (waiting = new Map()));
    waiting.set(key, entry);
    const settle = () => {
      const now = this.#waiting.get(interfaceId);
      if (now?.get(key) !== entry) return;
      now.delete(key);
      if (now.size === 0) this.#waiting.delete(interfaceId);
    };
    const write = () => {
      if (!this.#forgotten.has(interfaceId)) {
        if (value === null) this.#db.prepare('DELETE FROM driver_state WHERE interface_id = ? AND key = ?').run(interfaceId, key);
        else this.#db.prepare('INSERT OR REPLACE INTO driver_state (interface_id, key, value, updated_at) VALUES (?, ?, ?, ?)').run(interfaceId, key, value, nowIso);
      }
      settle();
    };
    // A write never made (dropped, failed) leaves reads to the table again.
    if (this.#deferred) this.#deferred.run(write, settle);
    else write();
  }

  /** The interface is gone: so is what its driver kept, and any write of it still queued. */
  forget(interfaceId: string): void {
    this.#forgotten.add(interfaceId);
    this.#waiting.delete(interfaceId);
    const write = () => void this.#db.prepare('DELETE FROM driver_state WHERE interface_id = ?').run(interfaceId);
    if (this.#deferred) this.#deferred.run(write);
    else write();
  }
}
