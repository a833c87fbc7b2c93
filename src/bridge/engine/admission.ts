import { newId } from '../../lib/ids.ts';
import { retryPolicyOf } from './backoff.ts';
import { precedenceName } from './precedence.ts';
import type { DeliveryStore } from './delivery-store.ts';
import { sizeOf } from './delivery-sql.ts';
import { NEVER_MS, type InterfaceRow, type MessageRow, type DeliveryRow } from './rows.ts';

// How a delivery is made and let into its interface's queue (docs/routing.md, "Delivery
// policy"): the pipeline makes one per destination, the fallback lists one per member they
// start, and both go through the same caps.

/** What every delivery of one message shares. */
export interface DeliveryTemplate {
  message: Pick<MessageRow, 'id' | 'from' | 'channel' | 'kind' | 'text' | 'payload'>;
  /** Rank 0 override ... 5 deferred. */
  precedence: number;
  /** How long the deliveries may wait; null: never expire (an SOS). Default: the interface's ttl_s. */
  ttlMs?: number | null;
  nowMs: number;
}

/** Attempts of a delivery that never expires and must not stop (an override without TTL). */
const PERSISTENT_ATTEMPTS = 1_000_000_000;

export function newDelivery(t: DeliveryTemplate, iface: Pick<InterfaceRow, 'id' | 'retry'>, to: string, extra: Partial<DeliveryRow> = {}): DeliveryRow {
  const policy = retryPolicyOf(iface.retry);
  const at = new Date(t.nowMs).toISOString();
  const ttlMs = t.ttlMs === undefined ? policy.ttl_s * 1000 : t.ttlMs;
  const never = ttlMs === null;
  const payload = t.message.text !== null ? null : t.message.payload;
  return {
    id: newId('dlv', t.nowMs),
    message_id: t.message.id,
    interface_id: iface.id,
    to,
    channel: t.message.channel,
    kind: t.message.kind,
    text: t.message.text,
    payload,
    from: t.message.from,
    state: 'pending',
    precedence: t.precedence,
    attempts: 0,
    // An SOS keeps trying until acknowledged or cancelled (docs/routing.md, "SOS").
    max_attempts: never && t.precedence === 0 ? PERSISTENT_ATTEMPTS : policy.max_attempts,
    next_attempt_ms: t.nowMs,
    front_ms: null,
    expires_ms: never ? NEVER_MS : t.nowMs + ttlMs,
    last_error: null,
    created_at: at,
    updated_at: at,
    finished_at: null,
    ...extra,
  };
}

/**
 * Lets `d` into its interface's queue within the caps (the interface's queue_max_deliveries
 * and queue_max_bytes): when it would not fit, the lowest-precedence, oldest waiting delivery
 * goes to the dead letters with the reason; override and flash are never evicted; when what is
 * left outranks the newcomer, the newcomer is refused. Runs inside the caller's transaction,
 * before `d` is inserted. Answers null when admitted, else why not.
 */
export function admit(store: DeliveryStore, d: DeliveryRow, iface: Pick<InterfaceRow, 'id' | 'name' | 'retry'>, nowMs: number): string | null {
  const policy = retryPolicyOf(iface.retry);
  const size = sizeOf(d);
  for (let guard = 0; guard < 10_000; guard++) {
    const queued = store.queued(iface.id);
    const overCount = queued.count + 1 > policy.queue_max_deliveries;
    const overBytes = queued.bytes + size > policy.queue_max_bytes;
    if (!overCount && !overBytes) return null;
    const cap = overCount ? `cap ${policy.queue_max_deliveries}` : `cap ${policy.queue_max_bytes} bytes`;
    const victim = store.evictionCandidate(iface.id);
    if (!victim || victim.precedence < d.precedence) {
      const why = victim ? `everything queued outranks ${precedenceName(d.precedence)}` : 'everything queued is override or flash';
      return `queue of '${iface.name}' full (${cap}): ${why}, so this delivery was refused`;
    }
    store.evict(victim.id, `evicted: queue full (${cap}) by message ${d.message_id}`, nowMs);
  }
  return `queue of '${iface.name}' full: nothing could be evicted`;
}
