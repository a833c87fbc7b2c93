import type { DatabaseSync } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';
import { fromJson, toJson } from '../../lib/json.ts';
import { senderKey, senderKeys } from './address.ts';
import type { Bucket, SenderPolicy } from './policy.ts';
import { containing, Where } from '../../db/where.ts';

// SQL for the senders policy, the per-sender counters and token buckets (migration 12,
// docs/data-model.md). Addresses are stored in their canonical form (address.ts, senderKey).
// record() and take() run inside the pipeline's transaction for the message (group commit:
// no commit of their own).

export interface SenderRow {
  address: string;
  messages_in: number;
  forwards: number;
  limited: number;
  blocked: number;
  first_seen_at: string;
  last_seen_at: string;
}

export class SenderStore {
  readonly #db: StatementCache;
  constructor(db: DatabaseSync) {
    this.#db = new StatementCache(db);
  }

  policy(): SenderPolicy | null {
    const row = this.#db.prepare('SELECT policy FROM sender_policy WHERE id = 1').get() as { policy: string } | undefined;
    return row ? fromJson(row.policy, null) : null;
  }

  setPolicy(policy: SenderPolicy, at: string): void {
    this.#db.prepare('INSERT INTO sender_policy (id, policy, updated_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET policy = excluded.policy, updated_at = excluded.updated_at').run(toJson(policy), at);
  }

  /** One message from `address`: counted, with what became of it. */
  record(address: string, outcome: { forwarded: boolean; limited: boolean; blocked: boolean }, at: string): void {
    const f = outcome.forwarded ? 1 : 0;
    const l = outcome.limited ? 1 : 0;
    const b = outcome.blocked ? 1 : 0;
    this.#db
      .prepare(
        'INSERT INTO senders (address, messages_in, forwards, limited, blocked, first_seen_at, last_seen_at) VALUES (?, 1, ?, ?, ?, ?, ?) ' +
          'ON CONFLICT (address) DO UPDATE SET messages_in = messages_in + 1, forwards = forwards + excluded.forwards, limited = limited + excluded.limited, blocked = blocked + excluded.blocked, last_seen_at = excluded.last_seen_at',
      )
      .run(senderKey(address), f, l, b, at, at);
  }

  bucket(address: string, key: string): Bucket | undefined {
    return this.#db.prepare('SELECT tokens, at_ms FROM sender_buckets WHERE address = ? AND limit_key = ?').get(senderKey(address), key) as Bucket | undefined;
  }

  setBucket(address: string, key: string, bucket: Bucket): void {
    this.#db.prepare('INSERT INTO sender_buckets (address, limit_key, tokens, at_ms) VALUES (?, ?, ?, ?) ON CONFLICT (address, limit_key) DO UPDATE SET tokens = excluded.tokens, at_ms = excluded.at_ms')
      .run(senderKey(address), key, bucket.tokens, bucket.at_ms);
  }

  /** Every bucket of a sender goes (any spelling of it: a bare decimal is a node number or a
   *  short code): its limits start full again. */
  resetBuckets(address: string): number {
    let n = 0;
    for (const key of senderKeys(address)) n += Number(this.#db.prepare('DELETE FROM sender_buckets WHERE address = ?').run(key).changes);
    return n;
  }

  /** Retention: senders not heard since `lastSeenBefore` (ISO time; null keeps them all) and
   *  buckets last written before `bucketsBeforeMs`, which have refilled (RetentionWorker). */
  prune(lastSeenBefore: string | null, bucketsBeforeMs: number): { senders: number; buckets: number } {
    const senders = lastSeenBefore === null ? 0 : Number(this.#db.prepare('DELETE FROM senders WHERE last_seen_at < ?').run(lastSeenBefore).changes);
    const buckets = Number(this.#db.prepare('DELETE FROM sender_buckets WHERE at_ms < ?').run(bucketsBeforeMs).changes);
    return { senders, buckets };
  }

  /** A sender by any spelling of its address. */
  get(address: string): SenderRow | undefined {
    for (const key of senderKeys(address)) {
      const row = this.#db.prepare('SELECT * FROM senders WHERE address = ?').get(key) as SenderRow | undefined;
      if (row) return row;
    }
    return undefined;
  }

  /** By address, after `after` (keyset); `limit` rows at most. */
  list(after: string | undefined, q: string | undefined, limit: number): SenderRow[] {
    const where = new Where();
    where.add('address > ?', after);
    where.add("address LIKE ? ESCAPE '\\'", q === undefined ? undefined : containing(q.trim().toLowerCase()));
    return this.#db.prepare(`SELECT * FROM senders ${where.clause} ORDER BY address LIMIT ?`).all(...where.args, limit) as unknown as SenderRow[];
  }
}
