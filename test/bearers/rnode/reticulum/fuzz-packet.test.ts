import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { validateAnnounce } from '../../../../src/bearers/rnode/reticulum/announce.ts';
import { publicIdentity } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import { decodePacket } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { validateProof } from '../../../../src/bearers/rnode/reticulum/proof.ts';
import { hex, PY } from './fixtures.ts';
import { inputs, run } from './fuzz-helpers.ts';

// Seeded fuzz of the packet, announce and proof decoders: 10^6 inputs each (fuzz-helpers.ts).

const packets = [PY.announce_b, PY.announce_b_ratchet, PY.lxm_packet, PY.proof_implicit, PY.proof_explicit].map(hex);
const aPublic = publicIdentity(hex(PY.a_public))!;

test('fuzz: decodePacket', () => {
  const counts = run('decodePacket', inputs(0x7e71c, packets, 0.5, 560, true), (b) => decodePacket(b));
  assert.ok(counts.ok > 100_000 && counts.ERR_RNS_PACKET_TRUNCATED > 1000, JSON.stringify(counts));
});

test('fuzz: validateAnnounce on whatever decodes', () => {
  // Mutations of the two announces only; random packets are announces one time in 16.
  const counts = run('validateAnnounce', inputs(0xa22, packets.slice(0, 2), 0.03, 260, true), (b) => {
    const p = decodePacket(b);
    return p.ok ? validateAnnounce(p.packet) : p;
  });
  assert.ok(counts.ERR_RNS_ANNOUNCE_SIGNATURE > 1000 && counts.ERR_RNS_ANNOUNCE_DESTINATION > 1000, JSON.stringify(counts));
});

test('fuzz: validateProof on whatever decodes, against the packet A proved', () => {
  const sent = hex(PY.lxm_packet_hash);
  const counts = run('validateProof', inputs(0x9f00f, packets.slice(3), 0.06, 140, true), (b) => {
    const p = decodePacket(b);
    return p.ok ? validateProof(p.packet, sent, aPublic) : p;
  });
  assert.ok(counts.ok > 0 && counts.ERR_RNS_PROOF_SIGNATURE > 1000 && counts.ERR_RNS_PROOF_DESTINATION > 1000, JSON.stringify(counts));
});

test('after the fuzz every fixture still decodes as before', () => {
  const p = decodePacket(hex(PY.announce_b));
  assert.ok(p.ok && validateAnnounce(p.packet).ok);
  const q = decodePacket(hex(PY.proof_explicit));
  assert.ok(q.ok && validateProof(q.packet, hex(PY.lxm_packet_hash), aPublic).ok);
});

test.run();
