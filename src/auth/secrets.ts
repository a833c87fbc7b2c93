import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// API key format: "<prefix><lookup>_<secret>". The lookup part (12 base32 characters) finds
// the row; the whole key is compared by SHA-256 hash in constant time. Only the hash is
// stored, so a copy of the database cannot be used to call the API.

export interface MintedKey {
  /** The secret value, shown once. */
  key: string;
  lookup: string;
  hash: string;
}

const LOOKUP_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

export function mintKey(prefix: string): MintedKey {
  const lookupBytes = randomBytes(12);
  const lookup = Array.from(lookupBytes, (b) => LOOKUP_ALPHABET[b % LOOKUP_ALPHABET.length]).join('');
  const secret = randomBytes(32).toString('base64url');
  const key = `${prefix}${lookup}_${secret}`;
  return { key, lookup, hash: hashKey(key) };
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The lookup part of a presented key, or null when it does not have our shape. */
export function keyLookup(prefix: string, presented: string): string | null {
  if (!presented.startsWith(prefix)) return null;
  const match = /^([a-z2-9]{12})_[A-Za-z0-9_-]{43}$/.exec(presented.slice(prefix.length));
  return match ? match[1] : null;
}

export function hashesEqual(presentedKey: string, storedHashHex: string): boolean {
  const a = Buffer.from(hashKey(presentedKey), 'hex');
  const b = Buffer.from(storedHashHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** "Bearer <token>" -> token; anything else -> null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}
