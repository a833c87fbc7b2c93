import type { Logger } from '../../../lib/log.ts';
import type { BearerEvents } from '../../bearer.ts';
import { toHex, utf8OrNull } from '../../shared/codec/bytes.ts';
import { type LxmfFields, type LxmfMessage, verifyMessage } from '../reticulum/lxmf.ts';
import type { PeerBook } from './peers.ts';

// An LXMF message that reached us, however it came (one packet, a link packet, a resource):
// checked against its sender's key when we know it, stored once, and proven only once it is on
// disk (docs/reticulum.md, "What is checked on the way in").

export interface InboundContext {
  interfaceName: string;
  log: Logger;
  events: BearerEvents;
  peers: PeerBook;
  addressHex: string;
  counters: { bad_signatures: number; messages_unverified: number; messages_in: number };
}

export interface Arrival {
  hops: number;
  meta: Record<string, unknown>;
  /** 'direct' (over a link), 'resource', or 'propagated' (fetched from a propagation node);
   *  null for one opportunistic packet. */
  method: 'direct' | 'resource' | 'propagated' | null;
  /** Sends the proof that tells the sender to stop repeating. */
  prove(): void;
}

/** Checks and stores a message; proves it once stored. A message whose signature does not
 *  verify with its sender's known key is dropped and not proven, so an honest sender retries.
 *  Resolves with what became of it: stored (now or before), refused for its signature, or not
 *  stored (the database did not take it). */
export function acceptMessage(ctx: InboundContext, message: LxmfMessage, arrival: Arrival): Promise<'stored' | 'bad_signature' | 'not_stored'> {
  const from = toHex(message.sourceHash);
  const sender = ctx.peers.get(from);
  let signature: 'valid' | 'unverified';
  if (sender) {
    if (!verifyMessage(message, sender.identity).ok) {
      ctx.counters.bad_signatures++;
      ctx.log.warn('lxmf.bad_signature', { interface: ctx.interfaceName, from });
      return Promise.resolve('bad_signature');
    }
    signature = 'valid';
  } else {
    ctx.counters.messages_unverified++;
    signature = 'unverified';
  }
  const text = utf8OrNull(message.content);
  const title = utf8OrNull(message.title);
  const stored = ctx.events.receive({
    from,
    to: ctx.addressHex,
    channel: null,
    kind: text === null ? 'data' : 'text',
    text,
    payload: text === null ? message.content : null,
    meta: {
      ...arrival.meta, network: 'lxmf', signature, hops: arrival.hops, lxmf_hash: toHex(message.hash),
      ...(arrival.method ? { lxmf_method: arrival.method } : {}),
      ...(validTime(message.timestamp) ? { sent_at: new Date(message.timestamp * 1000).toISOString() } : {}),
      ...(title ? { title } : {}), ...(message.fields.size > 0 ? { fields: fieldsForMeta(message.fields) } : {}),
    },
    // The sender repeats a message until our proof reaches it: each copy is one message.
    dedupeKey: `lxmf:${toHex(message.hash)}`,
  });
  // The proof goes out once the message is on disk (the bridge may answer after its group's
  // commit: BearerEvents.receive).
  const answered = (ok: boolean | void): 'stored' | 'not_stored' => {
    if (ok === false) return 'not_stored'; // no proof, so the sender tries again
    ctx.counters.messages_in++;
    arrival.prove();
    return 'stored';
  };
  if (typeof stored === 'object') return Promise.resolve(stored).then(answered);
  return Promise.resolve(answered(stored));
}

/** A sender's timestamp (Unix seconds) that a Date can hold. */
const validTime = (seconds: number) => Number.isFinite(seconds) && Math.abs(seconds * 1000) <= 8.64e15;

/** LXMF fields (a msgpack map with integer keys) as JSON for the message's meta: bytes as hex. */
function fieldsForMeta(fields: LxmfFields): Record<string, unknown> {
  const json = (v: unknown): unknown => {
    if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
    if (Array.isArray(v)) return v.map(json);
    if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), json(x)]));
    if (typeof v === 'bigint') return v.toString();
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, json(x)]));
    return v;
  };
  return json(fields) as Record<string, unknown>;
}
