import { createCipheriv, createDecipheriv, createHash, createHmac, createPublicKey, createSecretKey, diffieHellman, generateKeyPairSync, hkdfSync, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto';
import { keyLookup, mintKey, type MintedKey } from '../auth/secrets.ts';
import { TOPIC_PREFIX } from './topics.ts';

// Bridges enrolled with their own credentials (the protocol in docs/hub.md,
// "Enrollment"). Pure functions over bytes and strings, no I/O: the hub's ingest and the
// bridge's publisher do the talking. Everything uses node:crypto's primitives only.
//
//  - An enrollment token `fbe_<lookup>_<secret>` is made by the hub (POST /api/bridges), shown
//    once, and stored there only as its SHA-256 hash, like an API key. Its hash, 32 bytes, is the
//    key both sides share for the exchange: the token itself never travels.
//  - Exchange, once: the bridge publishes to fieldbridge/v1/_enroll/<nonce>/request its lookup,
//    an ephemeral X25519 public key, its clock's time and an HMAC of nonce, key and time under
//    the token's hash (the proof; the time orders requests, see src/hub/bridges/service.ts). The
//    hub answers on .../reply with the tenant, the bridge id and the bridge's new secret
//    (32 random bytes) sealed with AES-256-GCM under a key derived (HKDF-SHA256) from an X25519
//    agreement between its own ephemeral key and the bridge's, salted with the token's hash. So
//    only the holder of the token and of the ephemeral private key can open it; a broker or a
//    client that records the exchange learns nothing, even if the token leaks later.
//  - Every message a bridge publishes afterwards (events, hello, status, its last will, gone)
//    ends with `"sig":"<43 base64url>"`: HMAC-SHA256 under the secret over the topic, a line
//    feed, and the payload as it would be without the sig field. The hub's acks to an enrolled
//    bridge are signed the same way. The sig is the last field so the hub can check it on the
//    received bytes without parsing or re-serialising anything.

export const ENROLL_TOKEN_PREFIX = 'fbe_';
export const ENROLL_TOPIC_PREFIX = `${TOPIC_PREFIX}/_enroll/`;
/** A nonce names one exchange (a topic level): 16 random bytes, base64url. */
const NONCE = /^[A-Za-z0-9_-]{22}$/;
const B64_32 = /^[A-Za-z0-9_-]{43}$/;
/** toISOString()'s form: compared as text by the hub. */
const ISO_TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const REQUEST_CONTEXT = 'fieldbridge enroll request v1\n';
const REPLY_CONTEXT = 'fieldbridge enroll reply v1\n';
/** What signing adds to a payload: `,"sig":"` + 43 characters + `"` (the `}` was there). */
export const SIG_SUFFIX_BYTES = 52;
const SIG_HEAD = Buffer.from(',"sig":"', 'latin1');

export function mintEnrollmentToken(): MintedKey {
  return mintKey(ENROLL_TOKEN_PREFIX);
}

/** The lookup part of an enrollment token, or null when it is not one. */
export function enrollmentTokenLookup(token: string): string | null {
  return keyLookup(ENROLL_TOKEN_PREFIX, token);
}

/** The key both sides derive from the token: its SHA-256 (the hub keeps only this, as hex). */
export function tokenKey(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export function enrollTopic(nonce: string, kind: 'request' | 'reply'): string {
  return `${ENROLL_TOPIC_PREFIX}${nonce}/${kind}`;
}

/** fieldbridge/v1/_enroll/<nonce>/<request|reply> -> its parts; null for any other topic. */
export function parseEnrollTopic(topic: string): { nonce: string; kind: 'request' | 'reply' } | null {
  if (!topic.startsWith(ENROLL_TOPIC_PREFIX)) return null;
  const rest = topic.slice(ENROLL_TOPIC_PREFIX.length).split('/');
  if (rest.length !== 2 || !NONCE.test(rest[0]) || (rest[1] !== 'request' && rest[1] !== 'reply')) return null;
  return { nonce: rest[0], kind: rest[1] };
}

/** A signing secret as the hot paths hold it: createHmac with a KeyObject costs about 2.5 us
 *  for an event, with the raw bytes about 13 (the key is imported at every call). */
export type SigningKey = KeyObject | Uint8Array;

export function signingKey(secret: Uint8Array): KeyObject {
  return createSecretKey(secret);
}

function hmac(key: SigningKey, ...parts: Array<string | Uint8Array>): Buffer {
  const h = createHmac('sha256', key);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** Compares the canonical base64url text: the 43rd character carries 2 unused bits, so a
 *  byte comparison after decoding would take four spellings of one sig. */
function equalB64(expected: Buffer, presented: string): boolean {
  if (!B64_32.test(presented)) return false;
  return timingSafeEqual(Buffer.from(expected.toString('base64url'), 'latin1'), Buffer.from(presented, 'latin1'));
}

function x25519Public(raw: string): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: raw }, format: 'jwk' });
}

function sealKey(shared: Buffer, tokenHash: Buffer, nonce: string): Buffer {
  return Buffer.from(hkdfSync('sha256', shared, tokenHash, `fieldbridge enroll key v1 ${nonce}`, 32));
}

export interface EnrollRequest {
  nonce: string;
  topic: string;
  /** The JSON to publish (QoS 1, not retained). */
  payload: string;
  /** Kept by the bridge until the reply comes: it opens the reply. */
  privateKey: KeyObject;
}

/** The bridge's side, step 1: a request for the token (which must have the fbe_ shape). */
export function makeEnrollRequest(token: string, now: number): EnrollRequest {
  const lookup = enrollmentTokenLookup(token);
  if (!lookup) throw new Error('not an enrollment token (fbe_...)');
  const nonce = randomBytes(16).toString('base64url');
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const pub = publicKey.export({ format: 'jwk' }).x!;
  const ts = new Date(now).toISOString();
  const proof = hmac(tokenKey(token), REQUEST_CONTEXT, nonce, '\n', pub, '\n', ts).toString('base64url');
  const payload = JSON.stringify({ v: 1, lookup, pub, ts, proof });
  return { nonce, topic: enrollTopic(nonce, 'request'), payload, privateKey };
}

export type ParsedEnrollRequest = { ok: true; lookup: string; pub: string; ts: string; proof: string } | { ok: false; detail: string };

/** The hub's side: the request's fields, before the token is known (the lookup finds it). */
export function parseEnrollRequest(payload: Uint8Array): ParsedEnrollRequest {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(payload).toString('utf8'));
  } catch {
    return { ok: false, detail: 'not JSON' };
  }
  if (typeof v !== 'object' || v === null) return { ok: false, detail: 'not an object' };
  const { v: version, lookup, pub, ts, proof } = v as Record<string, unknown>;
  if (version !== 1) return { ok: false, detail: 'v must be 1' };
  if (typeof lookup !== 'string' || !/^[a-z2-9]{12}$/.test(lookup)) return { ok: false, detail: 'lookup must be 12 characters of the token alphabet' };
  if (typeof pub !== 'string' || !B64_32.test(pub)) return { ok: false, detail: 'pub must be an X25519 public key, 43 base64url characters' };
  if (typeof ts !== 'string' || !ISO_TS.test(ts)) return { ok: false, detail: 'ts must be a UTC time as YYYY-MM-DDTHH:MM:SS.sssZ' };
  if (typeof proof !== 'string' || !B64_32.test(proof)) return { ok: false, detail: 'proof must be 43 base64url characters' };
  return { ok: true, lookup, pub, ts, proof };
}

/** The hub's side: whether the request was made by a holder of the token whose hash this is. */
export function verifyEnrollProof(tokenHashHex: string, request: { nonce: string; pub: string; ts: string; proof: string }): boolean {
  return equalB64(hmac(Buffer.from(tokenHashHex, 'hex'), REQUEST_CONTEXT, request.nonce, '\n', request.pub, '\n', request.ts), request.proof);
}

/** The hub's side, step 2: the reply carrying the bridge's secret, sealed to the request's key. */
export function sealEnrollReply(o: { tokenHashHex: string; nonce: string; bridgePub: string; tenant: string; bridgeId: string; secret: Buffer; now: number }): string {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const shared = diffieHellman({ privateKey, publicKey: x25519Public(o.bridgePub) });
  const key = sealKey(shared, Buffer.from(o.tokenHashHex, 'hex'), o.nonce);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  // The tenant and bridge id are bound to the box: a reply whose names were changed on the way
  // does not open.
  cipher.setAAD(Buffer.from(`${REPLY_CONTEXT}${o.tenant}/${o.bridgeId}`, 'utf8'));
  const box = Buffer.concat([cipher.update(o.secret), cipher.final(), cipher.getAuthTag()]);
  return JSON.stringify({ v: 1, tenant: o.tenant, bridge_id: o.bridgeId, pub: publicKey.export({ format: 'jwk' }).x, iv: iv.toString('base64url'), box: box.toString('base64url'), ts: new Date(o.now).toISOString() });
}

/** Why the hub refused an exchange (the reply says only this; it is not authenticated). */
export type EnrollRefusal = 'unknown_token' | 'revoked' | 'token_used' | 'bad_request';

export function enrollRefusal(error: EnrollRefusal, now: number): string {
  return JSON.stringify({ v: 1, error, ts: new Date(now).toISOString() });
}

export type EnrollReply =
  | { ok: true; tenant: string; bridgeId: string; secret: Buffer }
  | { ok: false; refused?: EnrollRefusal; detail: string };

/** The bridge's side, step 3: the secret out of the reply, or why not. */
export function openEnrollReply(payload: Uint8Array, token: string, request: EnrollRequest, isSegment: (s: string) => boolean): EnrollReply {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(Buffer.from(payload).toString('utf8'));
  } catch {
    return { ok: false, detail: 'reply is not JSON' };
  }
  if (typeof v !== 'object' || v === null) return { ok: false, detail: 'reply is not an object' };
  if (typeof v.error === 'string') {
    const known: EnrollRefusal[] = ['unknown_token', 'revoked', 'token_used', 'bad_request'];
    return { ok: false, refused: known.includes(v.error as EnrollRefusal) ? (v.error as EnrollRefusal) : undefined, detail: `the hub refused: ${v.error.slice(0, 40)}` };
  }
  const { tenant, bridge_id: bridgeId, pub, iv, box } = v;
  if (typeof tenant !== 'string' || !isSegment(tenant) || typeof bridgeId !== 'string' || !isSegment(bridgeId)) return { ok: false, detail: 'reply names no valid tenant and bridge id' };
  if (typeof pub !== 'string' || !B64_32.test(pub) || typeof iv !== 'string' || !/^[A-Za-z0-9_-]{16}$/.test(iv) || typeof box !== 'string' || !/^[A-Za-z0-9_-]{64}$/.test(box)) {
    return { ok: false, detail: 'reply fields pub, iv or box malformed' };
  }
  try {
    const shared = diffieHellman({ privateKey: request.privateKey, publicKey: x25519Public(pub) });
    const key = sealKey(shared, tokenKey(token), request.nonce);
    const sealed = Buffer.from(box, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`${REPLY_CONTEXT}${tenant}/${bridgeId}`, 'utf8'));
    decipher.setAuthTag(sealed.subarray(32));
    const secret = Buffer.concat([decipher.update(sealed.subarray(0, 32)), decipher.final()]);
    return { ok: true, tenant, bridgeId, secret };
  } catch {
    return { ok: false, detail: 'reply does not open with this token (not from the hub that made it, or altered)' };
  }
}

/** A payload (a JSON object text with at least one field) with its sig appended as last field. */
export function signPayload(secret: SigningKey, topic: string, json: string): string {
  if (json.length < 3 || json[0] !== '{' || json[json.length - 1] !== '}') throw new Error('only a non-empty JSON object can be signed');
  const sig = createHmac('sha256', secret).update(topic + '\n').update(json).digest('base64url');
  return `${json.slice(0, -1)},"sig":"${sig}"}`;
}

export type SignatureCheck = { ok: true; text: string } | { ok: false; reason: 'unsigned' | 'bad_signature' };

/** Where the payload's sig would start, or -1 when it does not end with one. */
function sigStart(payload: Uint8Array): number {
  const n = payload.length;
  const s = n - SIG_SUFFIX_BYTES - 1;
  // At least `{"a":1` before the sig; ends with `"}`; the 8 bytes of `,"sig":"` in place.
  if (s < 2 || payload[n - 1] !== 0x7d || payload[n - 2] !== 0x22) return -1;
  for (let i = 0; i < SIG_HEAD.length; i++) if (payload[s + i] !== SIG_HEAD[i]) return -1;
  return s;
}

/** True when the payload ends with a sig field (signed by someone, rightly or not). */
export function hasSignature(payload: Uint8Array): boolean {
  return sigStart(payload) >= 0;
}

/** Checks a signed payload against the secret; on success, the payload's text without the sig. */
export function verifyPayload(secret: SigningKey, topic: string, payload: Uint8Array): SignatureCheck {
  const s = sigStart(payload);
  if (s < 0) return { ok: false, reason: 'unsigned' };
  const buf = Buffer.isBuffer(payload) ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.length);
  const body = buf.subarray(0, s);
  // The canonical text of the expected sig against the presented one (equalB64's reason).
  const expected = createHmac('sha256', secret).update(topic + '\n').update(body).update('}').digest('base64url');
  const presented = buf.subarray(s + 8, s + 51);
  if (!timingSafeEqual(Buffer.from(expected, 'latin1'), presented)) return { ok: false, reason: 'bad_signature' };
  return { ok: true, text: body.toString('utf8') + '}' };
}
