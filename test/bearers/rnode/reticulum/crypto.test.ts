import { createCipheriv, createHmac, hkdfSync } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decrypt, decryptFor, deriveTokenKey, encryptFor, generateRatchet, ratchetId, tokenDecrypt, tokenEncrypt } from '../../../../src/bearers/rnode/reticulum/crypto.ts';
import { identityFromPrivateKey, publicIdentity, x25519PublicFromPrivate, x25519SharedSecret } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import { A_PRIVATE, B_PRIVATE, hex, PY, RATCHET_PRIVATE, toHex } from './fixtures.ts';

// Encryption to SINGLE destinations (docs/protocols/reticulum.md 3).

const a = identityFromPrivateKey(A_PRIVATE);
const aPublic = publicIdentity(hex(PY.a_public))!;
const text = (b: Uint8Array | null | undefined) => (b ? new TextDecoder().decode(b) : null);

test('parse: a token Python encrypted for A decrypts with A\'s identity key', () => {
  assert.is(text(decrypt(a, hex(PY.token_for_a))), 'hello from reticulum');
  assert.equal(decryptFor(a, hex(PY.token_for_a))?.ratchetId, null);
});

test('parse: a token Python encrypted to A\'s ratchet decrypts with the ratchet, and names it', () => {
  assert.is(decrypt(a, hex(PY.token_for_a_ratchet)), null); // the identity key alone cannot open it
  const r = decryptFor(a, hex(PY.token_for_a_ratchet), { ratchets: [generateRatchet(), RATCHET_PRIVATE] });
  assert.is(text(r?.plaintext), 'hello via ratchet');
  assert.is(toHex(r!.ratchetId!), PY.ratchet_id);
  assert.is(toHex(x25519PublicFromPrivate(RATCHET_PRIVATE)), PY.ratchet_public);
  assert.is(toHex(ratchetId(hex(PY.ratchet_public))), PY.ratchet_id);
});

test('enforceRatchets refuses a packet only the identity key opens', () => {
  assert.is(decryptFor(a, hex(PY.token_for_a), { ratchets: [RATCHET_PRIVATE], enforceRatchets: true }), null);
  assert.ok(decryptFor(a, hex(PY.token_for_a_ratchet), { ratchets: [RATCHET_PRIVATE], enforceRatchets: true }));
});

test('generate: with a fixed ephemeral key and IV the ciphertext is exactly the documented construction', () => {
  const eph = hex('55'.repeat(32));
  const iv = hex('66'.repeat(16));
  const plaintext = new TextEncoder().encode('fieldbridge to A');
  const out = encryptFor(aPublic, plaintext, { ephemeralPrivateKey: eph, iv });
  // Built by hand from node:crypto primitives: X25519, HKDF-SHA256 (salt = A's identity hash,
  // no info) to 64 bytes, HMAC key first half, AES-256 key second half.
  const shared = x25519SharedSecret(eph, hex(PY.a_public).subarray(0, 32))!;
  const key = Buffer.from(hkdfSync('sha256', shared, hex(PY.a_hash), new Uint8Array(0), 64));
  const c = createCipheriv('aes-256-cbc', key.subarray(32), iv);
  const body = Buffer.concat([iv, c.update(plaintext), c.final()]);
  const mac = createHmac('sha256', key.subarray(0, 32)).update(body).digest();
  assert.is(toHex(out), toHex(x25519PublicFromPrivate(eph)) + body.toString('hex') + mac.toString('hex'));
  assert.is(toHex(deriveTokenKey(shared, hex(PY.a_hash))), key.toString('hex'));
  // 16 bytes of plaintext pad to 32: 32 + 16 + 32 + 32 = 112.
  assert.is(out.length, 112);
});

test('round trip: encrypt to A (random keys), to A\'s ratchet, and every length 0 to 64', () => {
  for (let n = 0; n <= 64; n++) {
    const p = Uint8Array.from({ length: n }, (_, i) => i * 7);
    assert.is(toHex(decrypt(a, encryptFor(aPublic, p))!), toHex(p), `length ${n}`);
  }
  const viaRatchet = encryptFor(aPublic, hex('c0ffee'), { ratchet: hex(PY.ratchet_public) });
  assert.is(decrypt(a, viaRatchet), null);
  assert.is(toHex(decryptFor(a, viaRatchet, { ratchets: [RATCHET_PRIVATE] })!.plaintext), 'c0ffee');
});

test('bad input: every flipped bit of a Python token makes decryption return null, but one', () => {
  const token = hex(PY.token_for_a);
  for (let bit = 0; bit < token.length * 8; bit++) {
    const bad = token.slice();
    bad[bit >> 3] ^= 1 << (bit & 7);
    // The top bit of the ephemeral key's last byte: X25519 ignores it (RFC 7748 5), so the
    // shared secret and the plaintext are unchanged, in Python as here. The HMAC covers only
    // IV and ciphertext.
    if (bit === 255) assert.is(text(decrypt(a, bad)), 'hello from reticulum');
    else assert.is(decrypt(a, bad), null, `bit ${bit}`);
  }
});

test('bad input: truncated, extended, empty, garbage, and for another identity: null', () => {
  const token = hex(PY.token_for_a);
  for (let n = 0; n < token.length; n += 5) assert.is(decrypt(a, token.subarray(0, n)), null, `cut to ${n}`);
  assert.is(decrypt(a, Uint8Array.from([...token, 0])), null);
  assert.is(decrypt(a, new Uint8Array(0)), null);
  assert.is(decrypt(a, new Uint8Array(112)), null); // all-zero peer key: no shared secret
  assert.is(decrypt(identityFromPrivateKey(B_PRIVATE), token), null);
  assert.is(decryptFor(a, token, { ratchets: [new Uint8Array(5)] })?.ratchetId, null); // a bad ratchet is skipped
});

test('token: a valid HMAC over bad padding is still null, never a throw', () => {
  const key = hex('01'.repeat(64));
  const iv = hex('02'.repeat(16));
  const good = tokenEncrypt(key, hex('41'));
  assert.is(toHex(tokenDecrypt(key, good)!), '41');
  // Raw AES of a block whose last byte is 0x00 (no valid PKCS#7), with a correct HMAC.
  const c = createCipheriv('aes-256-cbc', key.subarray(32), iv).setAutoPadding(false);
  const body = Buffer.concat([iv, c.update(new Uint8Array(16)), c.final()]);
  const bad = Buffer.concat([body, createHmac('sha256', key.subarray(0, 32)).update(body).digest()]);
  assert.is(tokenDecrypt(key, bad), null);
  assert.is(tokenDecrypt(key.subarray(1), good), null);
});

test.run();
