import { DESTINATION_TYPE, LXMF_DESTINATION_LENGTH, PACKET_TYPE } from './constants.ts';
import { decryptFor, type DecryptOptions, encryptFor, type EncryptOptions } from './crypto.ts';
import { equalBytes } from '../../shared/codec/bytes.ts';
import { lxmfDeliveryHash } from './destination.ts';
import { type Failure, fail } from './errors.ts';
import type { Identity, PublicIdentity } from './identity.ts';
import {
  LXMF_PACKET_MAX_PLAINTEXT, LXMF_STAMP_OVERHEAD, type LxmfMessage, type LxmfMessageInput, opportunisticPlaintext, packMessage, unpackOpportunistic,
} from './lxmf.ts';
import { encodePacket, type Packet, packetHash } from './packet.ts';
import { generateStamp } from './stamp.ts';

// One LXMF message in one encrypted Reticulum packet: LXMF's OPPORTUNISTIC method
// (docs/protocols/reticulum.md 7.3; LXMessage.__as_packet, LXMRouter.delivery_packet). The
// packet is a DATA packet to the recipient's lxmf.delivery destination; its data is the
// packed message without the destination hash, encrypted to the recipient.

export interface OpportunisticInput extends Omit<LxmfMessageInput, 'destinationHash'> {
  /** The recipient's identity, from its announce. */
  recipient: PublicIdentity;
  /** The recipient's announced ratchet, if any: we encrypt to it. */
  ratchet?: Uint8Array | null;
  /** Our next hop when the recipient's announce came through a transport node (HEADER_2). */
  transportId?: Uint8Array | null;
  /** The recipient's announced stamp cost: a stamp is computed and appended (stamp.ts;
   *  about 2^cost hash attempts). Throws a RangeError if none is found in 2^(cost+4). */
  stampCost?: number | null;
  /** Fixed ephemeral key and IV, for tests. */
  encrypt?: Omit<EncryptOptions, 'ratchet'>;
}

export interface OpportunisticPacket {
  /** The bytes to send. */
  packet: Uint8Array;
  /** Its packet hash: the recipient's proof is addressed to its first 16 bytes. */
  packetHash: Uint8Array;
  /** The LXMF message id. */
  messageHash: Uint8Array;
}

/** Packs, signs, encrypts and frames a message. Throws a RangeError when the packed message
 *  is over LXMF_PACKET_MAX_PLAINTEXT (383 bytes): it would not survive forwarding in HEADER_2
 *  form; LXMF sends such messages over a link, which we do not do. */
export function createOpportunisticPacket(input: OpportunisticInput): OpportunisticPacket {
  const destinationHash = lxmfDeliveryHash(input.recipient);
  let message = packMessage({ ...input, destinationHash });
  const size = message.packed.length - LXMF_DESTINATION_LENGTH + (input.stampCost ? LXMF_STAMP_OVERHEAD : 0);
  if (size > LXMF_PACKET_MAX_PLAINTEXT) {
    throw new RangeError(`an opportunistic LXMF message is at most ${LXMF_PACKET_MAX_PLAINTEXT} bytes after its destination hash, this one is ${size}`);
  }
  if (input.stampCost) {
    // The stamp is worked out from the message id, which does not cover the stamp itself.
    const stamp = generateStamp(message.hash, input.stampCost);
    if (!stamp) throw new RangeError(`no stamp of cost ${input.stampCost} found`);
    message = packMessage({ ...input, destinationHash, stamp });
  }
  const plaintext = opportunisticPlaintext(message);
  const data = encryptFor(input.recipient, plaintext, { ...input.encrypt, ratchet: input.ratchet ?? null });
  const packet = encodePacket({ destinationHash, data, packetType: PACKET_TYPE.DATA, destinationType: DESTINATION_TYPE.SINGLE, transportId: input.transportId ?? null });
  return { packet, packetHash: packetHash(packet), messageHash: message.hash };
}

export type OpenedMessage = { ok: true; message: LxmfMessage; ratchetId: Uint8Array | null } | Failure;

/** Opens a DATA packet to our lxmf.delivery destination. The signature is not checked here:
 *  that needs the sender's announce (verifyMessage). Prove the packet (createProof with
 *  packet.hash) once it opens, as LXMF does for every delivery packet. */
export function openOpportunisticPacket(identity: Identity, packet: Packet, options: DecryptOptions = {}): OpenedMessage {
  if (packet.packetType !== PACKET_TYPE.DATA || packet.destinationType !== DESTINATION_TYPE.SINGLE) {
    return fail('ERR_LXMF_DESTINATION', `expected a DATA packet to a SINGLE destination, got packet type ${packet.packetType}, destination type ${packet.destinationType}`);
  }
  if (!equalBytes(packet.destinationHash, lxmfDeliveryHash(identity))) return fail('ERR_LXMF_DESTINATION', 'the packet is for another destination');
  const opened = decryptFor(identity, packet.data, options);
  if (!opened) return fail('ERR_LXMF_DECRYPT', 'the packet does not decrypt with our keys');
  const result = unpackOpportunistic(packet.destinationHash, opened.plaintext);
  return result.ok ? { ok: true, message: result.message, ratchetId: opened.ratchetId } : result;
}
