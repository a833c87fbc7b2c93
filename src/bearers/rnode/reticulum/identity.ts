import { createHash, createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import { KEY_LENGTH, PUBLIC_KEY_LENGTH, SIGNATURE_LENGTH, TRUNCATED_HASH_LENGTH } from './constants.ts';

// Reticulum identities (docs/protocols/reticulum.md 1): an X25519 key for encryption and an
// Ed25519 key for signatures. Pure apart from generateIdentity(), which draws random keys.
// node:crypto takes raw Curve25519 keys only inside DER, so each raw key gets the fixed
// RFC 8410 prefix for its algorithm and form.

const DER_PREFIX = {
  x25519Private: Buffer.from('302e020100300506032b656e04220420', 'hex'),
  x25519Public: Buffer.from('302a300506032b656e032100', 'hex'),
  ed25519Private: Buffer.from('302e020100300506032b657004220420', 'hex'),
  ed25519Public: Buffer.from('302a300506032b6570032100', 'hex'),
};

/** Someone else's identity as an announce gives it: the 64-byte public key (X25519 then
 *  Ed25519, reticulum.md 1.1) and its hash. */
export interface PublicIdentity {
  readonly publicKey: Uint8Array;
  /** SHA-256 of publicKey, first 16 bytes (reticulum.md 1.2). */
  readonly hash: Uint8Array;
}

/** Our own identity: the public part plus Reticulum's 64-byte private form. */
export interface Identity extends PublicIdentity {
  /** X25519 private key (32) then Ed25519 private seed (32), as Identity.get_private_key(). */
  readonly privateKey: Uint8Array;
}

export function fullHash(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(data).digest());
}

/** SHA-256 truncated to 128 bits: Reticulum's identity, destination and transport ids. */
export function truncatedHash(data: Uint8Array): Uint8Array {
  return fullHash(data).subarray(0, TRUNCATED_HASH_LENGTH);
}

export function x25519PrivateKey(raw: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([DER_PREFIX.x25519Private, raw]), format: 'der', type: 'pkcs8' });
}

export function x25519PublicKey(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([DER_PREFIX.x25519Public, raw]), format: 'der', type: 'spki' });
}

function ed25519PrivateKey(raw: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([DER_PREFIX.ed25519Private, raw]), format: 'der', type: 'pkcs8' });
}

function ed25519PublicKey(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([DER_PREFIX.ed25519Public, raw]), format: 'der', type: 'spki' });
}

/** The raw 32 bytes of a Curve25519 public key (the SPKI body after its 12-byte prefix). */
export function rawPublicKey(key: KeyObject): Uint8Array {
  return new Uint8Array(key.export({ format: 'der', type: 'spki' }).subarray(12));
}

/** The raw 32 bytes of a Curve25519 private key (the PKCS#8 body after its 16-byte prefix). */
export function rawPrivateKey(key: KeyObject): Uint8Array {
  return new Uint8Array(key.export({ format: 'der', type: 'pkcs8' }).subarray(16));
}

/** The X25519 public key of a raw private key: used for ratchets, which are bare X25519 keys. */
export function x25519PublicFromPrivate(raw: Uint8Array): Uint8Array {
  return rawPublicKey(createPublicKey(x25519PrivateKey(raw)));
}

/** X25519 shared secret; null when a key is malformed or the result is all zeros
 *  (OpenSSL refuses small-order points, as the Python `cryptography` package does). The
 *  private key is raw bytes or an identity (whose X25519 half is used, parsed once). */
export function x25519SharedSecret(privateKey: Uint8Array | Identity, publicRaw: Uint8Array): Uint8Array | null {
  if (publicRaw.length !== KEY_LENGTH) return null;
  try {
    let key: KeyObject;
    if (privateKey instanceof Uint8Array) {
      if (privateKey.length !== KEY_LENGTH) return null;
      key = x25519PrivateKey(privateKey);
    } else {
      key = decryptingKeys.get(privateKey) ?? x25519PrivateKey(privateKey.privateKey.subarray(0, KEY_LENGTH));
      decryptingKeys.set(privateKey, key);
    }
    return new Uint8Array(diffieHellman({ privateKey: key, publicKey: x25519PublicKey(publicRaw) }));
  } catch {
    return null;
  }
}

/** A new identity from fresh random keys. */
export function generateIdentity(): Identity {
  const x = generateKeyPairSync('x25519');
  const ed = generateKeyPairSync('ed25519');
  const privateKey = new Uint8Array(2 * KEY_LENGTH);
  privateKey.set(rawPrivateKey(x.privateKey), 0);
  privateKey.set(rawPrivateKey(ed.privateKey), KEY_LENGTH);
  return identityFromPrivateKey(privateKey);
}

/** An identity from Reticulum's 64-byte private form (an identity file's content): X25519
 *  private first, Ed25519 seed second (Identity.load_private_key). Throws a RangeError for any
 *  other length: a private key comes from our own storage, not from the air. */
export function identityFromPrivateKey(privateKey: Uint8Array): Identity {
  if (privateKey.length !== 2 * KEY_LENGTH) {
    throw new RangeError(`a Reticulum private key is ${2 * KEY_LENGTH} bytes (X25519 then Ed25519), got ${privateKey.length}`);
  }
  const xPrivate = x25519PrivateKey(privateKey.subarray(0, KEY_LENGTH));
  const edPrivate = ed25519PrivateKey(privateKey.subarray(KEY_LENGTH));
  const publicKey = new Uint8Array(PUBLIC_KEY_LENGTH);
  publicKey.set(rawPublicKey(createPublicKey(xPrivate)), 0);
  publicKey.set(rawPublicKey(createPublicKey(edPrivate)), KEY_LENGTH);
  return { privateKey: Uint8Array.from(privateKey), publicKey, hash: truncatedHash(publicKey) };
}

/** A peer's identity from its 64-byte public key; null for any other length. The keys
 *  themselves are only checked when used (verify and encrypt fail cleanly on bad points). */
export function publicIdentity(publicKey: Uint8Array): PublicIdentity | null {
  if (publicKey.length !== PUBLIC_KEY_LENGTH) return null;
  const copy = Uint8Array.from(publicKey);
  return { publicKey: copy, hash: truncatedHash(copy) };
}

/** The X25519 half of an identity's private key. */
export function encryptionPrivateKey(identity: Identity): Uint8Array {
  return identity.privateKey.subarray(0, KEY_LENGTH);
}

/** The X25519 half of a public key: what senders encrypt to. */
export function encryptionPublicKey(identity: PublicIdentity): Uint8Array {
  return identity.publicKey.subarray(0, KEY_LENGTH);
}

// Parsed keys, kept per identity object: importing a key costs about as much as using it,
// and our own identity signs and decrypts every packet. Keyed weakly, so nothing outlives the
// identity it belongs to.
const signingKeys = new WeakMap<Identity, KeyObject>();
const verifyingKeys = new WeakMap<PublicIdentity, KeyObject>();
const decryptingKeys = new WeakMap<Identity, KeyObject>();

/** Ed25519 signature of `message` (Identity.sign). */
export function signMessage(identity: Identity, message: Uint8Array): Uint8Array {
  let key = signingKeys.get(identity);
  if (!key) signingKeys.set(identity, (key = ed25519PrivateKey(identity.privateKey.subarray(KEY_LENGTH))));
  return new Uint8Array(sign(null, message, key));
}

/** Checks an Ed25519 signature against the Ed25519 half of a public key (Identity.validate).
 *  False, never a throw, for a wrong length, a malformed key or a bad signature. */
export function verifySignature(identity: PublicIdentity, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== SIGNATURE_LENGTH || identity.publicKey.length !== PUBLIC_KEY_LENGTH) return false;
  try {
    let key = verifyingKeys.get(identity);
    if (!key) verifyingKeys.set(identity, (key = ed25519PublicKey(identity.publicKey.subarray(KEY_LENGTH))));
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}
