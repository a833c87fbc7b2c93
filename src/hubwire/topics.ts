import { z } from 'zod';

// The uplink wire format (docs/design.md section 8), shared by the hub's ingest and the bridge's
// publisher. Topics: fieldbridge/v1/<tenant>/<bridge_id>/<kind>. Payloads: UTF-8 JSON, QoS 1.
//  hello    retained  {version, interfaces: [...], ts}
//  status   retained  {state: 'online'|'offline', session, ts}; the last will is the offline
//                     form. session counts the bridge's boots; ts is when this connection was
//                     opened, the same in a connection's online, its will and its final offline.
//  message, delivery, telemetry, position: {seq, event_id, ts, ...the record}; stored once per
//                     tenant and event_id, so a redelivery is harmless. seq: the bridge's sequence
//                     number (absent from bridges older than sequence numbers).
//  gone     bridge -> hub, not retained  {ranges: [[lo, hi], ...], ts}: sequence numbers the hub
//                     asked for that the bridge no longer holds (dropped by its outbox cap).
//  ack      hub -> bridge, not retained  {upto, high, missing: [[lo, hi], ...], seen, conn?, ts}:
//                     every number <= upto, and every one in (upto, high] outside missing, is
//                     stored; seen: the highest number the hub ever heard from the bridge.
// Status also carries conn: a random id per connection, the same in the connection's online,
// its will and its final offline.
// Pure functions, no I/O: the ingest and the publisher do the talking. Like everything in
// src/hubwire/, both ends import this and it imports neither of them.

export const TOPIC_PREFIX = 'fieldbridge/v1';
export const EVENT_KINDS = ['message', 'delivery', 'telemetry', 'position'] as const;
export const STATE_KINDS = ['hello', 'status'] as const;
/** Bridge -> hub control messages. */
export const CONTROL_KINDS = ['gone'] as const;
/** Hub -> bridge: the acknowledgements. The hub hears its own (and other replicas') through its
 *  wildcard subscription and skips them by topic, before decoding (batcher.ts). */
export const ACK_KIND = 'ack';
export type UplinkEventKind = (typeof EVENT_KINDS)[number];
export type UplinkKind = UplinkEventKind | (typeof STATE_KINDS)[number] | (typeof CONTROL_KINDS)[number] | typeof ACK_KIND;
/** Tenant and bridge ids: one topic level without MQTT wildcards or odd characters. */
export const TOPIC_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Payloads past this size are refused (counted, logged); a bridge record is far smaller. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

export function uplinkTopic(tenant: string, bridgeId: string, kind: UplinkKind): string {
  return `${TOPIC_PREFIX}/${tenant}/${bridgeId}/${kind}`;
}

/** The hub's subscription: every tenant, bridge and kind; shared across replicas if asked. */
export function ingestSubscription(shared: boolean): string {
  return `${shared ? '$share/hub/' : ''}${TOPIC_PREFIX}/+/+/#`;
}

export type TopicParse = { ok: true; tenant: string; bridgeId: string; kind: UplinkKind } | { ok: false; reason: 'bad_topic' | 'unknown_kind' };

export function parseUplinkTopic(topic: string): TopicParse {
  const parts = topic.split('/');
  if (parts.length !== 5 || `${parts[0]}/${parts[1]}` !== TOPIC_PREFIX) return { ok: false, reason: 'bad_topic' };
  const [, , tenant, bridgeId, kind] = parts;
  if (!TOPIC_SEGMENT.test(tenant) || !TOPIC_SEGMENT.test(bridgeId)) return { ok: false, reason: 'bad_topic' };
  if (!(EVENT_KINDS as readonly string[]).includes(kind) && !(STATE_KINDS as readonly string[]).includes(kind) && !(CONTROL_KINDS as readonly string[]).includes(kind) && kind !== ACK_KIND) {
    return { ok: false, reason: 'unknown_kind' };
  }
  return { ok: true, tenant, bridgeId, kind: kind as UplinkKind };
}

// Timestamps are compared as text in the store, so every one is normalised to
// toISOString()'s form (milliseconds, Z) on the way in.
const Timestamp = z.iso.datetime({ offset: true });

export const HelloPayload = z.object({
  version: z.string().min(1).max(100),
  interfaces: z.array(z.unknown()).max(256),
  ts: Timestamp,
});
/** A connection's random id: what orders statuses, not the bridge's counters. */
export const ConnId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);
export const StatusPayload = z.object({
  state: z.enum(['online', 'offline']),
  session: z.number().int().min(0).max(2 ** 31 - 1),
  ts: Timestamp,
  conn: ConnId.optional(),
});
/** A bridge's sequence numbers: 1 up, below 2^53 (a JSON number stays exact). */
export const Seq = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
export const EventPayload = z.looseObject({
  event_id: z.string().min(1).max(128),
  ts: Timestamp,
  seq: Seq.optional(),
});
/** Inclusive ranges of sequence numbers in one message, at most MAX_RANGES of them. */
export const MAX_RANGES = 64;
/** Stored ranges the hub keeps per bridge (an ack names the first MAX_RANGES gaps). */
export const MAX_TRACKED_RANGES = 1024;
const Ranges = z.array(z.tuple([Seq, Seq]).refine(([lo, hi]) => lo <= hi, 'lo must not exceed hi')).max(MAX_RANGES);
export const GonePayload = z.object({ ranges: Ranges, ts: Timestamp });
export const AckPayload = z
  .object({
    upto: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    high: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    missing: Ranges,
    /** The highest number the hub has ever heard from this bridge (where a restored one continues). */
    seen: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    conn: ConnId.optional(),
    ts: Timestamp,
  })
  // What the bridge's arithmetic (bridge/uplink/sequence.ts storedLocal) relies on: a gap list
  // out of order or outside (upto, high] would read as numbers stored that are not.
  .refine((a) => ackShapeProblem(a) === null, { message: 'upto <= high, and missing sorted, disjoint and inside (upto, high]' });
export type Range = [number, number];
export type AckMessage = z.infer<typeof AckPayload>;

/** Why an ack's numbers do not hold together, or null. */
export function ackShapeProblem(a: { upto: number; high: number; missing: Range[] }): string | null {
  if (a.upto > a.high) return 'upto above high';
  let after = a.upto;
  for (const [lo, hi] of a.missing) {
    if (lo <= after) return 'missing not sorted, overlapping, or at or below upto';
    if (hi > a.high) return 'missing above high';
    after = hi;
  }
  return null;
}

/** What the bridge adds in front of a stored payload when it publishes it: `{"seq":N,` with N
 *  at most 16 digits (below 2^53). An event whose stored text would pass MAX_PAYLOAD_BYTES with
 *  it is refused at enqueue: the hub would refuse it. */
export const SEQ_PREFIX_MAX_BYTES = '{"seq":9007199254740991,'.length - 1;

/**
 * The sequence number at the start of an event payload as the bridge writes it (`{"seq":N,`
 * first), read from the first bytes only: the hub records the number of an event it refuses
 * (too large, not JSON, a bad field) as done, so the bridge is not asked for it forever.
 * null when the payload does not start so, or N is no valid sequence number.
 */
export function leadingSeq(payload: Uint8Array): number | null {
  const head = Buffer.from(payload.buffer, payload.byteOffset, Math.min(payload.length, 32)).toString('latin1');
  const m = /^\{"seq":([1-9][0-9]{0,15}),/.exec(head);
  if (!m) return null;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? n : null;
}

// Sets of sequence numbers: every number up to `upto`, and every number in `ranges`
// (sorted, disjoint, not touching, all above upto + 1). The hub keeps what it stored this way
// (its gaps are what it asks for); the bridge keeps what it was told is stored.
export interface SeqState {
  upto: number;
  ranges: Range[];
}

/** Sorted distinct numbers -> inclusive ranges. */
export function toRanges(numbers: Iterable<number>): Range[] {
  const sorted = [...numbers].sort((a, b) => a - b);
  const out: Range[] = [];
  for (const n of sorted) {
    const last = out[out.length - 1];
    if (last && n <= last[1] + 1) last[1] = Math.max(last[1], n);
    else out.push([n, n]);
  }
  return out;
}

/**
 * Adds stored (or gone) ranges. At most `keep` ranges are kept above upto: past that the
 * highest are forgotten, which only means the hub asks for them again (and the bridge sends
 * them again, stored once by event_id); it never claims a number it has not seen.
 */
export function addRanges(state: SeqState, add: Range[], keep = MAX_TRACKED_RANGES): SeqState {
  let upto = state.upto;
  const all = [...state.ranges, ...add.filter((r) => r[1] > upto).map((r): Range => [Math.max(r[0], upto + 1), r[1]])].sort((a, b) => a[0] - b[0]);
  const merged: Range[] = [];
  for (const [lo, hi] of all) {
    const last = merged[merged.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else merged.push([lo, hi]);
  }
  while (merged.length > 0 && merged[0][0] <= upto + 1) upto = Math.max(upto, merged.shift()![1]);
  return { upto, ranges: merged.slice(0, keep) };
}

/** The highest number known stored. */
export function highOf(state: SeqState): number {
  return state.ranges.length > 0 ? state.ranges[state.ranges.length - 1][1] : state.upto;
}

/** The gaps the hub asks for: between upto and each stored range (at most MAX_RANGES). */
export function missingOf(state: SeqState): Range[] {
  const out: Range[] = [];
  let next = state.upto + 1;
  for (const [lo, hi] of state.ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  return out;
}

/**
 * What an ack says of a state: upto, the first MAX_RANGES gaps, and high lowered to just below
 * the first gap left out, so that everything in (upto, high] outside `missing` is stored.
 */
export function ackView(state: SeqState): { upto: number; high: number; missing: Range[] } {
  const gaps = missingOf(state);
  if (gaps.length <= MAX_RANGES) return { upto: state.upto, high: highOf(state), missing: gaps };
  return { upto: state.upto, high: gaps[MAX_RANGES][0] - 1, missing: gaps.slice(0, MAX_RANGES) };
}

/** True when an acknowledgement says the number is stored (docs/hub.md, "Acknowledgements"). */
export function ackCovers(ack: { upto: number; high: number; missing: Range[] }, n: number): boolean {
  if (n <= ack.upto) return true;
  if (n > ack.high) return false;
  for (const [lo, hi] of ack.missing) if (n >= lo && n <= hi) return false;
  return true;
}

export type Decoded =
  | { ok: true; kind: 'hello'; value: z.infer<typeof HelloPayload> }
  | { ok: true; kind: 'status'; value: z.infer<typeof StatusPayload> }
  | { ok: true; kind: 'gone'; value: z.infer<typeof GonePayload> }
  | { ok: true; kind: 'ack'; value: z.infer<typeof AckPayload> }
  | { ok: true; kind: UplinkEventKind; value: z.infer<typeof EventPayload>; text: string }
  | { ok: false; reason: 'empty' | 'too_large' | 'bad_json' | 'bad_payload'; detail?: string };

/** Bytes -> a checked payload, or a counted reason; never throws. */
export function decodeUplinkPayload(kind: UplinkKind, payload: Uint8Array): Decoded {
  // A zero-length retained message is how a retained topic is cleared; not an error.
  if (payload.length === 0) return { ok: false, reason: 'empty' };
  if (payload.length > MAX_PAYLOAD_BYTES) return { ok: false, reason: 'too_large' };
  let json: unknown;
  const text = Buffer.from(payload).toString('utf8');
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'bad_json' };
  }
  const schema = kind === 'hello' ? HelloPayload : kind === 'status' ? StatusPayload : kind === 'gone' ? GonePayload : kind === 'ack' ? AckPayload : EventPayload;
  const result = schema.safeParse(json);
  if (!result.success) {
    return { ok: false, reason: 'bad_payload', detail: result.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`).join('; ') };
  }
  const value = { ...(result.data as Record<string, unknown>), ts: new Date((result.data as { ts: string }).ts).toISOString() };
  if (kind === 'hello') return { ok: true, kind, value: value as z.infer<typeof HelloPayload> };
  if (kind === 'status') return { ok: true, kind, value: value as z.infer<typeof StatusPayload> };
  if (kind === 'gone') return { ok: true, kind, value: value as z.infer<typeof GonePayload> };
  if (kind === 'ack') return { ok: true, kind, value: value as z.infer<typeof AckPayload> };
  return { ok: true, kind, value: value as z.infer<typeof EventPayload>, text };
}
