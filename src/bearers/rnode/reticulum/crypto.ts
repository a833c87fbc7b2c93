import { createCipheriv, createDecipheriv, createHmac, generateKeyPairSync, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { AES_BLOCK_SIZE, KEY_LENGTH, NAME_HASH_LENGTH } from './constants.ts';
import {
  encryptionPublicKey, fullHash, type Identity, type PublicIdentity, rawPrivateKey, x25519PublicFromPrivate,
  x25519SharedSecret,
} from './identity.ts';

// Encryption to SINGLE destinations (docs/protocols/reticulum.md 3; RNS/Identity.py encrypt and
// decrypt, RNS/Cryptography/Token.py, HKDF.py). A fresh X25519 key per packet, HKDF-SHA256 to
// 64 bytes, then a "token": IV, AES-256-CBC with PKCS#7, HMAC-SHA256 over IV and ciphertext.
// Decryption returns null for anything that does not verify and never throws.

/** HKDF output length: 32 bytes of HMAC key then 32 bytes of AES-256 key
 *  (Identity.DERIVED_KEY_LENGTH, Token.__init__ with a 64-byte key). */
export const DERIVED_KEY_LENGTH = 64;
const IV_LENGTH = 16;
const HMAC_LENGTH = 32;

/** HKDF-SHA256 of an X25519 shared secret. The salt is the hash of the identity the packet is
 *  encrypted to (Identity.get_salt); the info is empty (get_context returns None). */
export function deriveTokenKey(sharedSecret: Uint8Array, salt: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', sharedSecret, salt, new Uint8Array(0), DERIVED_KEY_LENGTH));
}

/** A token (Token.encrypt): IV (16) + AES-256-CBC(PKCS#7) ciphertext + HMAC-SHA256 of both,
 *  keyed with the first half of the derived key; the AES key is the second half. */
export function tokenEncrypt(key: Uint8Array, plaintext: Uint8Array, iv: Uint8Array = randomBytes(IV_LENGTH)): Uint8Array {
  if (key.length !== DERIVED_KEY_LENGTH) throw new RangeError(`a token key is ${DERIVED_KEY_LENGTH} bytes, got ${key.length}`);
  if (iv.length !== IV_LENGTH) throw new RangeError(`a token IV is ${IV_LENGTH} bytes, got ${iv.length}`);
  const cipher = createCipheriv('aes-256-cbc', key.subarray(32), iv);
  const body = Buffer.concat([iv, cipher.update(plaintext), cipher.final()]);
  const mac = createHmac('sha256', key.subarray(0, 32)).update(body).digest();
  return new Uint8Array(Buffer.concat([body, mac]));
}

/** The plaintext of a token, or null: too short, not whole AES blocks, wrong HMAC (checked
 *  before anything is decrypted, Token.decrypt) or bad padding. */
export function tokenDecrypt(key: Uint8Array, token: Uint8Array): Uint8Array | null {
  if (key.length !== DERIVED_KEY_LENGTH) return null;
  const cipherLength = token.length - IV_LENGTH - HMAC_LENGTH;
  if (cipherLength < AES_BLOCK_SIZE || cipherLength % AES_BLOCK_SIZE !== 0) return null;
  const body = token.subarray(0, token.length - HMAC_LENGTH);
  const expected = createHmac('sha256', key.subarray(0, 32)).update(body).digest();
  if (!timingSafeEqual(expected, token.subarray(token.length - HMAC_LENGTH))) return null;
  try {
    const decipher = createDecipheriv('aes-256-cbc', key.subarray(32), token.subarray(0, IV_LENGTH));
    return new Uint8Array(Buffer.concat([decipher.update(body.subarray(IV_LENGTH)), decipher.final()]));
  } catch {
    return null; // padding did not check out
  }
}

export interface EncryptOptions {
  /** The peer's announced ratchet public key (32 bytes): used instead of its identity key
   *  when given (Identity.encrypt with ratchet). */
  ratchet?: Uint8Array | null;
  /** Fixed ephemeral X25519 private key and IV, for reproducible tests only. */
  ephemeralPrivateKey?: Uint8Array;
  iv?: Uint8Array;
}

/** Encrypts for a peer's SINGLE destination: ephemeral public key (32) + token. The result is
 *  48 + 16 * (floor(n / 16) + 1) + 32 bytes for n bytes of plaintext. Throws a RangeError when
 *  the peer's key (or ratchet) is not a usable X25519 key. */
export function encryptFor(peer: PublicIdentity, plaintext: Uint8Array, options: EncryptOptions = {}): Uint8Array {
  const ephemeral = options.ephemeralPrivateKey ?? rawPrivateKey(generateKeyPairSync('x25519').privateKey);
  const target = options.ratchet ?? encryptionPublicKey(peer);
  const shared = x25519SharedSecret(ephemeral, target);
  if (!shared) throw new RangeError('the peer key is not a usable X25519 public key');
  const token = tokenEncrypt(deriveTokenKey(shared, peer.hash), plaintext, options.iv);
  const out = new Uint8Array(KEY_LENGTH + token.length);
  out.set(x25519PublicFromPrivate(ephemeral), 0);
  out.set(token, KEY_LENGTH);
  return out;
}

export interface Decrypted {
  plaintext: Uint8Array;
  /** The id of the ratchet that opened it (ratchetId), or null for the identity key. */
  ratchetId: Uint8Array | null;
}

export interface DecryptOptions {
  /** Our ratchet private keys, newest first; each is tried before the identity key. */
  ratchets?: readonly Uint8Array[];
  /** Refuse packets that only the identity key opens (Destination.enforce_ratchets). */
  enforceRatchets?: boolean;
}

/** Decrypts a packet sent to one of our SINGLE destinations; null if nothing opens it. */
export function decryptFor(identity: Identity, ciphertext: Uint8Array, options: DecryptOptions = {}): Decrypted | null {
  // Whole AES blocks between the IV and the HMAC, or it cannot be a token: checked before
  // any key agreement, which costs far more than this.
  const cipherLength = ciphertext.length - KEY_LENGTH - IV_LENGTH - HMAC_LENGTH;
  if (cipherLength < AES_BLOCK_SIZE || cipherLength % AES_BLOCK_SIZE !== 0) return null;
  const peerKey = ciphertext.subarray(0, KEY_LENGTH);
  const token = ciphertext.subarray(KEY_LENGTH);
  for (const ratchet of options.ratchets ?? []) {
    const plaintext = open(ratchet, peerKey, identity.hash, token);
    if (plaintext) return { plaintext, ratchetId: ratchetId(x25519PublicFromPrivate(ratchet)) };
  }
  if (options.enforceRatchets) return null;
  const plaintext = open(identity, peerKey, identity.hash, token);
  return plaintext ? { plaintext, ratchetId: null } : null;
}

/** The plaintext alone, or null: decryptFor without ratchets. */
export function decrypt(identity: Identity, ciphertext: Uint8Array): Uint8Array | null {
  return decryptFor(identity, ciphertext)?.plaintext ?? null;
}

/** A ratchet's id: the first 10 bytes of SHA-256 of its public key (Identity._get_ratchet_id). */
export function ratchetId(ratchetPublic: Uint8Array): Uint8Array {
  return fullHash(ratchetPublic).subarray(0, NAME_HASH_LENGTH);
}

/** A new ratchet private key (32 random bytes form a valid X25519 private key). */
export function generateRatchet(): Uint8Array {
  return rawPrivateKey(generateKeyPairSync('x25519').privateKey);
}

function open(privateKey: Uint8Array | Identity, peerKey: Uint8Array, salt: Uint8Array, token: Uint8Array): Uint8Array | null {
  const shared = x25519SharedSecret(privateKey, peerKey);
  return shared ? tokenDecrypt(deriveTokenKey(shared, salt), token) : null;
}
