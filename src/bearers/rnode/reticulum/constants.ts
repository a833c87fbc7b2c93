// Reticulum and LXMF wire constants, one table for the protocol (docs/style.md habit 3), with the
// names Reticulum's own source uses. Every value is a fact of Reticulum 1.4.2 / LXMF 1.0.1;
// docs/protocols/reticulum.md says where each comes from and how the sizes follow.

/** Packet types: the low 2 bits of the flags byte (reticulum.md 2.1; RNS/Packet.py). */
export const PACKET_TYPE = { DATA: 0x00, ANNOUNCE: 0x01, LINKREQUEST: 0x02, PROOF: 0x03 } as const;
/** Header types: bit 6 of the flags byte. HEADER_2 carries a transport id before the
 *  destination (reticulum.md 2.1). */
export const HEADER_TYPE = { HEADER_1: 0x00, HEADER_2: 0x01 } as const;
/** Transport types: bit 4 of the flags byte (RNS/Transport.py; only these two fit in one bit). */
export const TRANSPORT_TYPE = { BROADCAST: 0x00, TRANSPORT: 0x01 } as const;
/** Destination types: bits 2-3 of the flags byte (RNS/Destination.py). */
export const DESTINATION_TYPE = { SINGLE: 0x00, GROUP: 0x01, PLAIN: 0x02, LINK: 0x03 } as const;
/** Context flag values: bit 5 of the flags byte; on an announce it says "a ratchet follows". */
export const CONTEXT_FLAG = { FLAG_UNSET: 0x00, FLAG_SET: 0x01 } as const;

/** The context byte after the address(es) (reticulum.md 2.3; RNS/Packet.py). A leaf node
 *  sends NONE (data, proofs, announces) and PATH_RESPONSE arrives on announces that answer a
 *  path request; the rest are named so a decoded packet can say what it is. */
export const CONTEXT = {
  NONE: 0x00,
  RESOURCE: 0x01,
  RESOURCE_ADV: 0x02,
  RESOURCE_REQ: 0x03,
  RESOURCE_HMU: 0x04,
  RESOURCE_PRF: 0x05,
  RESOURCE_ICL: 0x06,
  RESOURCE_RCL: 0x07,
  CACHE_REQUEST: 0x08,
  REQUEST: 0x09,
  RESPONSE: 0x0a,
  PATH_RESPONSE: 0x0b,
  COMMAND: 0x0c,
  COMMAND_STATUS: 0x0d,
  CHANNEL: 0x0e,
  KEEPALIVE: 0xfa,
  LINKIDENTIFY: 0xfb,
  LINKCLOSE: 0xfc,
  LINKPROOF: 0xfd,
  LRRTT: 0xfe,
  LRPROOF: 0xff,
} as const;

export type ContextName = keyof typeof CONTEXT;
const CONTEXT_NAMES = new Map<number, ContextName>(Object.entries(CONTEXT).map(([k, v]) => [v, k as ContextName]));

/** The name of a context byte, or 'UNKNOWN' for the values Reticulum does not define. */
export function contextName(value: number): ContextName | 'UNKNOWN' {
  return CONTEXT_NAMES.get(value) ?? 'UNKNOWN';
}

// Sizes (reticulum.md 2.4). Lengths in bytes; Reticulum states most of them in bits.
/** Reticulum's network-wide MTU (RNS/Reticulum.py MTU). */
export const MTU = 500;
/** SHA-256 truncated to 128 bits: identity hashes, destination hashes, transport ids. */
export const TRUNCATED_HASH_LENGTH = 16;
/** A full SHA-256: packet hashes, LXMF message ids. */
export const HASH_LENGTH = 32;
/** NAME_HASH_LENGTH is 80 bits: the name hash in announces, and ratchet ids. */
export const NAME_HASH_LENGTH = 10;
/** X25519 public key then Ed25519 public key (Identity.KEYSIZE 512 bits). */
export const PUBLIC_KEY_LENGTH = 64;
/** One Curve25519 key: an X25519 or Ed25519 public or private key, or a ratchet key. */
export const KEY_LENGTH = 32;
/** Ed25519 signature (Identity.SIGLENGTH 512 bits). */
export const SIGNATURE_LENGTH = 64;
/** The announce's random hash: 5 random bytes then 5 bytes of big-endian Unix seconds. */
export const RANDOM_HASH_LENGTH = 10;
/** flags + hops + one address + context (Reticulum.HEADER_MINSIZE). */
export const HEADER_1_LENGTH = 2 + TRUNCATED_HASH_LENGTH + 1;
/** flags + hops + transport id + address + context (Reticulum.HEADER_MAXSIZE). */
export const HEADER_2_LENGTH = 2 + 2 * TRUNCATED_HASH_LENGTH + 1;
/** Smallest interface access code Reticulum reserves room for (Reticulum.IFAC_MIN_SIZE). */
export const IFAC_MIN_SIZE = 1;
/** Largest packet data Reticulum plans for: 500 - 35 - 1 = 464 (Reticulum.MDU). */
export const MDU = MTU - HEADER_2_LENGTH - IFAC_MIN_SIZE;
/** Token overhead: 16-byte IV + 32-byte HMAC (Token.TOKEN_OVERHEAD). */
export const TOKEN_OVERHEAD = 48;
export const AES_BLOCK_SIZE = 16;
/** Largest plaintext of one encrypted packet: floor((464 - 48 - 32) / 16) * 16 - 1 = 383
 *  (Packet.ENCRYPTED_MDU; the 32 is the ephemeral public key, the -1 leaves room for the
 *  PKCS#7 pad byte). */
export const ENCRYPTED_MDU = Math.floor((MDU - TOKEN_OVERHEAD - KEY_LENGTH) / AES_BLOCK_SIZE) * AES_BLOCK_SIZE - 1;
/** Hops at or above this make Reticulum drop a packet as malformed (Transport.PATHFINDER_M). */
export const PATHFINDER_M = 128;

/** Proof data lengths (PacketReceipt.EXPL_LENGTH / IMPL_LENGTH). */
export const PROOF_EXPLICIT_LENGTH = HASH_LENGTH + SIGNATURE_LENGTH;
export const PROOF_IMPLICIT_LENGTH = SIGNATURE_LENGTH;

/** LXMF's app name and the aspect of its delivery destination (LXMF/LXMF.py, LXMRouter.py). */
export const LXMF_APP_NAME = 'lxmf';
export const LXMF_DELIVERY_NAME = 'lxmf.delivery';
/** An LXMF propagation node's destination (LXMRouter.propagation_destination). */
export const LXMF_PROPAGATION_NAME = 'lxmf.propagation';
/** LXMF message parts before the msgpack payload: destination, source, signature. */
export const LXMF_DESTINATION_LENGTH = TRUNCATED_HASH_LENGTH;
/** LXMF "supported functionality" code in announce app data (LXMF.py SF_COMPRESSION). */
export const LXMF_SF_COMPRESSION = 0x00;
/** LXMF field keys we name (LXMF/LXMF.py). Other keys pass through untouched. */
export const LXMF_FIELD = {
  EMBEDDED_LXMS: 0x01,
  TELEMETRY: 0x02,
  ICON_APPEARANCE: 0x04,
  FILE_ATTACHMENTS: 0x05,
  IMAGE: 0x06,
  AUDIO: 0x07,
  THREAD: 0x08,
  TICKET: 0x0c,
  RENDERER: 0x0f,
  REPLY_TO: 0x30,
  REACTION: 0x40,
} as const;
