import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CONTEXT, DESTINATION_TYPE, PACKET_TYPE } from '../../../../src/bearers/rnode/reticulum/constants.ts';
import { tokenDecrypt } from '../../../../src/bearers/rnode/reticulum/crypto.ts';
import { identityFromPrivateKey } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import { decodeLinkRequest, decodeRtt, linkPacketProofHash, readIdentify, validateLinkProof } from '../../../../src/bearers/rnode/reticulum/link.ts';
import { decodePacket } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { decodePathRequest } from '../../../../src/bearers/rnode/reticulum/path.ts';
import {
  assembleResource, decodeAdvertisement, decodeRequest, decodeResourceProof, mapHash,
} from '../../../../src/bearers/rnode/reticulum/resource.ts';
import { A_PRIVATE, hex } from './fixtures.ts';
import { inputs, type Outcome, run } from './fuzz-helpers.ts';
import { PY_LINK } from './link-fixtures.ts';

// Seeded fuzz of the decoders that path requests, links and resources added: 10^6 inputs each
// (fuzz-helpers.ts). None may throw; every refusal carries a code and a reason.

const a = identityFromPrivateKey(A_PRIVATE);
const key = hex(PY_LINK.derived_key);
const linkId = hex(PY_LINK.link_id);

const pathRequests = [
  '08006b9f66014d9853faab220fba47d0276100000102030405060708090a0b0c0d0e0faaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  '08006b9f66014d9853faab220fba47d0276100000102030405060708090a0b0c0d0e0fbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbcccccccccccccccccccccccccccccccc',
].map(hex);

test('fuzz: decodePathRequest on whatever decodes', () => {
  const counts = run('decodePathRequest', inputs(0x9a7b, pathRequests, 0.9, 120, true), (b) => {
    const p = decodePacket(b);
    return p.ok ? decodePathRequest(p.packet) : p;
  });
  assert.ok(counts.ok > 100_000 && counts.ERR_RNS_PATH_REQUEST > 10_000, JSON.stringify(counts));
});

test('fuzz: decodeLinkRequest and validateLinkProof on whatever decodes', () => {
  const seeds = [hex(PY_LINK.link_request), hex(PY_LINK.link_proof)];
  const counts = run('link handshake', inputs(0x11f0, seeds, 0.3, 200, true), (b) => {
    const p = decodePacket(b);
    if (!p.ok) return p;
    return p.packet.packetType === PACKET_TYPE.PROOF ? validateLinkProof(p.packet, linkId, a) : decodeLinkRequest(p.packet);
  });
  assert.ok(counts.ok > 1000 && counts.ERR_RNS_LINK_REQUEST > 1000 && counts.ERR_RNS_LINK_PROOF > 1000, JSON.stringify(counts));
});

/** What the endpoint does with a packet on a link, as far as parsing goes: proofs are read,
 *  encrypted contexts decrypted and read by their own decoder. */
function linkPacket(b: Uint8Array): Outcome | null {
  const d = decodePacket(b);
  if (!d.ok) return d;
  const p = d.packet;
  if (p.destinationType !== DESTINATION_TYPE.LINK) return null;
  if (p.packetType === PACKET_TYPE.PROOF) {
    if (p.context === CONTEXT.RESOURCE_PRF) return decodeResourceProof(p.data);
    return linkPacketProofHash(p, a) ? { ok: true } : null;
  }
  if (p.context === CONTEXT.RESOURCE) return assembleResource([p.data], key, { h: new Uint8Array(32), r: mapHash(p.data, linkId) }) ? { ok: true } : null;
  if (p.context === CONTEXT.KEEPALIVE) return null;
  const plain = tokenDecrypt(key, p.data);
  if (!plain) return null;
  switch (p.context) {
    case CONTEXT.LRRTT: return decodeRtt(plain) === null ? null : { ok: true };
    case CONTEXT.LINKIDENTIFY: return readIdentify(plain, linkId) ? { ok: true } : null;
    case CONTEXT.RESOURCE_ADV: return decodeAdvertisement(plain);
    case CONTEXT.RESOURCE_REQ: return decodeRequest(plain);
    default: return { ok: true };
  }
}

test('fuzz: link packets (RTT, data, keep-alive, proofs) as the endpoint reads them', () => {
  const seeds = [PY_LINK.rtt_packet, PY_LINK.data_packet, PY_LINK.keepalive_packet, PY_LINK.data_proof].map(hex);
  const counts = run('link packets', inputs(0x1a4c, seeds, 0.5, 200, true), linkPacket);
  assert.ok(counts.ok > 1000 && counts.null > 100_000, JSON.stringify(counts));
});

test('fuzz: decodeAdvertisement', () => {
  const counts = run('decodeAdvertisement', inputs(0xad7, [hex(PY_LINK.advertisement)], 0.7, 200), decodeAdvertisement);
  assert.ok(counts.ok > 10_000 && counts.ERR_RNS_RESOURCE_ADV > 100_000, JSON.stringify(counts));
});

test('fuzz: decodeRequest and decodeResourceProof', () => {
  const seeds = [hex(PY_LINK.request), hex(PY_LINK.resource_proof_of_hello)];
  const counts = run('resource requests and proofs', inputs(0x2e9, seeds, 0.7, 120), (b) => (b.length === 64 ? decodeResourceProof(b) : decodeRequest(b)));
  assert.ok(counts.ok > 10_000 && counts.ERR_RNS_RESOURCE_REQUEST > 100_000, JSON.stringify(counts));
});

test('fuzz: resource parts (map hash, then assembly) never throw', () => {
  const part = hex(PY_LINK.data_packet).subarray(19);
  const counts = run('resource parts', inputs(0x9a27, [part], 0.1, 480), (b) => {
    mapHash(b, linkId);
    return assembleResource([b], key, { h: new Uint8Array(32), r: linkId.subarray(0, 4) }) ? { ok: true } : null;
  });
  assert.ok(counts.null > 900_000, JSON.stringify(counts));
});

test('after the fuzz every fixture still reads as before', () => {
  const r = decodePacket(hex(PY_LINK.link_request));
  assert.ok(r.ok && decodeLinkRequest(r.packet).ok);
  assert.ok(decodeAdvertisement(hex(PY_LINK.advertisement)).ok);
});

test.run();
