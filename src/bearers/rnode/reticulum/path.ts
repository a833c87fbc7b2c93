import { randomBytes } from 'node:crypto';
import { DESTINATION_TYPE, PACKET_TYPE, TRUNCATED_HASH_LENGTH } from './constants.ts';
import { concat, equalBytes, toHex } from '../../shared/codec/bytes.ts';
import { type Failure, fail } from './errors.ts';
import { truncatedHash } from './identity.ts';
import { nameHash } from './destination.ts';
import { encodePacket, type Packet } from './packet.ts';

// Path requests (docs/protocols/reticulum.md 9; RNS/Transport.py request_path,
// path_request_handler, path_request). A node that wants to reach a destination whose announce
// it has not heard sends a DATA packet to the PLAIN destination "rnstransport.path.request";
// the data is the destination hash it wants, optionally the requesting transport instance's
// identity hash, then a tag. The owner of the destination answers with an announce in context
// PATH_RESPONSE. Pure apart from the random tag.

/** The path request destination's name (Transport.APP_NAME "rnstransport", aspects "path", "request"). */
export const PATH_REQUEST_NAME = 'rnstransport.path.request';
/** A PLAIN destination has no identity: its hash is the truncated hash of its name hash alone
 *  (Destination.hash). */
export const PATH_REQUEST_DESTINATION: Uint8Array = truncatedHash(nameHash(PATH_REQUEST_NAME));
/** The tag a request carries (Identity.get_random_hash, truncated to 16 bytes by the receiver). */
export const PATH_REQUEST_TAG_LENGTH = TRUNCATED_HASH_LENGTH;

export interface PathRequest {
  /** The destination whose path is asked for. */
  destinationHash: Uint8Array;
  /** A transport node's identity hash, when the request came from one (data long enough for it). */
  requestingTransportId: Uint8Array | null;
  /** Up to 16 bytes; with the destination it names the request, so copies are answered once. */
  tag: Uint8Array;
}

export type PathRequestResult = { ok: true; request: PathRequest } | Failure;

/** A path request packet as a leaf node sends it: HEADER_1 broadcast DATA to the PLAIN path
 *  request destination, data = destination hash + tag (16 random bytes unless given). */
export function createPathRequest(destinationHash: Uint8Array, tag: Uint8Array = randomBytes(PATH_REQUEST_TAG_LENGTH)): Uint8Array {
  if (destinationHash.length !== TRUNCATED_HASH_LENGTH) throw new RangeError(`a destination hash is ${TRUNCATED_HASH_LENGTH} bytes, got ${destinationHash.length}`);
  return encodePacket({
    destinationHash: PATH_REQUEST_DESTINATION, destinationType: DESTINATION_TYPE.PLAIN, packetType: PACKET_TYPE.DATA, data: concat(destinationHash, tag),
  });
}

/** Reads a path request the way Transport.path_request_handler does: the first 16 bytes are the
 *  destination; with more than 32 bytes, bytes 16-31 are the requesting transport instance and
 *  the rest the tag; with 17-32 bytes, everything after the destination is the tag. A tag is cut
 *  to 16 bytes. A request without a tag is refused (Reticulum ignores "tagless" requests). */
export function decodePathRequest(p: Packet): PathRequestResult {
  if (p.packetType !== PACKET_TYPE.DATA || p.destinationType !== DESTINATION_TYPE.PLAIN) {
    return fail('ERR_RNS_PATH_REQUEST', `a path request is a DATA packet to a PLAIN destination, got packet type ${p.packetType}, destination type ${p.destinationType}`);
  }
  if (!equalBytes(p.destinationHash, PATH_REQUEST_DESTINATION)) return fail('ERR_RNS_PATH_REQUEST', 'not addressed to rnstransport.path.request');
  const d = p.data;
  const n = TRUNCATED_HASH_LENGTH;
  if (d.length <= n) return fail('ERR_RNS_PATH_REQUEST', `a path request carries a destination hash (16) and a tag, got ${d.length} bytes`);
  const withTransport = d.length > 2 * n;
  const tag = d.subarray(withTransport ? 2 * n : n);
  return {
    ok: true,
    request: {
      destinationHash: d.slice(0, n),
      requestingTransportId: withTransport ? d.slice(n, 2 * n) : null,
      tag: tag.slice(0, PATH_REQUEST_TAG_LENGTH),
    },
  };
}

/** The key that makes copies of one request the same (Transport.discovery_pr_tags): destination + tag. */
export function pathRequestKey(r: PathRequest): string {
  return toHex(concat(r.destinationHash, r.tag));
}
