import { decode, encode } from '@msgpack/msgpack';
import { concat, equalBytes } from '../../shared/codec/bytes.ts';
import {
  AES_BLOCK_SIZE, CONTEXT, DESTINATION_TYPE, HASH_LENGTH, HEADER_1_LENGTH, IFAC_MIN_SIZE, KEY_LENGTH, MTU, PACKET_TYPE, PUBLIC_KEY_LENGTH,
  SIGNATURE_LENGTH, TOKEN_OVERHEAD, TRUNCATED_HASH_LENGTH,
} from './constants.ts';
import { deriveTokenKey } from './crypto.ts';
import { type Failure, fail } from './errors.ts';
import {
  type Identity, publicIdentity, type PublicIdentity, signMessage, truncatedHash, verifySignature, x25519PublicFromPrivate, x25519SharedSecret,
} from './identity.ts';
import { encodePacket, type Packet } from './packet.ts';

// Reticulum links (docs/protocols/reticulum.md 10; RNS/Link.py, RNS/Packet.py). A link is an
// encrypted, two-way channel between an initiator and a SINGLE destination: the initiator sends
// a LINKREQUEST with a fresh X25519 key and a fresh Ed25519 key, the destination answers with a
// link proof (LRPROOF) signed by its identity and carrying its own fresh X25519 key; both derive
// one 64-byte key by HKDF of the X25519 shared secret, salted with the link id. Link packets are
// addressed to the link id (destination type LINK) and encrypted with a token under that key,
// without an ephemeral key. Pure: bytes in, bytes out; decoders never throw.

/** X25519 public key + Ed25519 public key in a link request (Link.ECPUBSIZE). */
export const LINK_KEYS_LENGTH = PUBLIC_KEY_LENGTH;
/** MTU signalling: 3 bytes after the keys of a request or proof (Link.LINK_MTU_SIZE). */
export const LINK_SIGNALLING_LENGTH = 3;
/** Link encryption modes (Link.MODE_*); Reticulum enables AES-256-CBC only. */
export const LINK_MODE = { AES128_CBC: 0x00, AES256_CBC: 0x01 } as const;
/** Largest plaintext of one link packet: floor((500 - 1 - 19 - 48) / 16) * 16 - 1 = 431 (Link.MDU). */
export const LINK_MDU = Math.floor((MTU - IFAC_MIN_SIZE - HEADER_1_LENGTH - TOKEN_OVERHEAD) / AES_BLOCK_SIZE) * AES_BLOCK_SIZE - 1;
/** Keep-alive bytes: the initiator sends FF, the destination answers FE (Link.send_keepalive, receive). */
export const KEEPALIVE_REQUEST = 0xff;
export const KEEPALIVE_RESPONSE = 0xfe;
const MTU_MASK = 0x1fffff;

/** The 3 signalling bytes: the MTU in the low 21 bits, the mode in the top 3 (Link.signalling_bytes). */
export function signallingBytes(mtu: number, mode: number = LINK_MODE.AES256_CBC): Uint8Array {
  const v = (mtu & MTU_MASK) | (((mode << 5) & 0xe0) << 16);
  return Uint8Array.of((v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
}

export function readSignalling(b: Uint8Array): { mtu: number; mode: number } {
  return { mtu: ((b[0] << 16) | (b[1] << 8) | b[2]) & MTU_MASK, mode: (b[0] & 0xe0) >> 5 };
}

/** What Reticulum hashes for a packet (packet.ts hashablePart), rebuilt from a decoded packet:
 *  the low 4 flag bits, then destination hash, context and data. */
function hashableOf(p: Packet, data: Uint8Array = p.data): Uint8Array {
  return concat(Uint8Array.of((p.destinationType << 2) | p.packetType), p.destinationHash, Uint8Array.of(p.context), data);
}

/** The link id: the truncated hash of the request's hashable part without any signalling bytes
 *  (Link.link_id_from_lr_packet), so it is the same whatever MTU was signalled. */
export function linkIdOf(request: Packet): Uint8Array {
  return truncatedHash(hashableOf(request, request.data.subarray(0, Math.min(request.data.length, LINK_KEYS_LENGTH))));
}

export interface LinkRequest {
  linkId: Uint8Array;
  /** The initiator's X25519 key (first 32) and Ed25519 key (last 32), as one public identity. */
  peer: PublicIdentity;
  /** The MTU the initiator signalled, null when it signalled none. */
  mtu: number | null;
  mode: number;
}

export type LinkRequestResult = { ok: true; request: LinkRequest } | Failure;

/** A LINKREQUEST to a SINGLE destination: 64 bytes of keys, optionally 3 signalling bytes
 *  (Link.validate_request). Only AES-256-CBC links are accepted, as Reticulum enables no other. */
export function decodeLinkRequest(p: Packet): LinkRequestResult {
  if (p.packetType !== PACKET_TYPE.LINKREQUEST || p.destinationType !== DESTINATION_TYPE.SINGLE) {
    return fail('ERR_RNS_LINK_REQUEST', `a link request is a LINKREQUEST packet to a SINGLE destination, got type ${p.packetType}, destination type ${p.destinationType}`);
  }
  const n = p.data.length;
  if (n !== LINK_KEYS_LENGTH && n !== LINK_KEYS_LENGTH + LINK_SIGNALLING_LENGTH) {
    return fail('ERR_RNS_LINK_REQUEST', `link request data is ${LINK_KEYS_LENGTH} or ${LINK_KEYS_LENGTH + LINK_SIGNALLING_LENGTH} bytes, got ${n}`);
  }
  const signalled = n > LINK_KEYS_LENGTH ? readSignalling(p.data.subarray(LINK_KEYS_LENGTH)) : null;
  const mode = signalled?.mode ?? LINK_MODE.AES256_CBC;
  if (mode !== LINK_MODE.AES256_CBC) return fail('ERR_RNS_LINK_REQUEST', `link mode ${mode} is not enabled (only AES-256-CBC, mode 1)`);
  return { ok: true, request: { linkId: linkIdOf(p), peer: publicIdentity(p.data.subarray(0, LINK_KEYS_LENGTH))!, mtu: signalled ? signalled.mtu || null : null, mode } };
}

/** A link request from us: `keys` is a fresh identity whose X25519 and Ed25519 halves are the
 *  link's own keys. HEADER_2 through `transportId` when the destination was heard through one. */
export function createLinkRequest(destinationHash: Uint8Array, keys: Identity, options: { mtu?: number; transportId?: Uint8Array | null } = {}): { packet: Uint8Array; linkId: Uint8Array } {
  const packet = encodePacket({
    destinationHash, packetType: PACKET_TYPE.LINKREQUEST, destinationType: DESTINATION_TYPE.SINGLE, transportId: options.transportId ?? null,
    data: concat(keys.publicKey, signallingBytes(options.mtu ?? MTU)),
  });
  const hashable = concat(Uint8Array.of((DESTINATION_TYPE.SINGLE << 2) | PACKET_TYPE.LINKREQUEST), destinationHash, Uint8Array.of(CONTEXT.NONE), keys.publicKey);
  return { packet, linkId: truncatedHash(hashable) };
}

/** The 64-byte link key: HKDF-SHA256 of the X25519 shared secret, salt = link id, no info
 *  (Link.handshake, get_salt, get_context); null when the peer's key is unusable. */
export function deriveLinkKey(ourPrivate: Uint8Array | Identity, peerPublic: Uint8Array, linkId: Uint8Array): Uint8Array | null {
  const shared = x25519SharedSecret(ourPrivate, peerPublic);
  return shared ? deriveTokenKey(shared, linkId) : null;
}

/** The destination's answer (Link.prove): PROOF, destination type LINK, context LRPROOF,
 *  addressed to the link id; data = signature (by the destination's identity) over link id +
 *  our link X25519 key + our Ed25519 key + signalling, then our link X25519 key and signalling. */
export function createLinkProof(identity: Identity, linkId: Uint8Array, linkPrivate: Uint8Array, mtu: number): Uint8Array {
  const ourPublic = x25519PublicFromPrivate(linkPrivate);
  const signalling = signallingBytes(mtu);
  const signature = signMessage(identity, concat(linkId, ourPublic, identity.publicKey.subarray(KEY_LENGTH), signalling));
  return encodePacket({
    destinationHash: linkId, packetType: PACKET_TYPE.PROOF, destinationType: DESTINATION_TYPE.LINK, context: CONTEXT.LRPROOF,
    data: concat(signature, ourPublic, signalling),
  });
}

export type LinkProofResult = { ok: true; peerPublic: Uint8Array; mtu: number } | Failure;

/** Checks the destination's LRPROOF for a link we requested (Link.validate_proof): the
 *  signature must verify with the destination's identity over link id + its link key + its
 *  Ed25519 key [+ signalling]. */
export function validateLinkProof(p: Packet, linkId: Uint8Array, destination: PublicIdentity): LinkProofResult {
  if (p.packetType !== PACKET_TYPE.PROOF || p.context !== CONTEXT.LRPROOF || p.destinationType !== DESTINATION_TYPE.LINK) {
    return fail('ERR_RNS_LINK_PROOF', `a link proof is a PROOF to a LINK destination in context LRPROOF, got type ${p.packetType}, context ${p.context}`);
  }
  if (!equalBytes(p.destinationHash, linkId)) return fail('ERR_RNS_LINK_PROOF', 'addressed to another link');
  const base = SIGNATURE_LENGTH + KEY_LENGTH;
  const n = p.data.length;
  if (n !== base && n !== base + LINK_SIGNALLING_LENGTH) return fail('ERR_RNS_LINK_PROOF', `link proof data is ${base} or ${base + LINK_SIGNALLING_LENGTH} bytes, got ${n}`);
  const signalling = p.data.subarray(base);
  const s = n > base ? readSignalling(signalling) : null;
  if (s && s.mode !== LINK_MODE.AES256_CBC) return fail('ERR_RNS_LINK_PROOF', `link mode ${s.mode} in the proof is not the one requested (1)`);
  const peerPublic = p.data.slice(SIGNATURE_LENGTH, base);
  const signed = concat(linkId, peerPublic, destination.publicKey.subarray(KEY_LENGTH), signalling);
  if (!verifySignature(destination, signed, p.data.subarray(0, SIGNATURE_LENGTH))) return fail('ERR_RNS_LINK_PROOF', 'the link proof signature does not verify with the destination key');
  return { ok: true, peerPublic, mtu: s?.mtu || MTU };
}

/** A packet on a link: addressed to the link id, destination type LINK, HEADER_1. The data is
 *  given as it goes on the air (encrypted by the caller where the context asks for it). */
export function encodeLinkPacket(linkId: Uint8Array, context: number, data: Uint8Array, packetType: number = PACKET_TYPE.DATA): Uint8Array {
  return encodePacket({ destinationHash: linkId, destinationType: DESTINATION_TYPE.LINK, packetType, context, data });
}

/** Which link packets travel in the clear (Packet.pack): keep-alives, resource parts (the
 *  resource is encrypted as a whole) and proofs; every other link packet is encrypted. */
export function linkContextEncrypted(packetType: number, context: number): boolean {
  if (packetType === PACKET_TYPE.PROOF) return false;
  return context !== CONTEXT.KEEPALIVE && context !== CONTEXT.RESOURCE && context !== CONTEXT.CACHE_REQUEST;
}

/** The proof of a packet received on a link (Link.prove_packet): always explicit, packet hash +
 *  signature by our side's link signing key, PROOF to the link id, context NONE, not encrypted. */
export function createLinkPacketProof(signer: Identity, linkId: Uint8Array, packetHash: Uint8Array): Uint8Array {
  return encodeLinkPacket(linkId, CONTEXT.NONE, concat(packetHash, signMessage(signer, packetHash)), PACKET_TYPE.PROOF);
}

/** The packet hash an explicit link packet proof names, when its signature verifies with the
 *  peer's link signing key (PacketReceipt.validate_link_proof); null otherwise. */
export function linkPacketProofHash(p: Packet, peerSigner: PublicIdentity): Uint8Array | null {
  if (p.packetType !== PACKET_TYPE.PROOF || p.context !== CONTEXT.NONE || p.data.length !== HASH_LENGTH + SIGNATURE_LENGTH) return null;
  const hash = p.data.subarray(0, HASH_LENGTH);
  return verifySignature(peerSigner, hash, p.data.subarray(HASH_LENGTH)) ? hash.slice() : null;
}

/** The LINKIDENTIFY plaintext (Link.identify): the identity's public key and its signature
 *  over link id + public key. */
export function createIdentify(identity: Identity, linkId: Uint8Array): Uint8Array {
  return concat(identity.publicKey, signMessage(identity, concat(linkId, identity.publicKey)));
}

/** The identity an initiator revealed on the link, or null when the signature does not verify. */
export function readIdentify(plaintext: Uint8Array, linkId: Uint8Array): PublicIdentity | null {
  if (plaintext.length !== PUBLIC_KEY_LENGTH + SIGNATURE_LENGTH) return null;
  const identity = publicIdentity(plaintext.subarray(0, PUBLIC_KEY_LENGTH));
  if (!identity) return null;
  return verifySignature(identity, concat(linkId, identity.publicKey), plaintext.subarray(PUBLIC_KEY_LENGTH)) ? identity : null;
}

/** The initiator's RTT report (context LRRTT): seconds as a msgpack float. */
export function encodeRtt(seconds: number): Uint8Array {
  return encode(seconds, { forceFloat32: false, forceIntegerToFloat: true });
}

export function decodeRtt(plaintext: Uint8Array): number | null {
  try {
    const v = decode(plaintext);
    return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
  } catch {
    return null;
  }
}

/** The link-close plaintext is the link id itself (Link.teardown, teardown_packet). */
export function isLinkClose(plaintext: Uint8Array, linkId: Uint8Array): boolean {
  return plaintext.length === TRUNCATED_HASH_LENGTH && equalBytes(plaintext, linkId);
}
