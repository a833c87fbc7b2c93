import type { DatabaseSync } from 'node:sqlite';

// What the alert sources read of the node table (docs/alerts.md): nodes by when they were last
// heard, with the battery level of their last device metrics.

export interface HeardNode {
  node_id: string;
  network: string;
  long_name: string | null;
  last_heard_at: string;
  battery_level: number | null;
}

export class AlertStore {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Nodes last heard at or after `from` and before `to` (ISO times), oldest first, at most `limit`. */
  heardBetween(from: string, to: string, limit: number): HeardNode[] {
    const rows = this.#db
      .prepare(
        `SELECT node_id, network, long_name, last_heard_at, json_extract(device_metrics, '$.battery_level_pct') AS battery_level
         FROM nodes WHERE last_heard_at >= ? AND last_heard_at < ? ORDER BY last_heard_at LIMIT ?`,
      )
      .all(from, to, limit) as unknown as HeardNode[];
    return rows.map((r) => ({ ...r, battery_level: r.battery_level === null ? null : Number(r.battery_level) }));
  }
}
