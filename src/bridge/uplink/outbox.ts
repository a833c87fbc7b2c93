import type { DatabaseSync } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';
import type { UplinkEventKind } from '../../hubwire/topics.ts';

// SQL for the uplink tables, nothing else (schema.ts).

/** What an enrollment exchange gave this bridge, kept in uplink_state. */
export interface StoredCredentials {
  /** SHA-256 (hex) of the token it was given for: a new token in the config means a new exchange. */
  token_sha256: string;
  tenant: string;
  bridge_id: string;
  /** The HMAC key, base64url. Never logged, never in a config export. */
  secret: string;
  enrolled_at: string;
}

/** Whom the rows in the outbox were queued for: the tenant and the broker's host. */
export interface QueuedFor {
  tenant: string;
  host: string;
}

/** Written when a new enrollment token first appears: the rows up to `through` were queued for
 *  `from`; the enrollment drops them when it names another tenant or broker. */
export interface Handover {
  token_sha256: string;
  through: number;
  from: QueuedFor | null;
}

export interface OutboxRow {
  seq: number;
  event_id: string;
  kind: UplinkEventKind;
  payload: string;
}

/** What a row costs beyond its payload (key, event id, kind, time, b-tree cell). */
export const ROW_OVERHEAD_BYTES = 64;
// Payload sizes are bytes everywhere (UTF-8, as the cap admits them: Buffer.byteLength):
// length(CAST(payload AS BLOB)) in SQL, not length(payload), which counts characters.

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
  /** Rows after a local seq, oldest first. */
  after(seq: number, limit: number): OutboxRow[] {
    return this.#db.prepare('SELECT seq, event_id, kind, payload FROM uplink_outbox WHERE seq > ? ORDER BY seq LIMIT ?').all(seq, limit) as unknown as OutboxRow[];
  }
  oldest(limit: number): OutboxRow[] {
    return this.after(0, limit);
  }
  /** Local seqs present in [lo, hi], the first `limit` of them. */
  present(lo: number, hi: number, limit: number): number[] {
    return (this.#db.prepare('SELECT seq FROM uplink_outbox WHERE seq BETWEEN ? AND ? ORDER BY seq LIMIT ?').all(lo, hi, limit) as Array<{ seq: number }>).map((r) => r.seq);
  }
  /** Deletes every row up to a local seq; returns rows and payload bytes removed. */
  deleteThrough(seq: number): { rows: number; bytes: number } {
    return this.deleteRange(1, seq);
  }
  /** Deletes [lo, hi]; returns rows and payload bytes removed. */
  deleteRange(lo: number, hi: number): { rows: number; bytes: number } {
    const removed = this.#db.prepare('DELETE FROM uplink_outbox WHERE seq BETWEEN ? AND ? RETURNING length(CAST(payload AS BLOB)) AS n').all(lo, hi) as Array<{ n: number }>;
    return { rows: removed.length, bytes: removed.reduce((sum, r) => sum + r.n + ROW_OVERHEAD_BYTES, 0) };
  }
  /**
   * The oldest telemetry and position rows after `afterSeq` (dropped first when the outbox
   * is full). Without an index on kind: the caller remembers where it stopped,
   * so each row is looked at once.
   */
  droppable(afterSeq: number, limit: number): Array<{ seq: number; n: number }> {
    return this.#db
      .prepare("SELECT seq, length(CAST(payload AS BLOB)) AS n FROM uplink_outbox WHERE seq > ? AND kind IN ('telemetry', 'position') ORDER BY seq LIMIT ?")
      .all(afterSeq, limit) as Array<{ seq: number; n: number }>;
  }
  deleteOne(seq: number): void {
    this.#db.prepare('DELETE FROM uplink_outbox WHERE seq = ?').run(seq);
  }
  count(): number {
    return (this.#db.prepare('SELECT count(*) AS n FROM uplink_outbox').get() as { n: number }).n;
  }
  /** Rows and bytes held (a scan of the table: at start and now and then, not per event). */
  size(): { rows: number; bytes: number } {
    const r = this.#db.prepare('SELECT count(*) AS rows, coalesce(sum(length(CAST(payload AS BLOB))), 0) AS bytes FROM uplink_outbox').get() as { rows: number; bytes: number };
    return { rows: r.rows, bytes: r.bytes + r.rows * ROW_OVERHEAD_BYTES };
  }
  /** created_at of the oldest row, or null when empty. */
  oldestCreatedAt(): string | null {
    return (this.#db.prepare('SELECT created_at FROM uplink_outbox ORDER BY seq LIMIT 1').get() as { created_at: string } | undefined)?.created_at ?? null;
  }
  /** The highest local seq ever given out (AUTOINCREMENT's memory), 0 when none. */
  lastAssigned(): number {
    const row = this.#db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'uplink_outbox'").get() as { seq: number } | undefined;
    return row?.seq ?? 0;
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
  /** wire seq = local seq + offset: 0 until a restored or new database moves it. */
  seqOffset(): number {
    const row = this.#db.prepare("SELECT value FROM uplink_state WHERE name = 'seq_offset'").get() as { value: string } | undefined;
    return row ? Number(row.value) : 0;
  }
  setSeqOffset(offset: number): void {
    this.#db.prepare("INSERT INTO uplink_state (name, value) VALUES ('seq_offset', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value").run(String(offset));
  }
  #stateJson<T>(name: string): T | null {
    const row = this.#db.prepare('SELECT value FROM uplink_state WHERE name = ?').get(name) as { value: string } | undefined;
    if (!row) return null;
    try {
      return JSON.parse(row.value) as T;
    } catch {
      return null;
    }
  }
  #setStateJson(name: string, value: unknown): void {
    this.#db.prepare('INSERT INTO uplink_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value').run(name, JSON.stringify(value));
  }
  queuedFor(): QueuedFor | null {
    return this.#stateJson<QueuedFor>('queued_for');
  }
  setQueuedFor(v: QueuedFor): void {
    this.#setStateJson('queued_for', v);
  }
  handover(): Handover | null {
    return this.#stateJson<Handover>('handover');
  }
  setHandover(v: Handover): void {
    this.#setStateJson('handover', v);
  }
  clearHandover(): void {
    this.#db.prepare("DELETE FROM uplink_state WHERE name = 'handover'").run();
  }
  credentials(): StoredCredentials | null {
    const row = this.#db.prepare("SELECT value FROM uplink_state WHERE name = 'credentials'").get() as { value: string } | undefined;
    if (!row) return null;
    try {
      const c = JSON.parse(row.value) as StoredCredentials;
      return typeof c.secret === 'string' && typeof c.tenant === 'string' && typeof c.bridge_id === 'string' && typeof c.token_sha256 === 'string' ? c : null;
    } catch {
      return null;
    }
  }
  setCredentials(c: StoredCredentials): void {
    this.#db.prepare("INSERT INTO uplink_state (name, value) VALUES ('credentials', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value").run(JSON.stringify(c));
  }
}
