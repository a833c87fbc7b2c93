import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { identityFromPrivateKey, publicIdentity } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import { decodePacket, type Packet } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { createProof, proofDestination, validateProof } from '../../../../src/bearers/rnode/reticulum/proof.ts';
import { A_PRIVATE, B_PRIVATE, hex, PY, toHex } from './fixtures.ts';

// Delivery proofs (docs/protocols/reticulum.md 5). The Python proofs are A's for the LXMF
// packet B sent it (PY.lxm_packet); here B is the sender checking them.

const a = identityFromPrivateKey(A_PRIVATE);
const aPublic = publicIdentity(hex(PY.a_public))!;
const sent = hex(PY.lxm_packet_hash);

function packet(wire: Uint8Array): Packet {
  const r = decodePacket(wire);
  if (!r.ok) throw new Error(r.reason);
  return r.packet;
}

test('parse: Python\'s implicit and explicit proofs validate against the packet B sent', () => {
  assert.equal(validateProof(packet(hex(PY.proof_implicit)), sent, aPublic), { ok: true, explicit: false });
  assert.equal(validateProof(packet(hex(PY.proof_explicit)), sent, aPublic), { ok: true, explicit: true });
});

test('generate: our proofs for that packet are byte for byte Python\'s', () => {
  assert.is(toHex(createProof(a, sent)), PY.proof_implicit);
  assert.is(toHex(createProof(a, sent, { explicit: true })), PY.proof_explicit);
});

test('hand-built: a proof is flags 03, hops 00, the first 16 bytes of the packet hash, context 00', () => {
  const wire = createProof(a, sent);
  assert.is(toHex(wire.subarray(0, 19)), '0300' + PY.lxm_packet_hash.slice(0, 32) + '00');
  assert.is(wire.length, 19 + 64);
  assert.is(toHex(proofDestination(sent)), PY.lxm_packet_hash.slice(0, 32));
  assert.is(createProof(a, sent, { explicit: true }).length, 19 + 96);
});

test('round trip: a proof we make for the packet hash decodePacket computed validates', () => {
  const received = packet(hex(PY.lxm_packet));
  assert.ok(validateProof(packet(createProof(a, received.hash)), sent, aPublic).ok);
});

test('bad input: forged, for another packet, from another key, wrong lengths, link proofs', () => {
  const implicit = packet(hex(PY.proof_implicit));
  const explicit = packet(hex(PY.proof_explicit));
  const code = (r: ReturnType<typeof validateProof>) => (r.ok ? 'ok' : r.code);
  const forged = implicit.data.slice();
  forged[10] ^= 0x40;
  assert.is(code(validateProof({ ...implicit, data: forged }, sent, aPublic)), 'ERR_RNS_PROOF_SIGNATURE');
  assert.is(code(validateProof(implicit, sent, publicIdentity(hex(PY.b_public))!)), 'ERR_RNS_PROOF_SIGNATURE');
  const other = sent.slice();
  other[31] ^= 1; // same first 16 bytes, another packet
  assert.is(code(validateProof(implicit, other, aPublic)), 'ERR_RNS_PROOF_SIGNATURE');
  assert.is(code(validateProof(explicit, other, aPublic)), 'ERR_RNS_PROOF_HASH');
  other[0] ^= 1;
  assert.is(code(validateProof(implicit, other, aPublic)), 'ERR_RNS_PROOF_DESTINATION');
  for (const n of [0, 63, 65, 95, 97]) {
    const data = Uint8Array.from({ length: n }, (_, i) => explicit.data[i % explicit.data.length]);
    assert.is(code(validateProof({ ...explicit, data }, sent, aPublic)), 'ERR_RNS_PROOF_LENGTH', `length ${n}`);
  }
  assert.is(code(validateProof({ ...implicit, packetType: 0 }, sent, aPublic)), 'ERR_RNS_PROOF_TYPE');
  assert.is(code(validateProof({ ...implicit, context: 0xff }, sent, aPublic)), 'ERR_RNS_PROOF_TYPE');
  assert.is(code(validateProof({ ...implicit, destinationType: 3 }, sent, aPublic)), 'ERR_RNS_PROOF_TYPE');
  assert.throws(() => createProof(identityFromPrivateKey(B_PRIVATE), sent.subarray(0, 16)), /32 bytes/);
});

test.run();
