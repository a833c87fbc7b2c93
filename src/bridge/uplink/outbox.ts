import type { DatabaseSync } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';
import type { UplinkEventKind } from '../../lib/topics.ts';

// SQL for the uplink tables, nothing else (schema.ts).

export interface OutboxRow {
  seq: number;
  event_id: string;
  kind: UplinkEventKind;
  payload: string;
}

export class UplinkOutbox {
  // insert runs inside the router's transaction for every message and delivery: compiled once.
  readonly #db: StatementCache;
  constructor(db: DatabaseSync) {
    this.#db = new StatementCache(db);
  }
  /** Runs on the caller's connection: inside the caller's open transaction, if there is one. */
  insert(eventId: string, kind: UplinkEventKind, payload: string, createdAt: string): void {
    this.#db.prepare('INSERT INTO uplink_outbox (event_id, kind, payload, created_at) VALUES (?, ?, ?, ?)').run(eventId, kind, payload, createdAt);
  }
  oldest(limit: number): OutboxRow[] {
    return this.#db.prepare('SELECT seq, event_id, kind, payload FROM uplink_outbox ORDER BY seq LIMIT ?').all(limit) as unknown as OutboxRow[];
  }
  delete(seq: number): void {
    this.#db.prepare('DELETE FROM uplink_outbox WHERE seq = ?').run(seq);
  }
  count(): number {
    return (this.#db.prepare('SELECT count(*) AS n FROM uplink_outbox').get() as { n: number }).n;
  }
  /** Increments and returns the boot counter. */
  nextSession(): number {
    const row = this.#db
      .prepare(
        `INSERT INTO uplink_state (name, value) VALUES ('session', '1')
         ON CONFLICT (name) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
         RETURNING value`,
      )
      .get() as { value: string };
    return Number(row.value);
  }
}
