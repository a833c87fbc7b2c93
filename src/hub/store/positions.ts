import type { Queryable } from './sql.ts';

// The last position of each node per bridge (docs/hub.md, "Positions"), read from the position
// events the bridges' uplinks report: each event's body is the bridge's message view (its `from`
// is the node, `payload_b64` the bridge's position JSON, `created_at` when the bridge heard it).
// The newest event of a (bridge, node) wins, by the bridge's event time and then event id; only
// inbound messages count (what a node said, not what the bridge sent). One statement for both
// databases but for reading a field of the JSON body.

export interface HubPositionRow {
  bridge_id: string;
  node_id: string;
  interface_id: string | null;
  /** When the bridge heard the position (its message's created_at). */
  heard_at: string;
  latitude: number;
  longitude: number;
  altitude_m: number | null;
  /** The fix time as the node said it; null when it did not say. */
  fix_time: string | null;
}

export interface PositionFilter {
  bridgeId?: string;
  nodeId?: string;
}

/** A text field of the body: SQLite's json_extract, PostgreSQL's ->> on json. PostgreSQL cannot
 *  read a JSON text holding an escaped NUL character (\u0000, "unsupported Unicode escape
 *  sequence"), and one such body would fail the whole answer: on both databases such an event
 *  is not read (null), in a CASE so PostgreSQL never parses it. */
function field(dialect: 'sqlite' | 'postgres', name: 'from' | 'direction'): string {
  const read = dialect === 'sqlite' ? `json_extract(body, '$.${name}')` : `(CAST(body AS json) ->> '${name}')`;
  return `(CASE WHEN body NOT LIKE '%\\u0000%' ESCAPE '!' THEN ${read} END)`;
}

export async function lastPositions(db: Queryable, dialect: 'sqlite' | 'postgres', tenantId: string, f: PositionFilter, limit: number): Promise<HubPositionRow[]> {
  const node = field(dialect, 'from');
  // NULL parameters switch a filter off, as in the store's other queries.
  const sql = `SELECT bridge_id, node_id, body FROM (
      SELECT bridge_id, ${node} AS node_id, body,
             ROW_NUMBER() OVER (PARTITION BY bridge_id, ${node} ORDER BY ts DESC, event_id DESC) AS n
        FROM positions
       WHERE tenant_id = $1 AND ${field(dialect, 'direction')} = 'inbound'
         AND (CAST($2 AS TEXT) IS NULL OR bridge_id = $2) AND (CAST($3 AS TEXT) IS NULL OR ${node} = $3)
    ) newest
    WHERE n = 1 AND node_id IS NOT NULL
    ORDER BY bridge_id, node_id LIMIT $4`;
  const rows = await db.query(sql, [tenantId, f.bridgeId ?? null, f.nodeId ?? null, limit]);
  return rows.flatMap((r) => {
    const p = positionOf(String(r.body));
    return p ? [{ bridge_id: String(r.bridge_id), node_id: String(r.node_id), ...p }] : [];
  });
}

/** The position fields of one event body; null when it carries no readable position. */
export function positionOf(body: string): Omit<HubPositionRow, 'bridge_id' | 'node_id'> | null {
  let view: Record<string, unknown>;
  let p: Record<string, unknown>;
  try {
    view = JSON.parse(body) as Record<string, unknown>;
    if (typeof view.payload_b64 !== 'string') return null;
    p = JSON.parse(Buffer.from(view.payload_b64, 'base64').toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (!p || typeof p !== 'object') return null;
  const { latitude, longitude } = p;
  if (typeof latitude !== 'number' || typeof longitude !== 'number' || !Number.isFinite(latitude) || !Number.isFinite(longitude)) return null;
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null;
  return {
    interface_id: typeof view.interface_id === 'string' ? view.interface_id : null,
    heard_at: typeof view.created_at === 'string' ? view.created_at : '',
    latitude,
    longitude,
    altitude_m: typeof p.altitude_m === 'number' && Number.isFinite(p.altitude_m) ? p.altitude_m : null,
    fix_time: typeof p.time === 'string' ? p.time : null,
  };
}
