import type { DatabaseSync } from 'node:sqlite';
import { type CommitRider, leaveRide, rideNextCommit, transaction, withoutBusyWait } from '../../db/sqlite.ts';
import { StatementCache } from '../../db/statement-cache.ts';
import { GROUP_COMMIT_MS } from '../engine/write-behind.ts';
import { silentLogger, type Logger } from '../../lib/log.ts';

export interface AuditEntry {
  id: number;
  at: string;
  key_id: string | null;
  method: string;
  path: string;
  status: number;
  request_id: string;
}

/** bridge.audit in the configuration (docs/config.md). */
export interface AuditLimits {
  /** Entries older than this many days are deleted by the daily AuditRetention; 0 = no age limit. */
  retention_days: number;
  /** At most this many entries are kept: the oldest go as new ones are written. */
  max_rows: number;
}

/** The defaults of bridge.audit (config/sections.ts), for a store built without configuration. */
export const DEFAULT_AUDIT_LIMITS: AuditLimits = { retention_days: 90, max_rows: 100_000 };

/** Most entries kept in memory waiting to be written: about 1 MB. */
export const MAX_QUEUED_AUDIT_ENTRIES = 10_000;

/** Longest path an entry keeps, marker included (a URL may be ~15 KB). */
export const AUDIT_PATH_MAX = 512;

/** The path as stored: at most AUDIT_PATH_MAX characters; a longer one is cut and ends with
 *  "...[truncated, N chars]" giving its full length. */
export function boundedPath(path: string): string {
  if (path.length <= AUDIT_PATH_MAX) return path;
  const marker = `...[truncated, ${path.length} chars]`;
  return path.slice(0, AUDIT_PATH_MAX - marker.length) + marker;
}

/**
 * SQL for the audit log: one row per mutating API call made with a valid key.
 * Entries are written when the answer has gone out, so they are queued and committed in
 * groups: with the next transaction on the connection (the next message stored, the
 * next API write, the delivery write-behind's own commit), or on their own GROUP_COMMIT_MS
 * after the first of them. A crash loses the entries not yet committed, at most that second's:
 * the old way lost the last turn's, and they always came after the answer. Reads commit the
 * queue first.
 * Bounded: each path is cut to AUDIT_PATH_MAX characters, and every commit deletes
 * the entries past limits().max_rows in the same transaction, so the table never holds more.
 * Ids only grow while rows remain (a rowid is one more than the largest: retention deletes the
 * oldest), so "older than the newest max_rows" is an id range: a seek, not a scan. Age is
 * pruned daily by AuditRetention (retention.ts).
 */
export class AuditStore {
  readonly #db: DatabaseSync;
  readonly #statements: StatementCache;
  readonly #queue: Array<Omit<AuditEntry, 'id'>> = [];
  #dropped = 0;
  #scheduled: { cancel(): void } | undefined;
  #failing = false;
  readonly #log: Logger;
  readonly #limits: () => AuditLimits;
  readonly #rider: CommitRider;

  constructor(db: DatabaseSync, log: Logger = silentLogger, limits: () => AuditLimits = () => DEFAULT_AUDIT_LIMITS) {
    this.#db = db;
    this.#statements = new StatementCache(db);
    this.#log = log;
    this.#limits = limits;
    // The entries of each ride: a group of ingests may carry them several times before its
    // COMMIT (db/transaction.ts, CommitRider).
    const aboard: Array<Array<Omit<AuditEntry, 'id'>>> = [];
    this.#rider = {
      ride: () => {
        this.#cancel();
        const entries = this.#queue.splice(0);
        aboard.push(entries);
        this.#write(entries);
      },
      committed: () => {
        aboard.shift();
        this.#written();
      },
      failed: (error) => this.#failed(aboard.pop() ?? [], error),
    };
  }

  insert(e: Omit<AuditEntry, 'id'>): void {
    // Bounded in memory too: while nothing can be written (a full disk),
    // entries past MAX_QUEUED_AUDIT_ENTRIES are counted, not kept; the count is logged when
    // dropping starts and again once writing works.
    if (this.#queue.length >= MAX_QUEUED_AUDIT_ENTRIES) {
      if (this.#dropped++ === 0) this.#log.error('audit_entries_dropped', { queued: this.#queue.length, action: `entries past ${MAX_QUEUED_AUDIT_ENTRIES} waiting to be written are dropped until the database takes writes again` });
      return;
    }
    this.#queue.push({ ...e, path: boundedPath(e.path) });
    if (!this.#failing) rideNextCommit(this.#db, this.#rider);
    this.#schedule(this.#failing ? 1000 : GROUP_COMMIT_MS);
  }

  #schedule(delayMs: number): void {
    if (this.#scheduled) return;
    if (delayMs === 0) {
      const h = setImmediate(() => this.flush());
      this.#scheduled = { cancel: () => clearImmediate(h) };
    } else {
      const h = setTimeout(() => this.flush(), delayMs);
      this.#scheduled = { cancel: () => clearTimeout(h) };
    }
  }

  #cancel(): void {
    this.#scheduled?.cancel();
    this.#scheduled = undefined;
  }

  /** Commits the queued entries now (inside another transaction: with it; not after the
   *  database closed). */
  flush(): void {
    this.#cancel();
    if (this.#queue.length === 0 || !this.#db.isOpen) {
      leaveRide(this.#db, this.#rider);
      return;
    }
    if (this.#db.isTransaction) {
      // Inside transaction() the entries go with its commit; otherwise they are tried again.
      if (!this.#failing) rideNextCommit(this.#db, this.#rider);
      this.#schedule(1000);
      return;
    }
    leaveRide(this.#db, this.#rider);
    const entries = this.#queue.splice(0);
    try {
      // Never waits for a lock another process holds: waiting froze the
      // event loop up to 5 s after every mutating call. The entries wait in memory instead
      // (bounded, see insert) and are tried again in a second.
      withoutBusyWait(this.#db, () => transaction(this.#db, () => this.#write(entries)));
    } catch (error) {
      this.#failed(entries, error);
      return;
    }
    this.#written();
  }

  #write(entries: Array<Omit<AuditEntry, 'id'>>): void {
    const ins = this.#statements.prepare('INSERT INTO audit_log (at, key_id, method, path, status, request_id) VALUES (?, ?, ?, ?, ?, ?)');
    for (const e of entries) ins.run(e.at, e.key_id, e.method, e.path, e.status, e.request_id);
    this.#deleteBeyond(this.#limits().max_rows);
  }

  #written(): void {
    this.#failing = false;
    if (this.#dropped > 0) {
      this.#log.warn('audit_entries_lost', { count: this.#dropped, why: 'they came while the database took no writes and more were waiting' });
      this.#dropped = 0;
    }
  }

  /** Locked by another process, or a full disk: keep them, in order, and try again in a second. */
  #failed(entries: Array<Omit<AuditEntry, 'id'>>, error: unknown): void {
    this.#queue.unshift(...entries);
    this.#failing = true;
    leaveRide(this.#db, this.#rider);
    this.#log.error('audit_write_failed', { error: (error as Error).message, action: 'kept in memory; retrying in 1 s' });
    this.#cancel();
    this.#schedule(1000);
  }

  /** Deletes all but the newest maxRows entries; returns how many went. */
  pruneToRows(maxRows: number): number {
    this.flush();
    return this.#deleteBeyond(maxRows);
  }

  /** Deletes entries written before the cut-off (ISO 8601, as `at` is stored); returns how many. */
  deleteOlderThan(cutoffIso: string): number {
    this.flush();
    return Number(this.#db.prepare('DELETE FROM audit_log WHERE at < ?').run(cutoffIso).changes);
  }

  #deleteBeyond(maxRows: number): number {
    return Number(this.#statements.prepare('DELETE FROM audit_log WHERE id <= (SELECT max(id) FROM audit_log) - ?').run(maxRows).changes);
  }

  /** Newest first, before an id (keyset). */
  list(limit: number, beforeId?: number): AuditEntry[] {
    this.flush();
    return this.#db.prepare('SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?').all(beforeId ?? Number.MAX_SAFE_INTEGER, limit) as unknown as AuditEntry[];
  }
}
