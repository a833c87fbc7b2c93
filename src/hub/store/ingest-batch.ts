import { addRanges, type Range, type SeqState, toRanges } from '../../hubwire/topics.ts';
import type { Queryable, SqlDriver, SqlValue } from './sql.ts';

// The hub's ingest writes a burst of MQTT messages as one transaction (the
// batching policy itself lives in src/hub/ingest/batcher.ts). What a batch holds, in the
// order the broker delivered it:
//  - events: stored once per (tenant, event_id) per kind, as insertEvent does one at a time.
//    Duplicates inside the batch (a redelivery arriving beside the original) are found here,
//    before the database, so the statement never sees the same key twice;
//  - the bridges the events came from: their last_seen moved forward, one row per bridge with
//    the batch's latest time (what touchBridge per event would have left);
//  - hello and status messages: the same statements as recordHello/recordStatus, in order;
//    a status that names its connection (conn) is ordered by connection instead;
//  - the bridges' sequence numbers: every event's seq (stored or duplicate) and the
//    ranges a bridge reported gone are added to bridge_seqs, read and written under the row's
//    lock (replicas share it), and the resulting states are handed back for the acks.
//
// SQLite runs in this process: one prepared statement per row inside the transaction is the
// cheapest form there, with no round trip to save. PostgreSQL gets each table's rows as one
// JSON parameter expanded by json_to_recordset: one statement per table whatever the batch
// size (so one prepared statement, not one per row count), and the statements of a batch are
// issued together so postgres.js pipelines them on the transaction's connection.

export type EventTable = 'messages' | 'deliveries' | 'telemetry' | 'positions';

export interface EventRow {
  tenant_id: string;
  event_id: string;
  bridge_id: string;
  ts: string;
  /** The event's JSON payload as received. */
  body: string;
  received_at: string;
}

export interface BatchEvent extends EventRow {
  table: EventTable;
}

export type BatchOp =
  | { op: 'event'; event: BatchEvent; seq?: number }
  | { op: 'hello'; tenantId: string; bridgeId: string; version: string; interfaces: unknown[]; at: string }
  | { op: 'status'; tenantId: string; bridgeId: string; state: 'online' | 'offline'; session: number; ts: string; at: string; conn?: string }
  | { op: 'gone'; tenantId: string; bridgeId: string; ranges: Range[]; at: string };

/** Per op, in order: stored (new), duplicate (event already stored), ignored (older status). */
export type BatchOutcome = 'stored' | 'duplicate' | 'ignored';

/** A bridge's sequence state after a batch: what the hub acknowledges to it.
 *  conn: the batch held that connection's online, so this answers it (the handshake). */
export interface AckState extends SeqState {
  tenantId: string;
  bridgeId: string;
  /** The highest number ever heard from the bridge (tracked ranges are bounded; this is not). */
  seen: number;
  conn?: string;
}

/** The outcomes, in op order, and the acknowledgements the batch calls for. */
export type BatchOutcomes = BatchOutcome[] & { acks?: AckState[] };

/** Connections a bridge row remembers as replaced (their late wills and onlines are ignored). */
const OLD_CONNS_KEPT = 16;

export const HELLO_SQL = `INSERT INTO bridges (tenant_id, bridge_id, version, interfaces, first_seen, last_seen) VALUES ($1, $2, $3, $4, $5, $5)
       ON CONFLICT (tenant_id, bridge_id) DO UPDATE SET version = excluded.version, interfaces = excluded.interfaces,
         last_seen = CASE WHEN excluded.last_seen > bridges.last_seen THEN excluded.last_seen ELSE bridges.last_seen END`;

// docs/design.md section 8: a last will can reach us after the bridge reconnected (same boot,
// later connection) or restarted (higher session). A status counts only if it is from a
// newer session, or from the same session and a newer connection (ts is the connection's
// start), or is the offline of the very connection whose online we hold.
export const STATUS_SQL = `INSERT INTO bridges (tenant_id, bridge_id, state, session, status_ts, first_seen, last_seen) VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT (tenant_id, bridge_id) DO UPDATE SET state = excluded.state, session = excluded.session, status_ts = excluded.status_ts,
         last_seen = CASE WHEN excluded.last_seen > bridges.last_seen THEN excluded.last_seen ELSE bridges.last_seen END
       WHERE excluded.session > bridges.session
          OR (excluded.session = bridges.session AND (bridges.status_ts IS NULL OR excluded.status_ts > bridges.status_ts
              OR (excluded.status_ts = bridges.status_ts AND excluded.state = 'offline')))`;

export const TOUCH_SQL = `INSERT INTO bridges (tenant_id, bridge_id, first_seen, last_seen) VALUES ($1, $2, $3, $3)
       ON CONFLICT (tenant_id, bridge_id) DO UPDATE SET
         last_seen = CASE WHEN excluded.last_seen > bridges.last_seen THEN excluded.last_seen ELSE bridges.last_seen END`;

export const insertEventSql = (table: EventTable) => `INSERT INTO ${table} (tenant_id, event_id, bridge_id, ts, body, received_at) VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (tenant_id, event_id) DO NOTHING`;

// PostgreSQL only: a batch's rows as one JSON array of objects, read by json_to_recordset
// (each element parsed once; r->>0 ... on json would scan every element once per column).
// The parameter is declared TEXT: typed json, postgres.js would JSON-encode the string again.
const pgInsertEventsSql = (table: EventTable) => `INSERT INTO ${table} (tenant_id, event_id, bridge_id, ts, body, received_at)
  SELECT t, e, b, s, y, r FROM json_to_recordset(CAST($1 AS TEXT)::json) AS x(t text, e text, b text, s text, y text, r text)
  ON CONFLICT (tenant_id, event_id) DO NOTHING RETURNING event_id, tenant_id`;
const PG_TOUCH_SQL = `INSERT INTO bridges (tenant_id, bridge_id, first_seen, last_seen)
  SELECT t, b, r, r FROM json_to_recordset(CAST($1 AS TEXT)::json) AS x(t text, b text, r text)
  ON CONFLICT (tenant_id, bridge_id) DO UPDATE SET
    last_seen = CASE WHEN excluded.last_seen > bridges.last_seen THEN excluded.last_seen ELSE bridges.last_seen END`;

const SEP = '\u0000';

/**
 * True when the database refused a statement because of the values in it, so writing the
 * same rows again would fail again. PostgreSQL: 22P05 and 22021 (a NUL character, or one
 * the encoding lacks, in text: JSON's "\u0000" decodes to one), 22001 (value too long),
 * 22003 (numeric value out of range: a number too big for its column), 54000 (program
 * limit, e.g. an index row too big) and class 23 (integrity constraint).
 * SQLite: SQLITE_TOOBIG (18), SQLITE_CONSTRAINT (19), SQLITE_MISMATCH (20). Anything else
 * (connection lost, deadlock, disk full, busy, read-only, a bad statement) is the database's
 * state or ours, not the event's: the batch comes again through a redelivery, never dropped.
 */
export function isRowError(dialect: 'sqlite' | 'postgres', error: unknown): boolean {
  if (dialect === 'postgres') {
    const code = (error as { code?: unknown })?.code;
    return typeof code === 'string' && (/^23[0-9A-Z]{3}$/.test(code) || ['22P05', '22021', '22001', '22003', '54000'].includes(code));
  }
  const errcode = (error as { errcode?: unknown })?.errcode;
  return typeof errcode === 'number' && [18, 19, 20].includes(errcode & 0xff);
}

/** Writes the batch in one transaction; outcomes line up with ops. */
export async function writeBatch(db: SqlDriver, ops: BatchOp[]): Promise<BatchOutcomes> {
  const outcomes: BatchOutcomes = new Array(ops.length).fill('duplicate');
  // Sequence numbers per bridge, and the connections whose online asks for an ack.
  const seqs = new Map<string, { tenantId: string; bridgeId: string; numbers: number[]; gone: Range[]; conn?: string; at: string }>();
  const seqOf = (tenantId: string, bridgeId: string, at: string) => {
    const key = tenantId + SEP + bridgeId;
    let e = seqs.get(key);
    if (!e) seqs.set(key, (e = { tenantId, bridgeId, numbers: [], gone: [], at }));
    if (at > e.at) e.at = at;
    return e;
  };
  const connStatuses: number[] = [];
  // First occurrence of each (table, tenant, event_id) is the one written; later ones in the
  // same batch are duplicates whatever the database says.
  const firsts = new Map<EventTable, Map<string, number>>();
  const touches = new Map<string, [string, string, string]>();
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i];
    if (o.op === 'gone') seqOf(o.tenantId, o.bridgeId, o.at).gone.push(...o.ranges);
    if (o.op === 'status' && o.conn !== undefined) {
      connStatuses.push(i);
      if (o.state === 'online') seqOf(o.tenantId, o.bridgeId, o.at).conn = o.conn;
    }
    if (o.op !== 'event') continue;
    const e = o.event;
    if (o.seq !== undefined) seqOf(e.tenant_id, e.bridge_id, e.received_at).numbers.push(o.seq);
    let seen = firsts.get(e.table);
    if (!seen) firsts.set(e.table, (seen = new Map()));
    const key = e.tenant_id + SEP + e.event_id;
    if (!seen.has(key)) seen.set(key, i);
    const bridge = e.tenant_id + SEP + e.bridge_id;
    const t = touches.get(bridge);
    if (!t || e.received_at > t[2]) touches.set(bridge, [e.tenant_id, e.bridge_id, e.received_at]);
  }
  // Bridges in key order: replicas sharing a subscription write the same bridges' rows in
  // their own batches, and taking the row locks in one order keeps them from deadlocking.
  const touched = [...touches].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, t]) => t);
  const others = ops.flatMap((o, i) => (o.op === 'event' || o.op === 'gone' || (o.op === 'status' && o.conn !== undefined) ? [] : [i]));
  for (let i = 0; i < ops.length; i++) if (ops[i].op === 'gone') outcomes[i] = 'stored';
  return db.transaction(async (tx) => {
    const pending: Array<Promise<unknown>> = [];
    if (db.dialect === 'postgres') {
      for (const [table, seen] of firsts) {
        const rows = [...seen.values()].map((i) => {
          const e = (ops[i] as { event: BatchEvent }).event;
          return { t: e.tenant_id, e: e.event_id, b: e.bridge_id, s: e.ts, y: e.body, r: e.received_at };
        });
        pending.push(
          tx.query(pgInsertEventsSql(table), [JSON.stringify(rows)]).then((inserted) => {
            for (const r of inserted) outcomes[seen.get(String(r.tenant_id) + SEP + String(r.event_id))!] = 'stored';
          }),
        );
      }
      if (touched.length > 0) pending.push(tx.run(PG_TOUCH_SQL, [JSON.stringify(touched.map(([t, b, r]) => ({ t, b, r })))]));
    } else {
      const runMany = tx.runMany ?? ((sql: string, rows: SqlValue[][]) => Promise.all(rows.map((r) => tx.run(sql, r))));
      for (const [table, seen] of firsts) {
        const indexes = [...seen.values()];
        const changed = await runMany(
          insertEventSql(table),
          indexes.map((i) => {
            const e = (ops[i] as { event: BatchEvent }).event;
            return [e.tenant_id, e.event_id, e.bridge_id, e.ts, e.body, e.received_at];
          }),
        );
        for (let k = 0; k < indexes.length; k++) if (changed[k] > 0) outcomes[indexes[k]] = 'stored';
      }
      await runMany(TOUCH_SQL, touched);
    }
    for (const i of others) pending.push(writeOther(tx, ops[i]).then((o) => void (outcomes[i] = o)));
    // Every statement is issued before the first is awaited (pipelined on PostgreSQL); a
    // failure of any rolls the whole batch back.
    const settled = await Promise.allSettled(pending);
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    // Statuses with a connection id: read, decided and written one after the other, in order.
    for (const i of connStatuses) outcomes[i] = await writeConnStatus(tx, db.dialect, ops[i] as Extract<BatchOp, { op: 'status' }>);
    if (seqs.size > 0) outcomes.acks = await writeSeqs(tx, [...seqs.values()]);
    return outcomes;
  });
}

/**
 * Adds each bridge's numbers to bridge_seqs and returns the new states. The rows are made if
 * missing, then read and written under their lock (PostgreSQL: the row lock of the upsert;
 * SQLite: the transaction holds the database), in key order, so replicas writing the same
 * bridge merge instead of overwriting each other and never deadlock.
 */
async function writeSeqs(
  tx: Queryable,
  entries: Array<{ tenantId: string; bridgeId: string; numbers: number[]; gone: Range[]; conn?: string; at: string }>,
): Promise<AckState[]> {
  entries.sort((a, b) => (a.tenantId + SEP + a.bridgeId < b.tenantId + SEP + b.bridgeId ? -1 : 1));
  // One statement makes the row if missing, locks it (an ON CONFLICT DO UPDATE holds the row
  // lock to the end of the transaction, as FOR UPDATE would) and returns what it holds. All are
  // issued before the first is awaited: pipelined on PostgreSQL, in key order.
  const read = await Promise.all(
    entries.map(async (e) =>
      (await tx.query(
        `INSERT INTO bridge_seqs (tenant_id, bridge_id, upto, ranges, updated_at) VALUES ($1, $2, 0, '[]', $3)
         ON CONFLICT (tenant_id, bridge_id) DO UPDATE SET updated_at = bridge_seqs.updated_at RETURNING upto, ranges, seen`,
        [e.tenantId, e.bridgeId, e.at],
      ))[0],
    ),
  );
  const states: AckState[] = [];
  const writes: Array<Promise<number>> = [];
  entries.forEach((e, k) => {
    const before: SeqState = { upto: Number(read[k]?.upto ?? 0), ranges: parseRanges(read[k]?.ranges) };
    const added = [...toRanges(e.numbers), ...e.gone];
    const after = added.length > 0 ? addRanges(before, added) : before;
    const seen = Math.max(Number(read[k]?.seen ?? 0), ...e.numbers, ...e.gone.map((r) => r[1]), after.upto);
    if (added.length > 0) writes.push(tx.run('UPDATE bridge_seqs SET upto = $3, ranges = $4, seen = $5, updated_at = $6 WHERE tenant_id = $1 AND bridge_id = $2', [e.tenantId, e.bridgeId, after.upto, JSON.stringify(after.ranges), seen, e.at]));
    states.push({ tenantId: e.tenantId, bridgeId: e.bridgeId, upto: after.upto, ranges: after.ranges, seen, ...(e.conn !== undefined ? { conn: e.conn } : {}) });
  });
  await Promise.all(writes);
  return states;
}

/**
 * A status that names its connection: ordered by connection, not by the
 * bridge's session counter or clock, which a restored database or a clock without a battery can
 * move back. An online always wins unless its connection is one the hub has seen replaced; an
 * offline counts unless its connection was replaced (a late will of an older connection). An
 * offline of a connection never heard of (its online was lost) is taken too, and remembered
 * as replaced; the connection held stays the one held.
 */
async function writeConnStatus(tx: Queryable, dialect: 'sqlite' | 'postgres', o: Extract<BatchOp, { op: 'status' }>): Promise<BatchOutcome> {
  const lock = dialect === 'postgres' ? ' FOR UPDATE' : '';
  await tx.run('INSERT INTO bridges (tenant_id, bridge_id, first_seen, last_seen) VALUES ($1, $2, $3, $3) ON CONFLICT (tenant_id, bridge_id) DO NOTHING', [o.tenantId, o.bridgeId, o.at]);
  const row = (await tx.query(`SELECT conn, old_conns FROM bridges WHERE tenant_id = $1 AND bridge_id = $2${lock}`, [o.tenantId, o.bridgeId]))[0] ?? {};
  const current = row.conn === null || row.conn === undefined ? null : String(row.conn);
  const old = parseStrings(row.old_conns);
  const conn = o.conn!;
  if (old.includes(conn)) return 'ignored';
  let nextConn = current;
  let nextOld = old;
  if (o.state === 'online') {
    nextConn = conn;
    if (current !== null && current !== conn) nextOld = [current, ...old];
  } else if (current !== conn) {
    nextOld = [conn, ...old];
  }
  await tx.run(
    `UPDATE bridges SET state = $3, session = $4, status_ts = $5, conn = $6, old_conns = $7,
       last_seen = CASE WHEN $8 > last_seen THEN $8 ELSE last_seen END
     WHERE tenant_id = $1 AND bridge_id = $2`,
    [o.tenantId, o.bridgeId, o.state, o.session, o.ts, nextConn, JSON.stringify(nextOld.slice(0, OLD_CONNS_KEPT)), o.at],
  );
  return 'stored';
}

function parseRanges(text: unknown): Range[] {
  try {
    const v = JSON.parse(String(text));
    return Array.isArray(v) ? (v.filter((r) => Array.isArray(r) && r.length === 2 && Number.isSafeInteger(r[0]) && Number.isSafeInteger(r[1])) as Range[]) : [];
  } catch {
    return [];
  }
}

function parseStrings(text: unknown): string[] {
  try {
    const v = JSON.parse(String(text ?? '[]'));
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

async function writeOther(tx: Queryable, o: BatchOp): Promise<BatchOutcome> {
  if (o.op === 'hello') {
    await tx.run(HELLO_SQL, [o.tenantId, o.bridgeId, o.version, JSON.stringify(o.interfaces), o.at]);
    return 'stored';
  }
  if (o.op === 'status') return (await tx.run(STATUS_SQL, [o.tenantId, o.bridgeId, o.state, o.session, o.ts, o.at])) > 0 ? 'stored' : 'ignored';
  throw new Error('unreachable');
}
