import type { DatabaseSync } from 'node:sqlite';

export interface AuditEntry {
  id: number;
  at: string;
  key_id: string | null;
  method: string;
  path: string;
  status: number;
  request_id: string;
}

/** SQL for the audit log: one row per mutating API call. Never pruned by retention. */
export class AuditStore {
  readonly #db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.#db = db;
  }
  insert(e: Omit<AuditEntry, 'id'>): void {
    this.#db.prepare('INSERT INTO audit_log (at, key_id, method, path, status, request_id) VALUES (?, ?, ?, ?, ?, ?)').run(e.at, e.key_id, e.method, e.path, e.status, e.request_id);
  }
  /** Newest first, before an id (keyset). */
  list(limit: number, beforeId?: number): AuditEntry[] {
    return this.#db.prepare('SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?').all(beforeId ?? Number.MAX_SAFE_INTEGER, limit) as unknown as AuditEntry[];
  }
}
