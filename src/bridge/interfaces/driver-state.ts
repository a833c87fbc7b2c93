import type { DatabaseSync } from 'node:sqlite';
import type { DeferredWrites } from '../../db/busy.ts';
import { StatementCache } from '../../db/statement-cache.ts';

// SQL for what drivers keep across restarts (BearerContext.state; the driver_state table).
// Drivers write from their own callbacks, on the event loop: a write that meets another
// process's lock waits in `deferred` (db/busy.ts), and until it is written, reads see it here.

export class DriverStateStore {
  readonly #db: StatementCache;
  readonly #deferred: DeferredWrites | undefined;
  /** Values written but still waiting for the lock, by interface id and key (null: deleted). */
  readonly #waiting = new Map<string, Map<string, string | null>>();

  constructor(db: DatabaseSync, deferred?: DeferredWrites) {
    this.#db = new StatementCache(db);
    this.#deferred = deferred;
  }
  get(interfaceId: string, key: string): string | null {
    const waiting = this.#waiting.get(interfaceId);
    if (waiting?.has(key)) return waiting.get(key) ?? null;
    const r = this.#db.prepare('SELECT value FROM driver_state WHERE interface_id = ? AND key = ?').get(interfaceId, key) as { value: string } | undefined;
    return r?.value ?? null;
  }
  set(interfaceId: string, key: string, value: string | null, nowIso: string): void {
    const write = () => {
      if (value === null) this.#db.prepare('DELETE FROM driver_state WHERE interface_id = ? AND key = ?').run(interfaceId, key);
      else this.#db.prepare('INSERT OR REPLACE INTO driver_state (interface_id, key, value, updated_at) VALUES (?, ?, ?, ?)').run(interfaceId, key, value, nowIso);
      // Written: reads go to the table again, unless a later value waits behind this one.
      const waiting = this.#waiting.get(interfaceId);
      if (waiting?.get(key) === value) waiting.delete(key);
    };
    if (!this.#deferred) return write();
    let waiting = this.#waiting.get(interfaceId);
    if (!waiting) this.#waiting.set(interfaceId, (waiting = new Map()));
    waiting.set(key, value);
    this.#deferred.run(write);
  }
  /** The interface is gone: so is what its driver kept. */
  forget(interfaceId: string): void {
    this.#waiting.delete(interfaceId);
    this.#db.prepare('DELETE FROM driver_state WHERE interface_id = ?').run(interfaceId);
  }
}
