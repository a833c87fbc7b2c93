import type { DatabaseSync } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';

// SQL for the keys of frames stored recently (InboundFrame.dedupeKey): a radio that repeats a
// packet, before or after a restart, must not have it stored and forwarded twice.

export const DEDUPE_WINDOW_MS = 24 * 3_600_000;

export class SeenFrameStore {
  readonly #db: StatementCache;
  constructor(db: DatabaseSync) {
    this.#db = new StatementCache(db);
  }
  /** True when the key was stored since `sinceMs`. */
  seen(key: string, sinceMs: number): boolean {
    return this.#db.prepare('SELECT 1 FROM seen_frames WHERE key = ? AND seen_ms >= ?').get(key, sinceMs) !== undefined;
  }
  remember(key: string, interfaceId: string, nowMs: number): void {
    this.#db.prepare('INSERT OR REPLACE INTO seen_frames (key, interface_id, seen_ms) VALUES (?, ?, ?)').run(key, interfaceId, nowMs);
  }
  /** Retention: keys older than the window are no use. */
  deleteOlderThan(cutoffMs: number): number {
    return Number(this.#db.prepare('DELETE FROM seen_frames WHERE seen_ms < ?').run(cutoffMs).changes);
  }
}
