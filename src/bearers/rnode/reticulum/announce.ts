import { randomBytes } from 'node:crypto';
import {
  CONTEXT, CONTEXT_FLAG, DESTINATION_TYPE, KEY_LENGTH, NAME_HASH_LENGTH, PACKET_TYPE, PUBLIC_KEY_LENGTH, RANDOM_HASH_LENGTH,
  SIGNATURE_LENGTH,
} from './constants.ts';
import { concat, equalBytes } from '../../shared/codec/bytes.ts';
import { destinationHash, nameHash } from './destination.ts';
import { type Failure, fail } from './errors.ts';
import { type Identity, type PublicIdentity, publicIdentity, signMessage, verifySignature } from './identity.ts';
import { encodePacket, type Packet } from './packet.ts';

// Announces (docs/protocols/reticulum.md 4; RNS/Destination.py announce, RNS/Identity.py
// validate_announce). An announce tells the network "this destination exists and this is its
// public key": a signed, unencrypted ANNOUNCE packet whose data is
//   public key (64) | name hash (10) | random hash (10) | [ratchet (32)] | signature (64) | app data
// with the signature over
//   destination hash | public key | name hash | random hash | [ratchet] | app data.

/** Announce data without ratchet or app data: 64 + 10 + 10 + 64 = 148 bytes. */
export const ANNOUNCE_MIN_LENGTH = PUBLIC_KEY_LENGTH + NAME_HASH_LENGTH + RANDOM_HASH_LENGTH + SIGNATURE_LENGTH;

export interface AnnounceInput {
  identity: Identity;
  /** Dotted destination name, e.g. "lxmf.delivery". */
  name: string;
  /** Unix seconds now: the last 5 bytes of the random hash (see announceRandomHash). */
  now: number;
  appData?: Uint8Array | null;
  /** Our current ratchet PUBLIC key; sets the context flag. */
  ratchet?: Uint8Array | null;
  /** Answers a path request: context PATH_RESPONSE instead of NONE. */
  pathResponse?: boolean;
  /** Fixed random hash, for reproducible tests; otherwise made from `now`. */
  randomHash?: Uint8Array;
}

/** 5 random bytes then the time as 5 big-endian bytes of Unix seconds (Destination.announce:
 *  the first 5 bytes of a random truncated hash, then int(time.time()).to_bytes(5, "big")).
 *  Transport reads the time part to tell newer announces from replays. */
export function announceRandomHash(now: number, random: Uint8Array = randomBytes(5)): Uint8Array {
  const out = new Uint8Array(RANDOM_HASH_LENGTH);
  out.set(random.subarray(0, 5), 0);
  let t = Math.max(0, Math.floor(now));
  for (let i = RANDOM_HASH_LENGTH - 1; i >= 5; i--) {
    out[i] = t % 256;
    t = Math.floor(t / 256);
  }
  return out;
}

/** The announce packet for one of our destinations, ready to send (HEADER_1, broadcast). */
export function createAnnounce(input: AnnounceInput): Uint8Array {
  const ratchet = input.ratchet ?? new Uint8Array(0);
  if (ratchet.length !== 0 && ratchet.length !== KEY_LENGTH) throw new RangeError(`a ratchet key is ${KEY_LENGTH} bytes, got ${ratchet.length}`);
  const randomHash = input.randomHash ?? announceRandomHash(input.now);
  if (randomHash.length !== RANDOM_HASH_LENGTH) throw new RangeError(`a random hash is ${RANDOM_HASH_LENGTH} bytes, got ${randomHash.length}`);
  const appData = input.appData ?? new Uint8Array(0);
  const nh = nameHash(input.name);
  const dest = destinationHash(nh, input.identity);
  const signature = signMessage(input.identity, concat(dest, input.identity.publicKey, nh, randomHash, ratchet, appData));
  return encodePacket({
    destinationHash: dest,
    packetType: PACKET_TYPE.ANNOUNCE,
    destinationType: DESTINATION_TYPE.SINGLE,
    context: input.pathResponse ? CONTEXT.PATH_RESPONSE : CONTEXT.NONE,
    contextFlag: ratchet.length ? CONTEXT_FLAG.FLAG_SET : CONTEXT_FLAG.FLAG_UNSET,
    data: concat(input.identity.publicKey, nh, randomHash, ratchet, signature, appData),
  });
}

/** What a valid announce tells us. */
export interface Announce {
  destinationHash: Uint8Array;
  /** The announcer's public key and identity hash: what we encrypt to and verify with. */
  identity: PublicIdentity;
  nameHash: Uint8Array;
  randomHash: Uint8Array;
  /** Unix seconds from the random hash's last 5 bytes (the announcer's clock). */
  emittedAt: number;
  /** The destination's current ratchet public key, to encrypt to instead of the identity key. */
  ratchet: Uint8Array | null;
  /** Null when the announce carries none. */
  appData: Uint8Array | null;
  /** Hops as received; the sender's neighbours see 0 (see docs/protocols/reticulum.md 2.1). */
  hops: number;
  /** HEADER_2: the transport node that rebroadcast it, our next hop towards the destination. */
  transportId: Uint8Array | null;
  pathResponse: boolean;
}

export type AnnounceResult = { ok: true; announce: Announce } | Failure;

/** Checks a decoded ANNOUNCE packet as Identity.validate_announce does: the layout, the
 *  signature, and that the destination hash belongs to the announced key and name hash. */
export function validateAnnounce(packet: Packet): AnnounceResult {
  if (packet.packetType !== PACKET_TYPE.ANNOUNCE) return fail('ERR_RNS_ANNOUNCE_TYPE', `expected packet type ANNOUNCE (1), got ${packet.packetType}`);
  // Transport.packet_filter drops PLAIN and GROUP announces; LINK ones mean nothing.
  if (packet.destinationType !== DESTINATION_TYPE.SINGLE) {
    return fail('ERR_RNS_ANNOUNCE_TYPE', `only SINGLE destinations announce, got destination type ${packet.destinationType}`);
  }
  const hasRatchet = packet.contextFlag === CONTEXT_FLAG.FLAG_SET;
  const fixed = ANNOUNCE_MIN_LENGTH + (hasRatchet ? KEY_LENGTH : 0);
  const d = packet.data;
  if (d.length < fixed) {
    return fail('ERR_RNS_ANNOUNCE_TRUNCATED', `announce data ${hasRatchet ? 'with a ratchet ' : ''}is at least ${fixed} bytes, got ${d.length}`);
  }
  let at = 0;
  const take = (n: number) => d.slice(at, (at += n));
  const publicKey = take(PUBLIC_KEY_LENGTH);
  const nh = take(NAME_HASH_LENGTH);
  const randomHash = take(RANDOM_HASH_LENGTH);
  const ratchet = hasRatchet ? take(KEY_LENGTH) : new Uint8Array(0);
  const signature = take(SIGNATURE_LENGTH);
  const appData = d.slice(at);
  const identity = publicIdentity(publicKey)!;
  // Reticulum checks the signature first; the outcome is the same either way, and the hash
  // costs a fraction of a signature check, so garbage is turned away cheaply.
  if (!equalBytes(destinationHash(nh, identity), packet.destinationHash)) {
    return fail('ERR_RNS_ANNOUNCE_DESTINATION', 'the destination hash is not the hash of the announced name hash and key');
  }
  const signed = concat(packet.destinationHash, publicKey, nh, randomHash, ratchet, appData);
  if (!verifySignature(identity, signed, signature)) {
    return fail('ERR_RNS_ANNOUNCE_SIGNATURE', 'the announce signature does not verify with the announced key');
  }
  let emittedAt = 0;
  for (let i = 5; i < RANDOM_HASH_LENGTH; i++) emittedAt = emittedAt * 256 + randomHash[i];
  return {
    ok: true,
    announce: {
      destinationHash: packet.destinationHash,
      identity,
      nameHash: nh,
      randomHash,
      emittedAt,
      ratchet: hasRatchet ? ratchet : null,
      appData: appData.length ? appData : null,
      hops: packet.hops,
      transportId: packet.transportId,
      pathResponse: packet.context === CONTEXT.PATH_RESPONSE,
    },
  };
}
