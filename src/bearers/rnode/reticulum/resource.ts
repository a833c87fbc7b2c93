import { randomBytes } from 'node:crypto';
import { decode, encode } from '@msgpack/msgpack';
import { concat, equalBytes } from '../../shared/codec/bytes.ts';
import { HASH_LENGTH, HEADER_2_LENGTH, IFAC_MIN_SIZE } from './constants.ts';
import { tokenDecrypt, tokenEncrypt } from './crypto.ts';
import { type Failure, fail } from './errors.ts';
import { fullHash } from './identity.ts';
import { LINK_MDU } from './link.ts';
import { readMapHeader, skipObject } from './msgpack.ts';

// Reticulum resources (docs/protocols/reticulum.md 11; RNS/Resource.py): data larger than one
// link packet. The sender encrypts 4 random bytes + the data as one token under the link key,
// cuts it into parts of one SDU each, and advertises the resource (hash, sizes, flags, and a
// "hashmap" of 4-byte hashes, one per part). The receiver asks for parts by their map hashes a
// window at a time, assembles, decrypts, checks the hash and proves it. Pure apart from the
// random bytes; decoders never throw.

export const MAPHASH_LENGTH = 4;
export const RANDOM_HASH_LENGTH = 4;
/** Bytes of an advertisement that are not hashmap (ResourceAdvertisement.OVERHEAD). */
export const ADVERTISEMENT_OVERHEAD = 134;
/** Map hashes one advertisement carries: floor((431 - 134) / 4) = 74 (HASHMAP_MAX_LEN). */
export const HASHMAP_MAX_LEN = Math.floor((LINK_MDU - ADVERTISEMENT_OVERHEAD) / MAPHASH_LENGTH);
/** Parts within which map hashes must not repeat: 2 * 75 + 74 (COLLISION_GUARD_SIZE). */
export const COLLISION_GUARD_SIZE = 2 * 75 + HASHMAP_MAX_LEN;
/** Request flag bytes (Resource.HASHMAP_IS_NOT_EXHAUSTED / _EXHAUSTED). */
export const HASHMAP_IS_NOT_EXHAUSTED = 0x00;
export const HASHMAP_IS_EXHAUSTED = 0xff;
/** Advertisement flag bits (ResourceAdvertisement.__init__). */
export const RESOURCE_FLAG = { ENCRYPTED: 0x01, COMPRESSED: 0x02, SPLIT: 0x04, IS_REQUEST: 0x08, IS_RESPONSE: 0x10, METADATA: 0x20 } as const;

/** Data per part on a link of this MTU: MTU - 35 - 1 (Resource.__init__ sdu), 464 at 500. */
export function resourceSdu(linkMtu: number): number {
  return linkMtu - HEADER_2_LENGTH - IFAC_MIN_SIZE;
}

/** The transfer size of n bytes of data: the token around 4 random bytes + data. */
export function transferSize(dataBytes: number): number {
  return 16 + 16 * (Math.floor((RANDOM_HASH_LENGTH + dataBytes) / 16) + 1) + 32;
}

export interface Advertisement {
  /** Transfer size (encrypted), data size, number of parts. */
  t: number;
  d: number;
  n: number;
  /** Resource hash (32), random hash (4), original (first segment) hash (32). */
  h: Uint8Array;
  r: Uint8Array;
  o: Uint8Array;
  /** Segment index (from 1) and segment count. */
  i: number;
  l: number;
  /** The request id this resource answers or carries, or null. */
  q: Uint8Array | null;
  f: number;
  /** Map hashes of this advertisement's hashmap segment. */
  m: Uint8Array;
}

/** The advertisement plaintext: a msgpack map with the keys in Python's order (ResourceAdvertisement.pack). */
export function encodeAdvertisement(a: Advertisement): Uint8Array {
  return encode({ t: a.t, d: a.d, n: a.n, h: a.h, r: a.r, o: a.o, i: a.i, l: a.l, q: a.q, f: a.f, m: a.m });
}

export type AdvertisementResult = { ok: true; advertisement: Advertisement } | Failure;

/** Reads an advertisement (ResourceAdvertisement.unpack) and checks every field's type and size. */
export function decodeAdvertisement(plaintext: Uint8Array): AdvertisementResult {
  // One well-formed msgpack map and nothing after it, checked structurally first: cheaper than
  // letting the decoder throw on what the air brings.
  if (!readMapHeader(plaintext, 0) || skipObject(plaintext, 0) !== plaintext.length) return fail('ERR_RNS_RESOURCE_ADV', 'an advertisement is one msgpack map');
  let v: unknown;
  try {
    v = decode(plaintext, { useBigInt64: false });
  } catch (e) {
    return fail('ERR_RNS_RESOURCE_ADV', `not msgpack: ${(e as Error).message}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Uint8Array) return fail('ERR_RNS_RESOURCE_ADV', 'an advertisement is a msgpack map');
  const m = v as Record<string, unknown>;
  const int = (k: string) => (Number.isSafeInteger(m[k]) && (m[k] as number) >= 0 ? (m[k] as number) : null);
  const bin = (k: string, len: number | null) => (m[k] instanceof Uint8Array && (len === null || (m[k] as Uint8Array).length === len) ? (m[k] as Uint8Array).slice() : null);
  const t = int('t'), d = int('d'), n = int('n'), i = int('i'), l = int('l'), f = int('f');
  const h = bin('h', HASH_LENGTH), r = bin('r', RANDOM_HASH_LENGTH), o = bin('o', HASH_LENGTH), hm = bin('m', null);
  if (t === null || d === null || n === null || i === null || l === null || f === null) return fail('ERR_RNS_RESOURCE_ADV', 'sizes, counts and flags (t, d, n, i, l, f) must be non-negative integers');
  if (!h || !r || !o || !hm) return fail('ERR_RNS_RESOURCE_ADV', `h and o are ${HASH_LENGTH} bytes, r ${RANDOM_HASH_LENGTH}, m bytes`);
  if (hm.length % MAPHASH_LENGTH !== 0) return fail('ERR_RNS_RESOURCE_ADV', `the hashmap is whole ${MAPHASH_LENGTH}-byte map hashes, got ${hm.length} bytes`);
  if (n === 0 || hm.length === 0) return fail('ERR_RNS_RESOURCE_ADV', 'a resource has at least one part and one map hash');
  if (f > 0x3f) return fail('ERR_RNS_RESOURCE_ADV', `flags use bits 0-5, got ${f}`);
  const q = m.q === null || m.q === undefined ? null : bin('q', null);
  if (m.q !== null && m.q !== undefined && !q) return fail('ERR_RNS_RESOURCE_ADV', 'the request id q is bytes or nil');
  return { ok: true, advertisement: { t, d, n, h, r, o, i, l, q, f, m: hm } };
}

/** A part's map hash: the first 4 bytes of SHA-256 of the part + the random hash (Resource.get_map_hash). */
export function mapHash(part: Uint8Array, randomHash: Uint8Array): Uint8Array {
  return fullHash(concat(part, randomHash)).subarray(0, MAPHASH_LENGTH);
}

export interface OutgoingResource {
  advertisement: Advertisement;
  parts: Uint8Array[];
  /** What the receiver's proof must carry after the hash: SHA-256(data + hash). */
  expectedProof: Uint8Array;
}

/** Prepares `data` for sending over a link (Resource.__init__, uncompressed): the token, the
 *  parts, the hashmap; the random hash is drawn again if two map hashes within the collision
 *  guard would be equal. */
export function prepareResource(data: Uint8Array, linkKey: Uint8Array, sdu: number, random: (n: number) => Uint8Array = (n) => randomBytes(n)): OutgoingResource {
  const stream = tokenEncrypt(linkKey, concat(random(RANDOM_HASH_LENGTH), data));
  const parts: Uint8Array[] = [];
  for (let at = 0; at < stream.length; at += sdu) parts.push(stream.subarray(at, at + sdu));
  for (;;) {
    const r = random(RANDOM_HASH_LENGTH);
    const hashes = parts.map((p) => mapHash(p, r));
    if (hasCollision(hashes)) continue;
    const h = fullHash(concat(data, r));
    return {
      advertisement: { t: stream.length, d: data.length, n: parts.length, h, r, o: h, i: 1, l: 1, q: null, f: RESOURCE_FLAG.ENCRYPTED, m: concat(...hashes.slice(0, HASHMAP_MAX_LEN)) },
      parts,
      expectedProof: fullHash(concat(data, h)),
    };
  }
}

function hasCollision(hashes: Uint8Array[]): boolean {
  for (let i = 0; i < hashes.length; i++) {
    for (let j = i + 1; j < Math.min(hashes.length, i + COLLISION_GUARD_SIZE); j++) if (equalBytes(hashes[i], hashes[j])) return true;
  }
  return false;
}

export interface PartRequest {
  /** The receiver ran out of map hashes and wants the next hashmap segment. */
  exhausted: boolean;
  /** With `exhausted`: the last map hash it holds. */
  lastMapHash: Uint8Array | null;
  resourceHash: Uint8Array;
  mapHashes: Uint8Array[];
}

/** A part request (Resource.request_next): flag byte, [last map hash], resource hash, map hashes. */
export function encodeRequest(r: PartRequest): Uint8Array {
  const head = r.exhausted ? concat(Uint8Array.of(HASHMAP_IS_EXHAUSTED), r.lastMapHash!) : Uint8Array.of(HASHMAP_IS_NOT_EXHAUSTED);
  return concat(head, r.resourceHash, ...r.mapHashes);
}

export type PartRequestResult = { ok: true; request: PartRequest } | Failure;

export function decodeRequest(plaintext: Uint8Array): PartRequestResult {
  if (plaintext.length < 1) return fail('ERR_RNS_RESOURCE_REQUEST', 'an empty part request');
  const flag = plaintext[0];
  if (flag !== HASHMAP_IS_NOT_EXHAUSTED && flag !== HASHMAP_IS_EXHAUSTED) return fail('ERR_RNS_RESOURCE_REQUEST', `the first byte is 00 or ff, got ${flag.toString(16)}`);
  const exhausted = flag === HASHMAP_IS_EXHAUSTED;
  const at = exhausted ? 1 + MAPHASH_LENGTH : 1;
  if (plaintext.length < at + HASH_LENGTH) return fail('ERR_RNS_RESOURCE_REQUEST', `a part request is at least ${at + HASH_LENGTH} bytes, got ${plaintext.length}`);
  const rest = plaintext.subarray(at + HASH_LENGTH);
  if (rest.length % MAPHASH_LENGTH !== 0) return fail('ERR_RNS_RESOURCE_REQUEST', `requested map hashes are ${MAPHASH_LENGTH} bytes each, got ${rest.length} bytes`);
  const mapHashes: Uint8Array[] = [];
  for (let i = 0; i < rest.length; i += MAPHASH_LENGTH) mapHashes.push(rest.slice(i, i + MAPHASH_LENGTH));
  return {
    ok: true,
    request: { exhausted, lastMapHash: exhausted ? plaintext.slice(1, at) : null, resourceHash: plaintext.slice(at, at + HASH_LENGTH), mapHashes },
  };
}

/** The receiver's proof data (Resource.prove): resource hash + SHA-256(data + resource hash). */
export function resourceProof(data: Uint8Array, resourceHash: Uint8Array): Uint8Array {
  return concat(resourceHash, fullHash(concat(data, resourceHash)));
}

export type ResourceProofResult = { ok: true; resourceHash: Uint8Array; proof: Uint8Array } | Failure;

export function decodeResourceProof(data: Uint8Array): ResourceProofResult {
  if (data.length !== 2 * HASH_LENGTH) return fail('ERR_RNS_RESOURCE_PROOF', `a resource proof is ${2 * HASH_LENGTH} bytes, got ${data.length}`);
  return { ok: true, resourceHash: data.slice(0, HASH_LENGTH), proof: data.slice(HASH_LENGTH) };
}

/** Joins the parts, decrypts, drops the 4 random bytes and checks the resource hash
 *  (Resource.assemble, uncompressed). Null when anything does not check out. */
export function assembleResource(parts: readonly Uint8Array[], linkKey: Uint8Array, advertisement: Pick<Advertisement, 'h' | 'r'>): Uint8Array | null {
  const plain = tokenDecrypt(linkKey, concat(...parts));
  if (!plain || plain.length < RANDOM_HASH_LENGTH) return null;
  const data = plain.subarray(RANDOM_HASH_LENGTH);
  return equalBytes(fullHash(concat(data, advertisement.r)), advertisement.h) ? data.slice() : null;
}
