import { z } from 'zod';
import { DRIVERS } from '../../bearers/drivers.ts';
import { senderKey, senderKeys } from './address.ts';

// The senders policy (docs/senders.md): who may have messages forwarded, and how
// often. Pure: the schema, and the verdicts for one sender given the policy, a resolver for
// @group / @contact names and the stored token buckets.
//
// Decisions (docs/senders.md says the same for operators):
// - It applies to messages heard on an interface (inbound), by their sender address as the
//   bearer wrote it. Messages sent through the API are the operator's own and are limited by
//   routing.rate_limit instead.
// - Addresses compare in one canonical form (address.ts): a Meshtastic node in any spelling
//   (`!beef`, `0xBEEF`, `!0000beef`, `48879`) is one sender, a phone number in any spelling
//   (`+49 151 …`, `0049151…`) is one; others compare ignoring ASCII case. An @name is every
//   address of that group or contact, each compared the same way.
// - A blocked sender's messages are stored with action drop and the reason; no rule is asked.
// - A limit counts forwarded messages (not deliveries) per sender, per limit: a message whose
//   deliveries would use an interface of one of the limit's kinds takes one token from the
//   sender's bucket for that limit. A message that finds a bucket empty is stored with action
//   store and the reason, and forwarded nowhere: never silently dropped.

/** The kinds that bill (DriverModule.usageUnit), as the example of a limit's kinds. */
const PAID_KINDS = DRIVERS.filter((d) => 'usageUnit' in d && d.usageUnit).map((d) => d.kind);
export const INTERFACE_KINDS_NOTE = `interface kinds, e.g. ${JSON.stringify(PAID_KINDS)} for the paid bearers`;

const Entry = z.string().trim().min(1, { error: 'entries must not be empty' }).max(128, { error: 'entries must be at most 128 characters' });

export const SenderLimit = z.strictObject({
  kinds: z.array(z.string().min(1).max(32), { error: `kinds must be a list of ${INTERFACE_KINDS_NOTE}` }).min(1, { error: 'kinds must name at least one interface kind' }).max(16)
    .describe(`The limit counts messages forwarded to interfaces of these kinds (${INTERFACE_KINDS_NOTE})`),
  per_hour: z.number({ error: 'per_hour must be a number' }).positive({ error: 'per_hour must be more than 0' }).max(1_000_000)
    .describe('Forwards per hour per sender, refilled evenly (5: one every 12 minutes)'),
  burst: z.number({ error: 'burst must be a whole number' }).int({ error: 'burst must be a whole number' }).min(1, { error: 'burst must be at least 1' }).max(1_000_000)
    .describe('Forwards a sender may make at once after a quiet spell'),
});
export type SenderLimit = z.infer<typeof SenderLimit>;

export const SenderPolicy = z.strictObject({
  limits: z.array(SenderLimit, { error: 'limits must be a list of {kinds, per_hour, burst}' }).max(16).default([]),
  blocklist: z.array(Entry, { error: 'blocklist must be a list of addresses or @names' }).max(1000).default([])
    .describe('Senders whose messages are never forwarded: node ids, phone numbers, LXMF addresses, @groups, @contacts'),
  allowlist: z.array(Entry, { error: 'allowlist must be a list of addresses or @names, or null' }).min(1, { error: 'allowlist must list at least one sender, or be null for everyone' }).max(1000).nullable().default(null)
    .describe('When set, only these senders may have messages forwarded (the blocklist still applies); null: everyone'),
}).describe('Who may have messages heard on an interface forwarded, and how often');
export type SenderPolicy = z.infer<typeof SenderPolicy>;

export const EMPTY_POLICY: SenderPolicy = { limits: [], blocklist: [], allowlist: null };

/** Expands @group / @contact to addresses; null for an unknown name. */
export type Expand = (reference: string) => string[] | null;
/** Where the node an address names is now (engine/node-identity.ts); null for a public key no
 *  node has. Without one, addresses are compared as written. */
export type Current = (address: string) => string | null;
const asWritten: Current = (a) => a;

/** The entry of `entries` the address matches (a literal, or an @name standing for it), or null.
 *  An entry naming a renumbered node's former id (or its public key) matches the node now. */
export function matchEntry(entries: readonly string[], address: string, expand: Expand, current: Current = asWritten): string | null {
  const now = (a: string) => current(a) ?? a;
  const wanted = senderKey(now(address));
  const is = (a: string) => senderKeys(now(a)).includes(wanted);
  for (const entry of entries) {
    if (entry.startsWith('@') ? (expand(entry) ?? []).some(is) : is(entry)) return entry;
  }
  return null;
}

/** Whether a literal entry stands for the address (in any spelling of either). */
export function sameSender(entry: string, address: string): boolean {
  if (entry.startsWith('@')) return false;
  const keys = senderKeys(address);
  return senderKeys(entry).some((k) => keys.includes(k));
}

/** Why the sender is blocked, or null. */
export function blockedBecause(policy: SenderPolicy, address: string, expand: Expand, current: Current = asWritten): string | null {
  const hit = matchEntry(policy.blocklist, address, expand, current);
  if (hit !== null) return !hit.startsWith('@') ? `sender ${address} is on the blocklist${(current(hit) ?? hit) === hit ? '' : ` (as ${hit}, the id it had before)`}` : `sender ${address} is on the blocklist (through ${hit})`;
  if (policy.allowlist !== null && matchEntry(policy.allowlist, address, expand, current) === null) return `sender ${address} is not on the allowlist`;
  return null;
}

/** The key of a limit's bucket: its kinds, sorted. */
export function limitKey(limit: SenderLimit): string {
  return [...new Set(limit.kinds)].sort().join(',');
}

export interface Bucket {
  tokens: number;
  at_ms: number;
}

/** Tokens in a bucket now: refilled at per_hour since it was last written, at most burst; a
 *  sender never limited before starts full. */
export function tokensNow(limit: SenderLimit, bucket: Bucket | undefined, nowMs: number): number {
  if (!bucket) return limit.burst;
  return Math.min(limit.burst, bucket.tokens + (Math.max(0, nowMs - bucket.at_ms) * limit.per_hour) / 3_600_000);
}

/** How long after its last write any bucket of this policy is full again (a deleted bucket
 *  starts full, so one older than this can go: retention). */
export function refillMs(policy: SenderPolicy): number {
  return Math.max(0, ...policy.limits.map((l) => (l.burst / l.per_hour) * 3_600_000));
}

export function describeLimit(limit: SenderLimit): string {
  return `${limit.per_hour} forwards per hour to ${limit.kinds.join(', ')} (burst ${limit.burst})`;
}
