import type { DatabaseSync } from 'node:sqlite';
import type { NodeNetwork, NodeReport } from '../../bearers/bearer.ts';
import { StatementCache } from '../../db/statement-cache.ts';
import { fromJson, toJson } from '../../lib/json.ts';
import type { NodeIdentity, Renumbering } from './node-identity.ts';
import type { NodeRow } from './rows.ts';
import { Where } from '../../db/where.ts';
import { NODE_NETWORKS } from '../../bearers/drivers.ts';

/** The network of a report that names none: the first mesh the registry lists (the nodes
 *  column's default since migration 10). Bearers name theirs (bearer-host.ts). */
const DEFAULT_NETWORK = NODE_NETWORKS[0];

// SQL for the node database: every mesh node a radio heard or reported, one row per node id,
// kept across restarts. A report only fills what it says: a NodeInfo without a position keeps
// the position heard before.
//
// A node with a public key is followed by it (node-identity.ts): a report that brings a known
// key under another id moves the node's row to the new id (what the old row knew fills what
// the report leaves out) and records the old id as the node's former one. A report that brings
// another key for an id whose node has a key is a second node claiming the number: the first
// key keeps it and the report is not stored, as the firmware's NodeDB drops such a NodeInfo
// (docs/meshtastic.md, "Two nodes, one number").

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

/** What a report changed about a node's identity (the core logs and counts it). */
export type NodeChange =
  | ({ type: 'renumbered' } & Renumbering)
  | { type: 'key_conflict'; network: string; node_id: string; known_key: string; claimed_key: string; at: string };

/** The columns a move from a former id keeps when the new row has none. */
const KEPT = ['long_name', 'short_name', 'hw_model', 'role', 'position', 'device_metrics', 'snr_db', 'hops_away', 'public_key'] as const;

export class NodeStore {
  readonly #db: StatementCache;
  readonly identity: NodeIdentity;
  constructor(db: DatabaseSync, identity: NodeIdentity) {
    this.#db = new StatementCache(db);
    this.identity = identity;
  }

  /** Stores a report; says when it renumbered a node or was refused for another node's key. */
  upsert(interfaceId: string, r: NodeReport, nowIso: string): NodeChange | null {
    const change = r.public_key ? this.#followKey(r as NodeReport & { public_key: string }, nowIso) : null;
    if (change === 'stale') return null;
    if (change?.type === 'key_conflict') return change;
    const json = (v: unknown) => (v === undefined ? null : toJson(v));
    this.#db
      .prepare(
        `INSERT INTO nodes (node_id, network, num, interface_id, long_name, short_name, hw_model, role, position, device_metrics, snr_db, hops_away, via_mqtt, last_heard_at, updated_at, public_key)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (node_id) DO UPDATE SET
           network = excluded.network, num = coalesce(excluded.num, num), interface_id = excluded.interface_id,
           long_name = coalesce(excluded.long_name, long_name), short_name = coalesce(excluded.short_name, short_name),
           hw_model = coalesce(excluded.hw_model, hw_model), role = coalesce(excluded.role, role),
           position = coalesce(excluded.position, position), device_metrics = coalesce(excluded.device_metrics, device_metrics),
           snr_db = coalesce(excluded.snr_db, snr_db), hops_away = coalesce(excluded.hops_away, hops_away),
           via_mqtt = excluded.via_mqtt, last_heard_at = coalesce(excluded.last_heard_at, last_heard_at), updated_at = excluded.updated_at,
           public_key = coalesce(public_key, excluded.public_key)`,
      )
      .run(
        r.id, r.network ?? DEFAULT_NETWORK, r.num ?? null, interfaceId, r.long_name ?? null, r.short_name ?? null, r.hw_model ?? null, r.role ?? null,
        json(r.position), json(r.device_metrics), r.snr_db ?? null, r.hops_away ?? null, r.via_mqtt ? 1 : 0, r.last_heard_at ?? null, nowIso, r.public_key ?? null,
      );
    return change;
  }

  /** Before a report with a key is stored: a conflict, a renumbering (the row moved), a stale
   *  report of a former id (not stored), or null. */
  #followKey(r: NodeReport & { public_key: string }, at: string): NodeChange | 'stale' | null {
    const network = r.network ?? DEFAULT_NETWORK;
    const own = this.#db.prepare('SELECT public_key FROM nodes WHERE node_id = ?').get(r.id) as { public_key: string | null } | undefined;
    if (own?.public_key && own.public_key !== r.public_key) return { type: 'key_conflict', network, node_id: r.id, known_key: own.public_key, claimed_key: r.public_key, at };
    // The id was a renumbered node's, and now another key has it: it names that node no more.
    const aliasOf = this.identity.aliasOf(r.id);
    if (aliasOf !== undefined && this.get(aliasOf)?.public_key !== r.public_key) this.identity.forget(r.id);
    if (own?.public_key) return null;
    const holder = this.#db
      .prepare('SELECT node_id, last_heard_at FROM nodes WHERE public_key = ? AND network = ? AND node_id <> ? ORDER BY last_heard_at DESC LIMIT 1')
      .get(r.public_key, network, r.id) as { node_id: string; last_heard_at: string | null } | undefined;
    if (!holder) return null;
    // A board's node database may still list the node under the number it had (an entry older
    // than what the bridge knows of the node now): that is no move back.
    if (aliasOf === holder.node_id && r.last_heard_at && holder.last_heard_at && r.last_heard_at <= holder.last_heard_at) return 'stale';
    this.#move(holder.node_id, r.id);
    const renumbering: Renumbering = { network, former_id: holder.node_id, node_id: r.id, public_key: r.public_key, at };
    this.identity.record(renumbering);
    return { type: 'renumbered', ...renumbering };
  }

  /** The row of `from` becomes the row of `to`, or fills what `to`'s row lacks. */
  #move(from: string, to: string): void {
    if (!this.get(to)) {
      this.#db.prepare('UPDATE nodes SET node_id = ?, num = NULL WHERE node_id = ?').run(to, from);
      return;
    }
    this.#db
      .prepare(
        `UPDATE nodes AS n SET ${KEPT.map((c) => `${c} = coalesce(n.${c}, o.${c})`).join(', ')},
           last_heard_at = CASE WHEN o.last_heard_at > coalesce(n.last_heard_at, '') THEN o.last_heard_at ELSE n.last_heard_at END
         FROM (SELECT * FROM nodes WHERE node_id = ?) AS o WHERE n.node_id = ?`,
      )
      .run(from, to);
    this.#db.prepare('DELETE FROM nodes WHERE node_id = ?').run(from);
  }

  /** A node by its id, or by an id it had before (the node at its current id). */
  get(nodeId: string): NodeRow | undefined {
    const r = this.#db.prepare('SELECT * FROM nodes WHERE node_id = ?').get(nodeId) as unknown as Raw | undefined;
    if (r) return decode(r);
    const now = this.identity.aliasOf(nodeId);
    if (now === undefined) return undefined;
    const moved = this.#db.prepare('SELECT * FROM nodes WHERE node_id = ?').get(now) as unknown as Raw | undefined;
    return moved && decode(moved);
  }

  list(f: NodeFilter, limit: number): NodeRow[] {
    const where = new Where();
    where.add('interface_id = ?', f.interface_id);
    where.add('network = ?', f.network);
    where.add("(instr(lower(coalesce(long_name, '')), lower(?)) > 0 OR instr(lower(coalesce(short_name, '')), lower(?)) > 0 OR instr(node_id, lower(?)) > 0)", f.q, f.q, f.q);
    where.add('node_id > ?', f.after_id);
    const sql = `SELECT * FROM nodes ${where.clause} ORDER BY node_id LIMIT ?`;
    return (this.#db.prepare(sql).all(...where.args, limit) as unknown as Raw[]).map(decode);
  }
}
