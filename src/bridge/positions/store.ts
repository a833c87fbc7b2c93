import type { DatabaseSync } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';
import { fromJson } from '../../lib/json.ts';
import { Where } from '../../db/where.ts';

// Where positions come from (docs/api.md, "Positions"): the last one of each node is the node
// database's (nodes.position); a node's track is the position messages it sent, as stored in the
// message history (kind 'position', the bridge's position JSON). Read-only.

export interface LastPosition {
  node_id: string;
  network: string;
  long_name: string | null;
  short_name: string | null;
  interface_id: string;
  last_heard_at: string | null;
  updated_at: string;
  position: { latitude: number; longitude: number; altitude_m?: number; time?: string };
}

export interface TrackPoint {
  latitude: number;
  longitude: number;
  altitude_m: number | null;
  fix_time: string | null;
  heard_at: string;
  interface_id: string | null;
}

export class PositionStore {
  readonly #db: StatementCache;
  constructor(db: DatabaseSync) {
    this.#db = new StatementCache(db);
  }

  /** Nodes with a position, by node id; at most `limit`. */
  last(f: { network?: string; interface_id?: string }, limit: number): LastPosition[] {
    const where = new Where('position IS NOT NULL');
    where.add('network = ?', f.network);
    where.add('interface_id = ?', f.interface_id);
    const rows = this.#db
      .prepare(`SELECT node_id, network, long_name, short_name, interface_id, last_heard_at, updated_at, position FROM nodes ${where.clause} ORDER BY node_id LIMIT ?`)
      .all(...where.args, limit) as unknown as Array<Omit<LastPosition, 'position'> & { position: string }>;
    return rows.map((r) => ({ ...r, position: fromJson(r.position, null)! })).filter((r) => r.position !== null);
  }

  /** Position messages sent by any of these ids (a node and the ids it had before) heard in
   *  [since, until), oldest first; at most `limit`. */
  track(ids: string[], since: string, until: string, limit: number): TrackPoint[] {
    const rows = this.#db
      .prepare(
        `SELECT CAST(payload AS TEXT) AS body, created_at, interface_id FROM messages
         WHERE created_at >= ? AND created_at < ? AND kind = 'position' AND direction = 'inbound' AND from_addr IN (SELECT value FROM json_each(?))
         ORDER BY created_at LIMIT ?`,
      )
      .all(since, until, JSON.stringify(ids), limit) as Array<{ body: string | null; created_at: string; interface_id: string | null }>;
    return rows.flatMap((r) => {
      let p: Record<string, unknown> | null;
      try {
        p = fromJson<Record<string, unknown> | null>(r.body, null);
      } catch {
        return [];
      }
      if (!p || typeof p.latitude !== 'number' || typeof p.longitude !== 'number') return [];
      return [{
        latitude: p.latitude, longitude: p.longitude, altitude_m: typeof p.altitude_m === 'number' ? p.altitude_m : null,
        fix_time: typeof p.time === 'string' ? p.time : null, heard_at: r.created_at, interface_id: r.interface_id,
      }];
    });
  }
}
