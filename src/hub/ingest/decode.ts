import { decodeUplinkPayload, type Decoded, EventPayload, MAX_PAYLOAD_BYTES, type UplinkKind } from '../../hubwire/topics.ts';

// The ingest's per-event decoding, on its hot path: the same checks as
// decodeUplinkPayload (src/hubwire/topics.ts, shared with the bridge) for an event that passes
// them, without its costs that are not checks: a copy of the payload before decoding it and
// a schema walk over every field of a loose object to check two. Anything the fast path does
// not accept goes through decodeUplinkPayload itself, so every rejection keeps its reason and
// detail, and hello and status always do.

// zod keeps a string format's pattern on its internals (zod 4: schema._zod.pattern); without
// it, the fast path is off and every payload takes the long way.
const TS_PATTERN: RegExp | undefined = (EventPayload.shape.ts as unknown as { _zod?: { pattern?: unknown } })._zod?.pattern instanceof RegExp
  ? ((EventPayload.shape.ts as unknown as { _zod: { pattern: RegExp } })._zod.pattern)
  : undefined;

/** payload: the bytes received, or the text of a signed one with its sig taken off (batcher.ts). */
export function decodeForIngest(kind: UplinkKind, received: Uint8Array | string): Decoded {
  const size = typeof received === 'string' ? Buffer.byteLength(received, 'utf8') : received.length;
  if (!TS_PATTERN || kind === 'hello' || kind === 'status' || kind === 'gone' || kind === 'ack' || size === 0 || size > MAX_PAYLOAD_BYTES) {
    return decodeUplinkPayload(kind, typeof received === 'string' ? Buffer.from(received, 'utf8') : received);
  }
  const text = typeof received === 'string' ? received : Buffer.isBuffer(received) ? received.toString('utf8') : Buffer.from(received).toString('utf8');
  // The slow path (every rejection keeps its reason and detail) wants bytes.
  const bytes = () => (typeof received === 'string' ? Buffer.from(received, 'utf8') : received);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return decodeUplinkPayload(kind, bytes());
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return decodeUplinkPayload(kind, bytes());
  const { event_id: id, ts, seq } = json as { event_id?: unknown; ts?: unknown; seq?: unknown };
  // EventPayload: event_id z.string().min(1).max(128), ts z.iso.datetime({ offset: true }).
  if (typeof id !== 'string' || id.length < 1 || id.length > 128 || typeof ts !== 'string' || !TS_PATTERN.test(ts)) return decodeUplinkPayload(kind, bytes());
  // EventPayload: seq optional, Seq = an integer 1 .. 2^53 - 1.
  if (seq !== undefined && !(Number.isSafeInteger(seq) && (seq as number) >= 1)) return decodeUplinkPayload(kind, bytes());
  // The object is ours (fresh from JSON.parse): normalising ts in place spares a copy. A ts
  // already in toISOString()'s form (what bridges send: ms and Z, checked by the pattern
  // above) would come back unchanged, so the Date round trip is skipped for it.
  if (!(ts.length === 24 && ts.charCodeAt(19) === 46 && ts.charCodeAt(23) === 90)) (json as { ts: string }).ts = new Date(ts).toISOString();
  return { ok: true, kind, value: json as { event_id: string; ts: string }, text };
}
