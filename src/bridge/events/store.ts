import type { DatabaseSync, StatementSync } from 'node:sqlite';

// The SQL of the event log (docs/events.md, "Resume"): one row per event a client may ask to
// be replayed, its id the event's id. Bounded by count and age (bridge.events); pruned in
// batches, not on every append.

export interface LoggedEvent {
  id: number;
  at: string;
  type: string;
  interface_id: string | null;
  kind: string | null;
  /** The event's JSON, as streamed. */
  data: string;
}

export class EventLogStore {
  readonly #insert: StatementSync;
  readonly #after: StatementSync;
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#insert = db.prepare('INSERT INTO event_log (id, at, type, interface_id, kind, data) VALUES (?, ?, ?, ?, ?, ?)');
    this.#after = db.prepare('SELECT id, at, type, interface_id, kind, data FROM event_log WHERE id > ? ORDER BY id LIMIT ?');
  }

  /** The highest id ever written (kept when the log is pruned empty), 0 for none. */
  lastId(): number {
    const row = this.#db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'event_log'").get() as { seq: number } | undefined;
    return Number(row?.seq ?? 0);
  }

  /** The oldest id kept, null for an empty log. */
  firstId(): number | null {
    const row = this.#db.prepare('SELECT min(id) AS id FROM event_log').get() as { id: number | null };
    return row.id === null ? null : Number(row.id);
  }

  append(e: LoggedEvent): void {
    this.#insert.run(e.id, e.at, e.type, e.interface_id, e.kind, e.data);
  }

  /** Up to `limit` events after `id`, oldest first. */
  after(id: number, limit: number): LoggedEvent[] {
    return (this.#after.all(id, limit) as unknown as LoggedEvent[]).map((r) => ({ ...r, id: Number(r.id) }));
  }

  /** Keeps the `keep` newest events and none older than `olderThan`; returns how many went. */
  prune(keep: number, olderThan: string): number {
    const last = this.lastId();
    const r = this.#db.prepare('DELETE FROM event_log WHERE id <= ? OR at < ?').run(last - keep, olderThan);
    return Number(r.changes);
  }
}
