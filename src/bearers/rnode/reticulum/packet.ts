import {
  CONTEXT, CONTEXT_FLAG, DESTINATION_TYPE, HEADER_1_LENGTH, HEADER_2_LENGTH, HEADER_TYPE, MTU, PACKET_TYPE, PATHFINDER_M,
  TRANSPORT_TYPE, TRUNCATED_HASH_LENGTH,
} from './constants.ts';
import { type Failure, fail } from './errors.ts';
import { fullHash } from './identity.ts';

// Reticulum packets (docs/protocols/reticulum.md 2; RNS/Packet.py pack/unpack/get_hashable_part).
// Pure: bytes in, bytes out. The decoder never throws; the encoder throws a RangeError only for
// a caller's mistake (a field out of range, a packet over the MTU).

/** The fields of the flags byte plus everything after it. */
export interface PacketFields {
  /** HEADER_1 (0) or HEADER_2 (1): bit 6. */
  headerType: number;
  /** Bit 5: on announces, "a ratchet key follows the random hash". */
  contextFlag: number;
  /** BROADCAST (0) or TRANSPORT (1): bit 4. */
  transportType: number;
  /** SINGLE, GROUP, PLAIN or LINK: bits 2-3. */
  destinationType: number;
  /** DATA, ANNOUNCE, LINKREQUEST or PROOF: bits 0-1. */
  packetType: number;
  /** Hop count, raised by one by each node that forwards the packet. */
  hops: number;
  /** HEADER_2 only: the transport node meant to forward the packet next. */
  transportId: Uint8Array | null;
  destinationHash: Uint8Array;
  /** The context byte (CONTEXT in constants.ts). */
  context: number;
  data: Uint8Array;
}

/** A decoded packet with its Reticulum packet hash (see packetHash). */
export interface Packet extends PacketFields {
  hash: Uint8Array;
}

export type PacketResult = { ok: true; packet: Packet } | Failure;

/** What encodePacket needs; the flags default to a HEADER_1 broadcast DATA packet to a SINGLE
 *  destination with context NONE. */
export interface PacketInput {
  destinationHash: Uint8Array;
  data: Uint8Array;
  packetType?: number;
  destinationType?: number;
  context?: number;
  contextFlag?: number;
  hops?: number;
  /** Given: a HEADER_2 packet with TRANSPORT type, sent via this transport node. */
  transportId?: Uint8Array | null;
}

export function packFlags(f: Pick<PacketFields, 'headerType' | 'contextFlag' | 'transportType' | 'destinationType' | 'packetType'>): number {
  return (f.headerType << 6) | (f.contextFlag << 5) | (f.transportType << 4) | (f.destinationType << 2) | f.packetType;
}

/** The wire bytes of a packet (Packet.pack): flags, hops, [transport id], destination hash,
 *  context, data. */
export function encodePacket(input: PacketInput): Uint8Array {
  const transportId = input.transportId ?? null;
  const fields = {
    headerType: transportId ? HEADER_TYPE.HEADER_2 : HEADER_TYPE.HEADER_1,
    contextFlag: input.contextFlag ?? CONTEXT_FLAG.FLAG_UNSET,
    transportType: transportId ? TRANSPORT_TYPE.TRANSPORT : TRANSPORT_TYPE.BROADCAST,
    destinationType: input.destinationType ?? DESTINATION_TYPE.SINGLE,
    packetType: input.packetType ?? PACKET_TYPE.DATA,
  };
  const hops = input.hops ?? 0;
  const context = input.context ?? CONTEXT.NONE;
  check(fields.contextFlag, 1, 'contextFlag');
  check(fields.destinationType, 3, 'destinationType');
  check(fields.packetType, 3, 'packetType');
  check(hops, PATHFINDER_M - 1, 'hops');
  check(context, 0xff, 'context');
  if (input.destinationHash.length !== TRUNCATED_HASH_LENGTH) {
    throw new RangeError(`destinationHash must be ${TRUNCATED_HASH_LENGTH} bytes, got ${input.destinationHash.length}`);
  }
  if (transportId && transportId.length !== TRUNCATED_HASH_LENGTH) {
    throw new RangeError(`transportId must be ${TRUNCATED_HASH_LENGTH} bytes, got ${transportId.length}`);
  }
  const header = transportId ? HEADER_2_LENGTH : HEADER_1_LENGTH;
  const out = new Uint8Array(header + input.data.length);
  if (out.length > MTU) throw new RangeError(`a Reticulum packet is at most ${MTU} bytes, this one would be ${out.length}`);
  out[0] = packFlags(fields);
  out[1] = hops;
  let at = 2;
  if (transportId) {
    out.set(transportId, at);
    at += TRUNCATED_HASH_LENGTH;
  }
  out.set(input.destinationHash, at);
  at += TRUNCATED_HASH_LENGTH;
  out[at++] = context;
  out.set(input.data, at);
  return out;
}

/** Parses one packet (Packet.unpack). Refuses what Reticulum would drop before looking at
 *  the content: too short for its header, over the MTU, hops at PATHFINDER_M or above, or the
 *  IFAC bit set (we run no interface access codes, and Transport.inbound drops such packets
 *  on interfaces without one). */
export function decodePacket(raw: Uint8Array): PacketResult {
  if (raw.length < 2) return fail('ERR_RNS_PACKET_TRUNCATED', `a packet starts with flags and hops (2 bytes), got ${raw.length} bytes`);
  if (raw.length > MTU) return fail('ERR_RNS_PACKET_TOO_LONG', `a packet is at most ${MTU} bytes, got ${raw.length}`);
  const flags = raw[0];
  if (flags & 0x80) return fail('ERR_RNS_PACKET_IFAC', 'flags bit 7 (IFAC) is set: the packet carries an interface access code we do not use');
  const hops = raw[1];
  if (hops >= PATHFINDER_M) return fail('ERR_RNS_PACKET_HOPS', `hops must be below ${PATHFINDER_M}, got ${hops}`);
  const headerType = (flags >> 6) & 0x01;
  const header = headerType === HEADER_TYPE.HEADER_2 ? HEADER_2_LENGTH : HEADER_1_LENGTH;
  if (raw.length < header) {
    return fail('ERR_RNS_PACKET_TRUNCATED', `a HEADER_${headerType + 1} packet is at least ${header} bytes, got ${raw.length}`);
  }
  let at = 2;
  let transportId: Uint8Array | null = null;
  if (headerType === HEADER_TYPE.HEADER_2) {
    transportId = raw.slice(at, at + TRUNCATED_HASH_LENGTH);
    at += TRUNCATED_HASH_LENGTH;
  }
  const destinationHash = raw.slice(at, at + TRUNCATED_HASH_LENGTH);
  at += TRUNCATED_HASH_LENGTH;
  const context = raw[at++];
  return {
    ok: true,
    packet: {
      headerType,
      contextFlag: (flags >> 5) & 0x01,
      transportType: (flags >> 4) & 0x01,
      destinationType: (flags >> 2) & 0x03,
      packetType: flags & 0x03,
      hops,
      transportId,
      destinationHash,
      context,
      data: raw.slice(at),
      hash: packetHash(raw),
    },
  };
}

/** What Reticulum hashes to name a packet (reticulum.md 2.2; Packet.get_hashable_part): the low 4 bits of the
 *  flags (destination and packet type; header type, context flag and transport type are
 *  masked, since forwarding changes them), then everything after the hops byte, skipping a
 *  HEADER_2 transport id. So the hash is the same before and after any hop. */
export function hashablePart(raw: Uint8Array): Uint8Array {
  const headerType = (raw[0] >> 6) & 0x01;
  const skip = headerType === HEADER_TYPE.HEADER_2 ? 2 + TRUNCATED_HASH_LENGTH : 2;
  const rest = raw.subarray(Math.min(skip, raw.length));
  const out = new Uint8Array(1 + rest.length);
  out[0] = raw[0] & 0x0f;
  out.set(rest, 1);
  return out;
}

/** SHA-256 of the hashable part (Packet.get_hash): 32 bytes. Proofs sign it; its first 16
 *  bytes address the proof (proof.ts). */
export function packetHash(raw: Uint8Array): Uint8Array {
  return fullHash(hashablePart(raw));
}

function check(value: number, max: number, name: string): void {
  if (!Number.isInteger(value) || value < 0 || value > max) throw new RangeError(`${name} must be 0 to ${max}, got ${value}`);
}
