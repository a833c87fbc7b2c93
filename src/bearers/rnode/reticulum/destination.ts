import { LXMF_DELIVERY_NAME, NAME_HASH_LENGTH, TRUNCATED_HASH_LENGTH } from './constants.ts';
import { fullHash, type PublicIdentity, truncatedHash } from './identity.ts';

// Destination names and hashes (docs/protocols/reticulum.md 1.3; RNS/Destination.py). A
// destination is named "app.aspect.aspect"; its address is a hash of that name's hash and the
// owning identity's hash, so anyone holding the public key can check an address.

/** First 10 bytes of SHA-256 of the dotted name in UTF-8 (Destination.name_hash). The name
 *  is given whole ("lxmf.delivery"): Reticulum forbids dots inside the app name or an aspect,
 *  so the dotted form is unambiguous. */
export function nameHash(name: string): Uint8Array {
  return fullHash(new TextEncoder().encode(name)).subarray(0, NAME_HASH_LENGTH);
}

/** Truncated SHA-256 of name hash + identity hash (Destination.hash). */
export function destinationHash(name: string | Uint8Array, identity: PublicIdentity | Uint8Array): Uint8Array {
  const nh = typeof name === 'string' ? nameHash(name) : name;
  const ih = identity instanceof Uint8Array ? identity : identity.hash;
  if (nh.length !== NAME_HASH_LENGTH) throw new RangeError(`a name hash is ${NAME_HASH_LENGTH} bytes, got ${nh.length}`);
  if (ih.length !== TRUNCATED_HASH_LENGTH) throw new RangeError(`an identity hash is ${TRUNCATED_HASH_LENGTH} bytes, got ${ih.length}`);
  const material = new Uint8Array(NAME_HASH_LENGTH + TRUNCATED_HASH_LENGTH);
  material.set(nh, 0);
  material.set(ih, NAME_HASH_LENGTH);
  return truncatedHash(material);
}

/** Name hash of "lxmf.delivery": 6e c6 0b c3 18 e2 c0 f0 d9 08. */
export const LXMF_DELIVERY_NAME_HASH: Uint8Array = nameHash(LXMF_DELIVERY_NAME);

/** The lxmf.delivery address of an identity: where LXMF messages to it are sent. */
export function lxmfDeliveryHash(identity: PublicIdentity | Uint8Array): Uint8Array {
  return destinationHash(LXMF_DELIVERY_NAME_HASH, identity);
}
