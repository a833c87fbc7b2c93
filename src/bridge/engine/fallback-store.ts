import type { DatabaseSync } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';
import { fromJson, toJson } from '../../lib/json.ts';
import type { FallbackStrategy, FallbackState, FallbackMemberRow, TraceEntry, FallbackRow } from './rows.ts';

// SQL for fallback lists (the fallbacks table; docs/routing.md, "Fallback lists").





interface Raw extends Omit<FallbackRow, 'keep_trying' | 'members' | 'trace'> {
  keep_trying: number;
  members: string;
  trace: string;
}

const decode = (r: Raw): FallbackRow => ({ ...r, keep_trying: r.keep_trying === 1, members: fromJson(r.members, []), trace: fromJson(r.trace, []) });

export class FallbackStore {
  readonly #statements: StatementCache;
  constructor(db: DatabaseSync) {
    this.#statements = new StatementCache(db);
  }
  insert(f: FallbackRow): void {
    this.#statements
      .prepare(
        `INSERT INTO fallbacks (id, message_id, strategy, keep_trying, members, position, deadline_ms, state, precedence, ttl_ms, trace, outcome, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(f.id, f.message_id, f.strategy, f.keep_trying ? 1 : 0, toJson(f.members), f.position, f.deadline_ms, f.state, f.precedence, f.ttl_ms, toJson(f.trace), f.outcome, f.created_at, f.updated_at);
  }
  get(id: string): FallbackRow | undefined {
    const r = this.#statements.prepare('SELECT * FROM fallbacks WHERE id = ?').get(id) as unknown as Raw | undefined;
    return r && decode(r);
  }
  byMessage(messageId: string): FallbackRow[] {
    return (this.#statements.prepare('SELECT * FROM fallbacks WHERE message_id = ? ORDER BY id').all(messageId) as unknown as Raw[]).map(decode);
  }
  active(): FallbackRow[] {
    return (this.#statements.prepare("SELECT * FROM fallbacks WHERE state = 'active' ORDER BY id").all() as unknown as Raw[]).map(decode);
  }
  /** Active lists whose current member's deadline has passed. */
  due(nowMs: number): FallbackRow[] {
    return (this.#statements.prepare("SELECT * FROM fallbacks WHERE state = 'active' AND deadline_ms IS NOT NULL AND deadline_ms <= ? ORDER BY deadline_ms").all(nowMs) as unknown as Raw[]).map(decode);
  }
  earliestDeadline(): number | undefined {
    const r = this.#statements.prepare("SELECT min(deadline_ms) AS t FROM fallbacks WHERE state = 'active' AND deadline_ms IS NOT NULL").get() as { t: number | null };
    return r.t ?? undefined;
  }
  /** Writes a list's new state only if nobody moved it since `seen` was read (its position and
   *  state): a member is never started twice. Answers whether it wrote. */
  update(next: FallbackRow, seen: Pick<FallbackRow, 'position' | 'state'>): boolean {
    const r = this.#statements
      .prepare('UPDATE fallbacks SET position = ?, deadline_ms = ?, state = ?, trace = ?, outcome = ?, updated_at = ? WHERE id = ? AND position = ? AND state = ?')
      .run(next.position, next.deadline_ms, next.state, toJson(next.trace), next.outcome, next.updated_at, next.id, seen.position, seen.state);
    return Number(r.changes) > 0;
  }
}
