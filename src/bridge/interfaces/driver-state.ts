import type { DatabaseSync } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';

// SQL for what drivers keep across restarts (BearerContext.state; the driver_state table).

export class DriverStateStore {
  readonly #db: StatementCache;
  constructor(db: DatabaseSync) {
    this.#db = new StatementCache(db);
  }
  get(interfaceId: string, key: string): string | null {
    const r = this.#db.prepare('SELECT value FROM driver_state WHERE interface_id = ? AND key = ?').get(interfaceId, key) as { value: string } | undefined;
    return r?.value ?? null;
  }
  set(interfaceId: string, key: string, value: string | null, nowIso: string): void {
    if (value === null) this.#db.prepare('DELETE FROM driver_state WHERE interface_id = ? AND key = ?').run(interfaceId, key);
    else this.#db.prepare('INSERT OR REPLACE INTO driver_state (interface_id, key, value, updated_at) VALUES (?, ?, ?, ?)').run(interfaceId, key, value, nowIso);
  }
  /** The interface is gone: so is what its driver kept. */
  forget(interfaceId: string): void {
    this.#db.prepare('DELETE FROM driver_state WHERE interface_id = ?').run(interfaceId);
  }
}
