import type { DatabaseSync } from 'node:sqlite';
import { transaction } from '../../db/sqlite.ts';
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

/**
 * SQL for the audit log: one row per mutating API call. Never pruned by retention.
 * Entries are written when the answer has gone out, so they are queued and committed
 * together once per turn of the event loop: under load that saves a commit per request,
 * and it loses nothing the old way would have kept (a crash after the answer lost the entry
 * then too). Reads commit the queue first.
 */
export class AuditStore {
  readonly #db: DatabaseSync;
  readonly #queue: Array<Omit<AuditEntry, 'id'>> = [];
  #scheduled: { cancel(): void } | undefined;
  readonly #log: Logger;

  constructor(db: DatabaseSync, log: Logger = silentLogger) {
    this.#db = db;
    this.#log = log;
  }

  insert(e: Omit<AuditEntry, 'id'>): void {
    this.#queue.push(e);
    this.#schedule(0);
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

  /** Commits the queued entries (not inside another transaction; not after the database closed). */
  flush(): void {
    this.#scheduled?.cancel();
    this.#scheduled = undefined;
    if (this.#queue.length === 0 || !this.#db.isOpen) return;
    if (this.#db.isTransaction) {
      this.#schedule(0);
      return;
    }
    const entries = this.#queue.splice(0);
    try {
      transaction(this.#db, () => {
        const ins = this.#db.prepare('INSERT INTO audit_log (at, key_id, method, path, status, request_id) VALUES (?, ?, ?, ?, ?, ?)');
        for (const e of entries) ins.run(e.at, e.key_id, e.method, e.path, e.status, e.request_id);
      });
    } catch (error) {
      // Busy past 5 s: keep them, in order, and try again in a second.
      this.#queue.unshift(...entries);
      this.#log.error('audit_write_failed', { error: (error as Error).message, action: 'kept in memory; retrying in 1 s' });
      this.#schedule(1000);
    }
  }

  /** Newest first, before an id (keyset). */
  list(limit: number, beforeId?: number): AuditEntry[] {
    this.flush();
    return this.#db.prepare('SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?').all(beforeId ?? Number.MAX_SAFE_INTEGER, limit) as unknown as AuditEntry[];
  }
}
