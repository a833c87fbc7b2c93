import { CONTEXT, DESTINATION_TYPE, HASH_LENGTH, PACKET_TYPE, PROOF_EXPLICIT_LENGTH, PROOF_IMPLICIT_LENGTH, TRUNCATED_HASH_LENGTH } from './constants.ts';
import { concat, equalBytes } from '../../shared/codec/bytes.ts';
import { type Failure, fail } from './errors.ts';
import { type Identity, type PublicIdentity, signMessage, verifySignature } from './identity.ts';
import { encodePacket, type Packet } from './packet.ts';

// Delivery proofs for packets to SINGLE destinations (docs/protocols/reticulum.md 5;
// RNS/Identity.py prove, RNS/Packet.py ProofDestination and PacketReceipt.validate_proof).
// The receiver signs the full packet hash of what it got and sends a PROOF packet addressed
// to the first 16 bytes of that hash, so the sender can match it without knowing who proved.
// Reticulum sends implicit proofs (signature only) unless configured otherwise, and accepts
// both forms. LXMF's delivery destination proves every packet it accepts (LXMRouter.delivery_packet).

/** Where a proof for this packet goes: its packet hash truncated to 16 bytes. */
export function proofDestination(packetHash: Uint8Array): Uint8Array {
  return packetHash.subarray(0, TRUNCATED_HASH_LENGTH);
}

/** The PROOF packet for a packet we received: HEADER_1 broadcast, destination type SINGLE,
 *  context NONE, data = signature (implicit) or packet hash + signature (explicit). */
export function createProof(identity: Identity, packetHash: Uint8Array, options: { explicit?: boolean } = {}): Uint8Array {
  if (packetHash.length !== HASH_LENGTH) throw new RangeError(`a packet hash is ${HASH_LENGTH} bytes, got ${packetHash.length}`);
  const signature = signMessage(identity, packetHash);
  return encodePacket({
    destinationHash: proofDestination(packetHash),
    packetType: PACKET_TYPE.PROOF,
    destinationType: DESTINATION_TYPE.SINGLE,
    context: CONTEXT.NONE,
    data: options.explicit ? concat(packetHash, signature) : signature,
  });
}

export type ProofResult = { ok: true; explicit: boolean } | Failure;

/** Checks a received PROOF packet against a packet we sent: `sentHash` is that packet's full
 *  hash (packetHash of the bytes we sent), `peer` the identity we sent it to. Link proofs
 *  (LRPROOF, RESOURCE_PRF) are not ours to check and are refused. */
export function validateProof(proof: Packet, sentHash: Uint8Array, peer: PublicIdentity): ProofResult {
  if (proof.packetType !== PACKET_TYPE.PROOF) return fail('ERR_RNS_PROOF_TYPE', `expected packet type PROOF (3), got ${proof.packetType}`);
  if (proof.context === CONTEXT.LRPROOF || proof.context === CONTEXT.RESOURCE_PRF || proof.destinationType === DESTINATION_TYPE.LINK) {
    return fail('ERR_RNS_PROOF_TYPE', `a link proof (context ${proof.context}, destination type ${proof.destinationType}) is not a packet proof`);
  }
  if (!equalBytes(proof.destinationHash, proofDestination(sentHash))) {
    return fail('ERR_RNS_PROOF_DESTINATION', 'the proof is addressed to another packet');
  }
  const d = proof.data;
  let signature: Uint8Array;
  if (d.length === PROOF_EXPLICIT_LENGTH) {
    if (!equalBytes(d.subarray(0, HASH_LENGTH), sentHash)) return fail('ERR_RNS_PROOF_HASH', 'the explicit proof names another packet hash');
    signature = d.subarray(HASH_LENGTH);
  } else if (d.length === PROOF_IMPLICIT_LENGTH) {
    signature = d;
  } else {
    return fail('ERR_RNS_PROOF_LENGTH', `proof data is ${PROOF_IMPLICIT_LENGTH} (implicit) or ${PROOF_EXPLICIT_LENGTH} (explicit) bytes, got ${d.length}`);
  }
  if (!verifySignature(peer, sentHash, signature)) return fail('ERR_RNS_PROOF_SIGNATURE', 'the proof signature does not verify with the peer key');
  return { ok: true, explicit: d.length === PROOF_EXPLICIT_LENGTH };
}
