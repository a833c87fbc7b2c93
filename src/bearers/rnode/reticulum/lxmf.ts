import { decode, encode } from '@msgpack/msgpack';
import { concat, equalBytes, toHex } from '../../shared/codec/bytes.ts';
import { ENCRYPTED_MDU, LXMF_DESTINATION_LENGTH, SIGNATURE_LENGTH } from './constants.ts';
import { lxmfDeliveryHash } from './destination.ts';
import { type Failure, fail } from './errors.ts';
import { fullHash, type Identity, type PublicIdentity, signMessage, verifySignature } from './identity.ts';
import { arrayHeader, mapHeader, readArrayHeader, readMapHeader, skipObject } from './msgpack.ts';

export { decodeLxmfAppData, encodeLxmfAppData, type LxmfPeerInfo, type LxmfPeerInfoResult } from './lxmf-announce.ts';

// LXMF messages (docs/protocols/reticulum.md 7; LXMF/LXMessage.py pack and unpack_from_bytes).
// A packed message is
//   destination hash (16) | source hash (16) | Ed25519 signature (64) | msgpack payload
// and the payload is [timestamp float64, title bin, content bin, fields map] with an optional
// fifth element, the stamp. The message hash (message id) is SHA-256 of destination + source +
// the four-element payload; the signature covers destination + source + that payload + the
// hash. Both hashes are 16-byte lxmf.delivery destination hashes.

export type LxmfFields = Map<number | string, unknown>;

export interface LxmfMessageInput {
  destinationHash: Uint8Array;
  /** The sender: our identity; the source hash is its lxmf.delivery hash. */
  source: Identity;
  /** Unix seconds, fractional allowed; always packed as float64 as Python packs a float. */
  timestamp: number;
  title?: Uint8Array | string;
  content: Uint8Array | string;
  /** Integer keys as LXMF uses them (LXMF_FIELD). Values go through @msgpack/msgpack. */
  fields?: LxmfFields;
  /** A stamp to append as the fifth element (we do not compute stamps). */
  stamp?: Uint8Array | null;
}

export interface PackedMessage {
  packed: Uint8Array;
  /** The message id: SHA-256 of destination + source + four-element payload. */
  hash: Uint8Array;
  signature: Uint8Array;
}

export interface LxmfMessage {
  destinationHash: Uint8Array;
  sourceHash: Uint8Array;
  signature: Uint8Array;
  timestamp: number;
  title: Uint8Array;
  content: Uint8Array;
  fields: LxmfFields;
  stamp: Uint8Array | null;
  hash: Uint8Array;
  /** What the signature covers: destination + source + four-element payload + hash. */
  signedPart: Uint8Array;
}

export type LxmfResult = { ok: true; message: LxmfMessage } | Failure;

/** Largest plaintext one opportunistic packet may carry: Reticulum's ENCRYPTED_MDU, 383. */
export const LXMF_PACKET_MAX_PLAINTEXT = ENCRYPTED_MDU;
/** LXMF's own limit (LXMessage.ENCRYPTED_PACKET_MAX_CONTENT = 383 + 8 - 112 + 16 = 295),
 *  counted as the packed payload length minus 16. Python LXMF sends opportunistically up to
 *  it, although above 287 the packet no longer fits the MTU in HEADER_2 form. */
export const LXMF_ENCRYPTED_PACKET_MAX_CONTENT = 295;
/** Largest content (empty title, no fields, no stamp) of one opportunistic packet that keeps
 *  within ENCRYPTED_MDU: 383 - 16 (source) - 64 (signature) - 1 (array header) - 9 (float64)
 *  - 2 (empty title) - 3 (bin 16 header, as content is over 255 bytes) - 1 (empty map) = 287.
 *  The packet is then 19 + 32 + 16 + 384 + 32 = 483 bytes, 499 in HEADER_2 form. */
export const LXMF_OPPORTUNISTIC_MAX_CONTENT = ENCRYPTED_MDU - 16 - SIGNATURE_LENGTH - 1 - 9 - 2 - 3 - 1;

/** What a 32-byte proof-of-work stamp adds to the payload: bin 8 header (2) + 32. With one,
 *  LXMF_OPPORTUNISTIC_MAX_CONTENT drops to 287 - 34 = 253. */
export const LXMF_STAMP_OVERHEAD = 34;

const HEAD = 2 * LXMF_DESTINATION_LENGTH + SIGNATURE_LENGTH;

/** Packs and signs a message as LXMessage.pack does. Throws a RangeError for a bad hash. */
export function packMessage(input: LxmfMessageInput): PackedMessage {
  if (input.destinationHash.length !== LXMF_DESTINATION_LENGTH) {
    throw new RangeError(`destinationHash must be ${LXMF_DESTINATION_LENGTH} bytes, got ${input.destinationHash.length}`);
  }
  const sourceHash = lxmfDeliveryHash(input.source);
  const timestamp = new Uint8Array(9);
  timestamp[0] = 0xcb;
  new DataView(timestamp.buffer).setFloat64(1, input.timestamp);
  const fields = input.fields ?? new Map();
  const fieldParts: Uint8Array[] = [mapHeader(fields.size)];
  for (const [k, v] of fields) fieldParts.push(encode(k), encode(v));
  const elements = concat(timestamp, encode(bytes(input.title ?? '')), encode(bytes(input.content)), ...fieldParts);
  const hashedPart = concat(input.destinationHash, sourceHash, arrayHeader(4), elements);
  const hash = fullHash(hashedPart);
  const signature = signMessage(input.source, concat(hashedPart, hash));
  const payload = input.stamp ? concat(arrayHeader(5), elements, encode(input.stamp)) : concat(arrayHeader(4), elements);
  return { packed: concat(input.destinationHash, sourceHash, signature, payload), hash, signature };
}

/** Reads a packed message (LXMessage.unpack_from_bytes) without checking the signature: that
 *  needs the sender's public key (verifyMessage). Refuses anything Python would fail on, and
 *  bytes after the payload. */
export function unpackMessage(packed: Uint8Array): LxmfResult {
  if (packed.length <= HEAD) return fail('ERR_LXMF_TRUNCATED', `an LXMF message is over ${HEAD} bytes (hashes, signature, payload), got ${packed.length}`);
  const payload = packed.subarray(HEAD);
  const array = readArrayHeader(payload, 0);
  if (!array) return fail('ERR_LXMF_PAYLOAD', 'the payload is not a msgpack array');
  if (array.count < 4) return fail('ERR_LXMF_PAYLOAD', `the payload array has 4 or 5 elements, got ${array.count}`);
  const starts: number[] = [];
  let at = array.next;
  for (let i = 0; i < array.count; i++) {
    starts.push(at);
    at = skipObject(payload, at);
    if (at < 0) return fail('ERR_LXMF_PAYLOAD', `payload element ${i} is malformed or cut short`);
  }
  starts.push(at);
  if (at !== payload.length) return fail('ERR_LXMF_PAYLOAD', `${payload.length - at} bytes follow the payload`);
  const part = (i: number) => payload.subarray(starts[i], starts[i + 1]);
  const timestamp = value(part(0));
  if (typeof timestamp !== 'number') return fail('ERR_LXMF_PAYLOAD', 'the timestamp (element 0) is not a number');
  const title = asBytes(value(part(1)));
  if (!title) return fail('ERR_LXMF_PAYLOAD', 'the title (element 1) is not bytes');
  const content = asBytes(value(part(2)));
  if (!content) return fail('ERR_LXMF_PAYLOAD', 'the content (element 2) is not bytes');
  const fields = readFields(part(3));
  if (!fields) return fail('ERR_LXMF_PAYLOAD', 'the fields (element 3) are not a map');
  let stamp: Uint8Array | null = null;
  if (array.count > 4) {
    // Python keeps element 4 as the stamp and ignores any further elements.
    const s = value(part(4));
    stamp = s instanceof Uint8Array ? s : null;
  }
  // The hash covers the four-element payload. Python re-packs it when a stamp is present;
  // the sender's own four elements behind a four-element header are those same bytes.
  const four = array.count === 4 ? payload : concat(arrayHeader(4), payload.subarray(starts[0], starts[4]));
  const hashedPart = concat(packed.subarray(0, HEAD - SIGNATURE_LENGTH), four);
  const hash = fullHash(hashedPart);
  return {
    ok: true,
    message: {
      destinationHash: packed.slice(0, LXMF_DESTINATION_LENGTH),
      sourceHash: packed.slice(LXMF_DESTINATION_LENGTH, 2 * LXMF_DESTINATION_LENGTH),
      signature: packed.slice(2 * LXMF_DESTINATION_LENGTH, HEAD),
      timestamp,
      title,
      content,
      fields,
      stamp,
      hash,
      signedPart: concat(hashedPart, hash),
    },
  };
}

/** Checks that `sender` owns the source hash (its lxmf.delivery hash) and made the signature. */
export function verifyMessage(message: LxmfMessage, sender: PublicIdentity): { ok: true } | Failure {
  if (!equalBytes(lxmfDeliveryHash(sender), message.sourceHash)) {
    return fail('ERR_LXMF_SOURCE', 'the source hash is not the lxmf.delivery hash of the given identity');
  }
  if (!verifySignature(sender, message.signedPart, message.signature)) return fail('ERR_LXMF_SIGNATURE', 'the message signature does not verify');
  return { ok: true };
}

/** The plaintext of an opportunistic packet: the packed message without its destination hash,
 *  which the packet header already carries (LXMessage.__as_packet). */
export function opportunisticPlaintext(packed: PackedMessage | Uint8Array): Uint8Array {
  const bytesOf = packed instanceof Uint8Array ? packed : packed.packed;
  return bytesOf.subarray(LXMF_DESTINATION_LENGTH);
}

/** Reads a decrypted opportunistic packet: the destination hash comes from the packet header
 *  and is put back in front (LXMRouter.delivery_packet). */
export function unpackOpportunistic(destinationHash: Uint8Array, plaintext: Uint8Array): LxmfResult {
  if (destinationHash.length !== LXMF_DESTINATION_LENGTH) {
    return fail('ERR_LXMF_TRUNCATED', `the destination hash is ${LXMF_DESTINATION_LENGTH} bytes, got ${destinationHash.length}`);
  }
  return unpackMessage(concat(destinationHash, plaintext));
}

function bytes(v: Uint8Array | string): Uint8Array {
  return typeof v === 'string' ? new TextEncoder().encode(v) : v;
}

function asBytes(v: unknown): Uint8Array | null {
  if (v instanceof Uint8Array) return v.slice(); // decode() returns views into the input
  if (typeof v === 'string') return new TextEncoder().encode(v); // tolerated: Python would keep a str as is
  return null;
}

const UNDECODABLE = Symbol('undecodable');

function value(slice: Uint8Array): unknown {
  try {
    // Keys of nested maps that are neither strings nor numbers become hex (or their text):
    // @msgpack/msgpack objects only hold string keys.
    return decode(slice, { mapKeyConverter: mapKey });
  } catch {
    return UNDECODABLE;
  }
}

function mapKey(k: unknown): string | number {
  if (typeof k === 'string' || typeof k === 'number') return k;
  return k instanceof Uint8Array ? toHex(k) : String(k);
}

function readFields(slice: Uint8Array): LxmfFields | null {
  if (slice.length === 1 && slice[0] === 0xc0) return new Map(); // nil: Python's set_fields(None)
  const header = readMapHeader(slice, 0);
  if (!header) return null;
  const fields: LxmfFields = new Map();
  let at = header.next;
  for (let i = 0; i < header.count; i++) {
    const keyEnd = skipObject(slice, at);
    const valueEnd = keyEnd < 0 ? -1 : skipObject(slice, keyEnd);
    if (valueEnd < 0) return null;
    const k = value(slice.subarray(at, keyEnd));
    const v = value(slice.subarray(keyEnd, valueEnd));
    if (k === UNDECODABLE || v === UNDECODABLE) return null;
    fields.set(mapKey(k), v);
    at = valueEnd;
  }
  return fields;
}
