import type { DatabaseSync } from 'node:sqlite';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, type FieldError } from '../../lib/errors.ts';
import { senderKey } from './address.ts';
import { blockedBecause, sameSender, type Bucket, type Current, describeLimit, EMPTY_POLICY, type Expand, limitKey, matchEntry, type SenderPolicy, tokensNow } from './policy.ts';
import { type SenderRow, SenderStore } from './store.ts';
import type { PendingTakes, SenderScreen, SenderVerdict } from '../engine/deciders.ts';

// Per-sender limits and blocking (docs/senders.md). The pipeline asks verdict()
// while it decides (a preview asks the same, and takes nothing) and calls record() inside the
// message's transaction when it stores it: the counters and the buckets are written with the
// message, in its commit.

/** What the policy says of one message's sender; part of the pipeline's plan. */
export type { PendingTakes, SenderVerdict };
export const pendingKey = (address: string, key: string) => `${senderKey(address)}\n${key}`;


export interface SenderBooks {
  /** The addresses an @group or @contact stands for (groups first); null when unknown. */
  expand: Expand;
  /** Whether an @name exists, for validating a policy. */
  exists(name: string): boolean;
  /** Moves whenever a contact or group changes: expansions are cached until it does. */
  version(): number;
  /** Where the node an address names is now (a renumbered node; engine/node-identity.ts). */
  current?: Current;
}

export class SenderService implements SenderScreen {
  readonly store: SenderStore;
  readonly #clock: Clock;
  readonly #books: SenderBooks;
  #policy: SenderPolicy | undefined;
  /** @name -> its addresses, for the policy's names (kept, so a heard message costs no
   *  SELECT per entry). Cleared when the policy or any contact or group changes. */
  readonly #expansions = new Map<string, string[] | null>();
  #expansionsVersion = -1;
  readonly #expand: Expand;

  constructor(db: DatabaseSync, clock: Clock, books: SenderBooks) {
    this.store = new SenderStore(db);
    this.#clock = clock;
    this.#books = books;
    this.#expand = (ref) => {
      const version = this.#books.version();
      if (version !== this.#expansionsVersion) {
        this.#expansions.clear();
        this.#expansionsVersion = version;
      }
      if (this.#expansions.has(ref)) return this.#expansions.get(ref)!;
      const addresses = this.#books.expand(ref);
      this.#expansions.set(ref, addresses);
      return addresses;
    };
  }

  policy(): SenderPolicy {
    return (this.#policy ??= this.store.policy() ?? EMPTY_POLICY);
  }

  /** Drops the cached policy (after a configuration import's transaction, whichever way it ended). */
  forgetCache(): void {
    this.#policy = undefined;
    this.#expansions.clear();
  }

  setPolicy(policy: SenderPolicy): SenderPolicy {
    const errors: FieldError[] = [];
    const check = (list: readonly string[] | null, field: string) =>
      list?.forEach((e, i) => {
        if (e.startsWith('@') && !this.#books.exists(e.slice(1))) errors.push({ path: `body.${field}[${i}]`, message: `no object group or contact named '${e.slice(1)}'` });
      });
    check(policy.blocklist, 'blocklist');
    check(policy.allowlist, 'allowlist');
    if (errors.length > 0) throw badRequest(`invalid references: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
    this.store.setPolicy(policy, new Date(this.#clock.now()).toISOString());
    this.#policy = policy;
    this.#expansions.clear();
    return policy;
  }

  /** The lists of the policy that name "@name" (ASCII case ignored), for the books' in-use check. */
  referring(name: string): string[] {
    const policy = this.policy();
    const at = `@${name}`.toLowerCase();
    const names = (l: readonly string[] | null) => (l ?? []).some((e) => e.toLowerCase() === at);
    return [...(names(policy.blocklist) ? ['blocklist'] : []), ...(names(policy.allowlist) ? ['allowlist'] : [])];
  }

  /** Every @name the policy uses, without the @. */
  names(): string[] {
    const policy = this.policy();
    return [...new Set([...policy.blocklist, ...(policy.allowlist ?? [])].filter((e) => e.startsWith('@')).map((e) => e.slice(1)))];
  }

  /** Before the rules: why this sender's messages are not forwarded at all, or null. */
  blocked(address: string): string | null {
    const policy = this.policy();
    if (policy.blocklist.length === 0 && policy.allowlist === null) return null;
    return blockedBecause(policy, address, this.#expand, this.#books.current);
  }

  /** After the rules chose interfaces of `kinds`: the limits that apply and whether the sender
   *  has a token left in each. Reads only. */
  verdict(address: string, kinds: ReadonlySet<string>, nowMs: number, pending?: PendingTakes): SenderVerdict {
    const out: SenderVerdict = { address, blocked: null, over: null, takes: [], limits: [] };
    for (const limit of this.policy().limits) {
      if (!limit.kinds.some((k) => kinds.has(k))) continue;
      const key = limitKey(limit);
      const tokens = tokensNow(limit, pending?.get(pendingKey(address, key)) ?? this.store.bucket(address, key), nowMs);
      out.limits.push({ kinds: limit.kinds, per_hour: limit.per_hour, burst: limit.burst, tokens: Math.floor(tokens * 1000) / 1000 });
      if (tokens < 1 && out.over === null) {
        const waitS = Math.max(1, Math.ceil(((1 - tokens) * 3_600) / limit.per_hour - 1e-6));
        out.over = `sender ${address} is over its limit of ${describeLimit(limit)}; the next forward is allowed in ${waitS} s`;
      }
      out.takes.push({ key, kinds: limit.kinds, tokens });
    }
    return out;
  }

  /** What storing a forwarded part with this verdict does to its buckets, for `pending`. */
  took(pending: PendingTakes, v: SenderVerdict, nowMs: number): void {
    for (const t of v.takes) pending.set(pendingKey(v.address, t.key), { tokens: t.tokens - 1, at_ms: nowMs });
  }

  /** Inside the message's transaction: counts it, and takes a token from each limit one of
   *  whose kinds got a delivery (`queued`: the kinds of the deliveries inserted) when forwarded. */
  record(v: SenderVerdict, forwarded: boolean, nowMs: number, queued: ReadonlySet<string>): void {
    if (forwarded) for (const t of v.takes) if (t.kinds.some((k) => queued.has(k))) this.store.setBucket(v.address, t.key, { tokens: t.tokens - 1, at_ms: nowMs });
    this.store.record(v.address, { forwarded, limited: v.over !== null, blocked: v.blocked !== null }, new Date(nowMs).toISOString());
  }

  /** POST /api/senders/{address}/block: the address joins the blocklist. */
  block(address: string): SenderPolicy {
    const policy = this.policy();
    if (policy.blocklist.some((e) => sameSender(e, address))) return policy;
    return this.setPolicy({ ...policy, blocklist: [...policy.blocklist, address.trim()] });
  }

  /** POST /api/senders/{address}/unblock: its own blocklist entries go; 409 when it stays
   *  blocked through a group or the allowlist (the policy is left as it was). */
  unblock(address: string): SenderPolicy {
    const policy = this.policy();
    const next = { ...policy, blocklist: policy.blocklist.filter((e) => !sameSender(e, address)) };
    const still = blockedBecause(next, address, this.#expand, this.#books.current);
    if (still !== null) {
      const via = matchEntry(next.blocklist, address, this.#expand, this.#books.current);
      throw conflict('ERR_SENDER_STILL_BLOCKED', `${still}: ${via ? `remove it from ${via} or remove ${via} from the blocklist` : 'add it to the allowlist'} (PUT /api/senders/policy)`);
    }
    return next.blocklist.length === policy.blocklist.length ? policy : this.setPolicy(next);
  }

  /** POST /api/senders/{address}/reset: every limit of the sender starts full again. */
  reset(address: string): number {
    return this.store.resetBuckets(address);
  }

  view(row: SenderRow) {
    return { ...row, blocked_now: this.blocked(row.address) };
  }
}
