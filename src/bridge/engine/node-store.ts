import type { DatabaseSync } from 'node:sqlite';
import type { NodeNetwork, NodeReport } from '../../bearers/bearer.ts';
import { StatementCache } from '../../db/statement-cache.ts';
import { fromJson, toJson } from '../../lib/json.ts';
import type { NodeRow } from './rows.ts';

// SQL for the node database: every mesh node a radio heard or reported, one row per node id,
// kept across restarts. A report only fills what it says: a NodeInfo without a position keeps
// the position heard before.


interface Raw extends Omit<NodeRow, 'position' | 'device_metrics' | 'via_mqtt'> {
  position: string | null;
  device_metrics: string | null;
  via_mqtt: number;
}

const decode = (r: Raw): NodeRow => ({ ...r, position: fromJson(r.position, null), device_metrics: fromJson(r.device_metrics, null), via_mqtt: r.via_mqtt === 1 });

export interface NodeFilter {
  interface_id?: string;
  network?: NodeNetwork;
  /** Part of the long or short name, or of the node id. */
  q?: string;
  /** Keyset paging: node ids after this one. */
  after_id?: string;
}

export class NodeStore {
  readonly #db: StatementCache;
  constructor(db: DatabaseSync) {
    this.#db = new StatementCache(db);
  }

  upsert(interfaceId: string, r: NodeReport, nowIso: string): void {
    const json = (v: unknown) => (v === undefined ? null : toJson(v));
    this.#db
      .prepare(
        `INSERT INTO nodes (node_id, network, num, interface_id, long_name, short_name, hw_model, role, position, device_metrics, snr_db, hops_away, via_mqtt, last_heard_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (node_id) DO UPDATE SET
           network = excluded.network, num = coalesce(excluded.num, num), interface_id = excluded.interface_id,
           long_name = coalesce(excluded.long_name, long_name), short_name = coalesce(excluded.short_name, short_name),
           hw_model = coalesce(excluded.hw_model, hw_model), role = coalesce(excluded.role, role),
           position = coalesce(excluded.position, position), device_metrics = coalesce(excluded.device_metrics, device_metrics),
           snr_db = coalesce(excluded.snr_db, snr_db), hops_away = coalesce(excluded.hops_away, hops_away),
           via_mqtt = excluded.via_mqtt, last_heard_at = coalesce(excluded.last_heard_at, last_heard_at), updated_at = excluded.updated_at`,
      )
      .run(
        r.id, r.network ?? 'meshtastic', r.num ?? null, interfaceId, r.long_name ?? null, r.short_name ?? null, r.hw_model ?? null, r.role ?? null,
        json(r.position), json(r.device_metrics), r.snr_db ?? null, r.hops_away ?? null, r.via_mqtt ? 1 : 0, r.last_heard_at ?? null, nowIso,
      );
  }

  get(nodeId: string): NodeRow | undefined {
    const r = this.#db.prepare('SELECT * FROM nodes WHERE node_id = ?').get(nodeId) as unknown as Raw | undefined;
    return r && decode(r);
  }

  list(f: NodeFilter, limit: number): NodeRow[] {
    const where: string[] = [];
    const args: Array<string | number> = [];
    if (f.interface_id !== undefined) {
      where.push('interface_id = ?');
      args.push(f.interface_id);
    }
    if (f.network !== undefined) {
      where.push('network = ?');
      args.push(f.network);
    }
    if (f.q !== undefined) {
      where.push("(instr(lower(coalesce(long_name, '')), lower(?)) > 0 OR instr(lower(coalesce(short_name, '')), lower(?)) > 0 OR instr(node_id, lower(?)) > 0)");
      args.push(f.q, f.q, f.q);
    }
    if (f.after_id !== undefined) {
      where.push('node_id > ?');
      args.push(f.after_id);
    }
    const sql = `SELECT * FROM nodes ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY node_id LIMIT ?`;
    return (this.#db.prepare(sql).all(...args, limit) as unknown as Raw[]).map(decode);
  }
}
