import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { destinationHash, LXMF_DELIVERY_NAME_HASH, lxmfDeliveryHash, nameHash } from '../../../../src/bearers/rnode/reticulum/destination.ts';
import {
  generateIdentity, identityFromPrivateKey, publicIdentity, signMessage, truncatedHash, verifySignature,
} from '../../../../src/bearers/rnode/reticulum/identity.ts';
import { A_PRIVATE, B_PRIVATE, hex, PY, toHex } from './fixtures.ts';

// Identities and destination hashes (docs/protocols/reticulum.md 1): Python-made values from
// fixtures.ts, and hand-made ones computed here from the documented formulas.

test('parse: A\'s 64-byte private key gives the public key and hash Reticulum computes', () => {
  const a = identityFromPrivateKey(A_PRIVATE);
  assert.is(toHex(a.publicKey), PY.a_public);
  assert.is(toHex(a.hash), PY.a_hash);
  assert.is(toHex(identityFromPrivateKey(B_PRIVATE).hash), PY.b_hash);
});

test('generate: the private form is X25519 first, Ed25519 second, kept byte for byte', () => {
  const a = identityFromPrivateKey(A_PRIVATE);
  assert.is(toHex(a.privateKey), toHex(A_PRIVATE));
  // Hand check: the public halves are the keys node derives from each private half alone.
  assert.is(toHex(a.publicKey.subarray(0, 32)), PY.a_public.slice(0, 64));
  assert.is(toHex(a.publicKey.subarray(32)), PY.a_public.slice(64));
});

test('round trip: a generated identity reloads from its private key to the same identity', () => {
  const g = generateIdentity();
  assert.is(g.privateKey.length, 64);
  const again = identityFromPrivateKey(g.privateKey);
  assert.is(toHex(again.publicKey), toHex(g.publicKey));
  assert.is(toHex(again.hash), toHex(g.hash));
});

test('hand-built: the identity hash is the first 16 bytes of SHA-256 of the public key', () => {
  const sha = createHash('sha256').update(hex(PY.a_public)).digest('hex');
  assert.is(sha.slice(0, 32), PY.a_hash);
  assert.is(toHex(truncatedHash(hex(PY.a_public))), PY.a_hash);
  assert.is(toHex(publicIdentity(hex(PY.a_public))!.hash), PY.a_hash);
});

test('a public identity is exactly 64 bytes', () => {
  assert.is(publicIdentity(hex(PY.a_public).subarray(0, 63)), null);
  assert.is(publicIdentity(new Uint8Array(65)), null);
  assert.throws(() => identityFromPrivateKey(new Uint8Array(32)), /64 bytes/);
});

test('sign: Ed25519 is deterministic, so our signature equals Python\'s', () => {
  const a = identityFromPrivateKey(A_PRIVATE);
  const msg = new TextEncoder().encode('fieldbridge');
  assert.is(toHex(signMessage(a, msg)), PY.sign_a);
  assert.ok(verifySignature(publicIdentity(hex(PY.a_public))!, msg, hex(PY.sign_a)));
});

test('verify: a flipped bit, another message, another key or a short signature is false', () => {
  const a = publicIdentity(hex(PY.a_public))!;
  const b = publicIdentity(hex(PY.b_public))!;
  const msg = new TextEncoder().encode('fieldbridge');
  const sig = hex(PY.sign_a);
  for (let bit = 0; bit < 512; bit += 37) {
    const bad = sig.slice();
    bad[bit >> 3] ^= 1 << (bit & 7);
    assert.not.ok(verifySignature(a, msg, bad), `bit ${bit}`);
  }
  assert.not.ok(verifySignature(a, new TextEncoder().encode('fieldbridgE'), sig));
  assert.not.ok(verifySignature(b, msg, sig));
  assert.not.ok(verifySignature(a, msg, sig.subarray(0, 63)));
  // A public key that is not a curve point: false, not a throw.
  assert.not.ok(verifySignature({ publicKey: new Uint8Array(64).fill(0xff), hash: new Uint8Array(16) }, msg, sig));
});

test('hand-built: the lxmf.delivery name hash is SHA-256("lxmf.delivery") cut to 10 bytes', () => {
  const sha = createHash('sha256').update('lxmf.delivery', 'utf8').digest('hex');
  assert.is(sha.slice(0, 20), PY.lxmf_name_hash);
  assert.is(toHex(nameHash('lxmf.delivery')), PY.lxmf_name_hash);
  assert.is(toHex(LXMF_DELIVERY_NAME_HASH), '6ec60bc318e2c0f0d908');
});

test('destination hash: SHA-256(name hash + identity hash) cut to 16 bytes, as Python makes it', () => {
  const material = Buffer.concat([hex(PY.lxmf_name_hash), hex(PY.a_hash)]);
  assert.is(createHash('sha256').update(material).digest('hex').slice(0, 32), PY.a_delivery);
  assert.is(toHex(lxmfDeliveryHash(hex(PY.a_hash))), PY.a_delivery);
  assert.is(toHex(lxmfDeliveryHash(publicIdentity(hex(PY.b_public))!)), PY.b_delivery);
  assert.is(toHex(destinationHash('lxmf.delivery', hex(PY.b_hash))), PY.b_delivery);
  assert.throws(() => destinationHash('lxmf.delivery', new Uint8Array(15)), /16 bytes/);
});

test.run();
