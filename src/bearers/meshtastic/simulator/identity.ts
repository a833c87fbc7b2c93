import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { BROADCAST } from '../codec/messages.ts';

// A simulated node's identity: its X25519 key pair and the number firmware 2.8 derives from
// it. Since 2.8 the firmware numbers a node by the CRC-32 of its public key (NodeDB.cpp
// createNewIdentity and setup, `crc32Buffer(public_key, 32)`, firmware PR #10478;
// ErriezCRC32: polynomial 0xEDB88320, initial value and final XOR 0xFFFFFFFF, the CRC-32 of
// zlib); before, from its MAC address (docs/protocols/meshtastic.md 2.10). The simulator's keys
// come from the node's name, so a named simulator keeps its key across runs.

/** PKCS#8 DER prefix of a raw X25519 private key (RFC 8410): the 32 key bytes follow. */
const X25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

export interface NodeKeys {
  publicKey: Uint8Array;
  privateKey: Uint8Array;
}

/** A key pair made from `seed` (the same seed, the same keys). */
export function keysFromSeed(seed: string): NodeKeys {
  const privateKey = createHash('sha256').update(`fieldbridge meshtastic simulator key: ${seed}`).digest();
  // X25519 clamping (RFC 7748 5), as the firmware's key generation leaves a private key.
  privateKey[0] &= 248;
  privateKey[31] &= 127;
  privateKey[31] |= 64;
  return keysFromPrivate(privateKey);
}

/** The key pair of an X25519 private key (32 bytes). */
export function keysFromPrivate(privateKey: Uint8Array): NodeKeys {
  const key = createPrivateKey({ key: Buffer.concat([X25519_PKCS8_PREFIX, privateKey]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  return { privateKey: new Uint8Array(privateKey), publicKey: new Uint8Array(spki.subarray(spki.length - 32)) };
}

/** The node number firmware 2.8 gives a node with this public key. A CRC that lands on a
 *  number no node may have (0..3 are reserved, BROADCAST is everyone) is not one the simulator
 *  can use: it says so rather than pick another. */
export function nodeNumFromKey(publicKey: Uint8Array): number {
  const num = crc32(publicKey) >>> 0;
  if (num < 4 || num === BROADCAST) throw new RangeError(`the key's CRC-32 ${num} is a reserved node number`);
  return num;
}
