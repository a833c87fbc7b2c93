import { decode } from '@msgpack/msgpack';
import { concat } from '../../shared/codec/bytes.ts';
import { TRUNCATED_HASH_LENGTH } from './constants.ts';
import { type Failure, fail } from './errors.ts';
import { truncatedHash } from './identity.ts';
import { arrayHeader, readArrayHeader, skipObject } from './msgpack.ts';

// Requests and responses on a Reticulum link (docs/protocols/reticulum.md 12; RNS/Link.py
// request, handle_request, receive). A request is msgpack [time, path hash, data], sent in
// context REQUEST on the link; the answer is msgpack [request id, response] in context RESPONSE,
// or, when it does not fit one link packet, the same bytes as a resource flagged "is response"
// whose advertisement names the request id. Pure; decoders never throw.

/** The hash a request names its path by: the truncated hash of the path in UTF-8. */
export function requestPathHash(path: string): Uint8Array {
  return truncatedHash(new TextEncoder().encode(path));
}

/** The request plaintext: [time as float64 seconds, path hash (bin 16), data]. `data` is the
 *  already-packed msgpack of the request's data (nil is C0). */
export function encodeLinkRequest(path: string, packedData: Uint8Array, timeS: number): Uint8Array {
  const time = new Uint8Array(9);
  time[0] = 0xcb;
  new DataView(time.buffer).setFloat64(1, timeS);
  return concat(arrayHeader(3), time, Uint8Array.of(0xc4, TRUNCATED_HASH_LENGTH), requestPathHash(path), packedData);
}

/** The id of a request sent as one packet: the truncated hash of that packet (Packet.getTruncatedHash),
 *  that is the first 16 bytes of its full packet hash. */
export function requestIdOfPacket(packetHash: Uint8Array): Uint8Array {
  return packetHash.slice(0, TRUNCATED_HASH_LENGTH);
}

export interface LinkResponse {
  requestId: Uint8Array;
  /** The response value, decoded (bytes as Uint8Array, maps as Map with their own keys). */
  response: unknown;
}

export type LinkResponseResult = { ok: true; response: LinkResponse } | Failure;

/** Reads a response (one RESPONSE packet's plaintext, or a whole response resource): one msgpack
 *  array of two, a 16-byte request id and any value, and nothing after it. */
export function decodeLinkResponse(plaintext: Uint8Array): LinkResponseResult {
  const head = readArrayHeader(plaintext, 0);
  if (!head || head.count !== 2) return fail('ERR_RNS_LINK_RESPONSE', 'a response is a msgpack array of two: request id and response');
  if (skipObject(plaintext, 0) !== plaintext.length) return fail('ERR_RNS_LINK_RESPONSE', 'the response is not one whole msgpack array');
  let v: unknown;
  try {
    v = decode(plaintext, { useBigInt64: false, mapKeyConverter: (k) => (typeof k === 'string' || typeof k === 'number' ? k : k instanceof Uint8Array ? Buffer.from(k).toString('hex') : String(k)) });
  } catch (e) {
    return fail('ERR_RNS_LINK_RESPONSE', `the response does not decode: ${(e as Error).message}`);
  }
  const [id, response] = v as [unknown, unknown];
  if (!(id instanceof Uint8Array) || id.length !== TRUNCATED_HASH_LENGTH) return fail('ERR_RNS_LINK_RESPONSE', `the request id is ${TRUNCATED_HASH_LENGTH} bytes`);
  return { ok: true, response: { requestId: id.slice(), response } };
}
