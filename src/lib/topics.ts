import { z } from 'zod';

// The uplink wire format (docs/design.md section 8), shared by the hub's ingest and the bridge's
// publisher. Topics: fieldbridge/v1/<tenant>/<bridge_id>/<kind>. Payloads: UTF-8 JSON, QoS 1.
//  hello    retained  {version, interfaces: [...], ts}
//  status   retained  {state: 'online'|'offline', session, ts}; the last will is the offline
//                     form. session counts the bridge's boots; ts is when this connection was
//                     opened, the same in a connection's online, its will and its final offline.
//  message, delivery, telemetry, position: {event_id, ts, ...the record}; stored once per
//                     tenant and event_id, so a redelivery is harmless.
// Pure functions, no I/O: the ingest and the publisher do the talking.

export const TOPIC_PREFIX = 'fieldbridge/v1';
export const EVENT_KINDS = ['message', 'delivery', 'telemetry', 'position'] as const;
export const STATE_KINDS = ['hello', 'status'] as const;
export type UplinkEventKind = (typeof EVENT_KINDS)[number];
export type UplinkKind = UplinkEventKind | (typeof STATE_KINDS)[number];
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
  if (!(EVENT_KINDS as readonly string[]).includes(kind) && !(STATE_KINDS as readonly string[]).includes(kind)) return { ok: false, reason: 'unknown_kind' };
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
export const StatusPayload = z.object({
  state: z.enum(['online', 'offline']),
  session: z.number().int().min(0).max(2 ** 31 - 1),
  ts: Timestamp,
});
export const EventPayload = z.looseObject({
  event_id: z.string().min(1).max(128),
  ts: Timestamp,
});

export type Decoded =
  | { ok: true; kind: 'hello'; value: z.infer<typeof HelloPayload> }
  | { ok: true; kind: 'status'; value: z.infer<typeof StatusPayload> }
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
  const schema = kind === 'hello' ? HelloPayload : kind === 'status' ? StatusPayload : EventPayload;
  const result = schema.safeParse(json);
  if (!result.success) {
    return { ok: false, reason: 'bad_payload', detail: result.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`).join('; ') };
  }
  const value = { ...(result.data as Record<string, unknown>), ts: new Date((result.data as { ts: string }).ts).toISOString() };
  if (kind === 'hello') return { ok: true, kind, value: value as z.infer<typeof HelloPayload> };
  if (kind === 'status') return { ok: true, kind, value: value as z.infer<typeof StatusPayload> };
  return { ok: true, kind, value: value as z.infer<typeof EventPayload>, text };
}
