import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CONTEXT, PACKET_TYPE } from '../../../../src/bearers/rnode/reticulum/constants.ts';
import { tokenDecrypt } from '../../../../src/bearers/rnode/reticulum/crypto.ts';
import { lxmfDeliveryHash } from '../../../../src/bearers/rnode/reticulum/destination.ts';
import { identityFromPrivateKey, x25519PublicFromPrivate } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import {
  createIdentify, createLinkPacketProof, createLinkProof, createLinkRequest, decodeLinkRequest, decodeRtt, deriveLinkKey, encodeLinkPacket,
  encodeRtt, isLinkClose, LINK_MDU, linkPacketProofHash, readIdentify, signallingBytes, validateLinkProof,
} from '../../../../src/bearers/rnode/reticulum/link.ts';
import { decodePacket, type Packet } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { A_PRIVATE, hex, toHex } from './fixtures.ts';
import { PY_LINK } from './link-fixtures.ts';

// Links (docs/protocols/reticulum.md 10) against what Reticulum 1.4.2 made (link-fixtures.ts).

const a = identityFromPrivateKey(A_PRIVATE);
const initiatorKeys = identityFromPrivateKey(hex('33'.repeat(32) + '44'.repeat(32)));
const aLinkPrivate = hex('55'.repeat(32));
const linkId = hex(PY_LINK.link_id);
const packet = (s: string): Packet => {
  const p = decodePacket(hex(s));
  if (!p.ok) throw new Error(p.reason);
  return p.packet;
};

test('sizes and signalling as Reticulum has them', () => {
  assert.is(LINK_MDU, PY_LINK.link_mdu);
  assert.is(toHex(signallingBytes(500)), PY_LINK.signalling_500);
});

test('a link request: ours is byte for byte Reticulum\'s, and theirs reads back with its link id', () => {
  const ours = createLinkRequest(lxmfDeliveryHash(a), initiatorKeys);
  assert.is(toHex(ours.packet), PY_LINK.link_request);
  assert.is(toHex(ours.linkId), PY_LINK.link_id);
  const r = decodeLinkRequest(packet(PY_LINK.link_request));
  assert.ok(r.ok);
  assert.is(toHex(r.request.linkId), PY_LINK.link_id);
  assert.is(toHex(r.request.peer.publicKey), toHex(initiatorKeys.publicKey));
  assert.equal([r.request.mtu, r.request.mode], [500, 1]);
});

test('the link key: both sides derive Reticulum\'s', () => {
  assert.is(toHex(deriveLinkKey(aLinkPrivate, initiatorKeys.publicKey.subarray(0, 32), linkId)!), PY_LINK.derived_key);
  assert.is(toHex(deriveLinkKey(initiatorKeys, x25519PublicFromPrivate(aLinkPrivate), linkId)!), PY_LINK.derived_key);
});

test('the link proof: ours is Reticulum\'s, and it validates against the destination key only', () => {
  assert.is(toHex(createLinkProof(a, linkId, aLinkPrivate, 500)), PY_LINK.link_proof);
  const v = validateLinkProof(packet(PY_LINK.link_proof), linkId, a);
  assert.ok(v.ok);
  assert.equal([toHex(v.peerPublic), v.mtu], [toHex(x25519PublicFromPrivate(aLinkPrivate)), 500]);
  const other = validateLinkProof(packet(PY_LINK.link_proof), linkId, initiatorKeys);
  assert.ok(!other.ok && other.code === 'ERR_RNS_LINK_PROOF');
  const elsewhere = validateLinkProof(packet(PY_LINK.link_proof), new Uint8Array(16), a);
  assert.ok(!elsewhere.ok && /another link/.test(elsewhere.reason));
});

test('link packets: RTT, data and keep-alive as Reticulum sends them', () => {
  const key = hex(PY_LINK.derived_key);
  const rtt = packet(PY_LINK.rtt_packet);
  assert.equal([rtt.context, rtt.destinationType], [CONTEXT.LRRTT, 3]);
  assert.is(decodeRtt(tokenDecrypt(key, rtt.data)!), 0.25);
  assert.is(toHex(encodeRtt(0.25)), PY_LINK.rtt_plaintext);
  const data = packet(PY_LINK.data_packet);
  assert.is(new TextDecoder().decode(tokenDecrypt(key, data.data)!), 'hello over a link');
  assert.is(toHex(data.hash), PY_LINK.data_packet_hash);
  assert.is(toHex(encodeLinkPacket(linkId, CONTEXT.KEEPALIVE, Uint8Array.of(0xff))), PY_LINK.keepalive_packet);
  assert.ok(isLinkClose(linkId, linkId) && !isLinkClose(new Uint8Array(16), linkId));
});

test('proofs of link packets and LINKIDENTIFY: ours match Reticulum\'s and theirs verify', () => {
  assert.is(toHex(createLinkPacketProof(a, linkId, hex(PY_LINK.data_packet_hash))), PY_LINK.data_proof);
  const p = packet(PY_LINK.data_proof);
  assert.equal([p.packetType, p.context], [PACKET_TYPE.PROOF, CONTEXT.NONE]);
  assert.is(toHex(linkPacketProofHash(p, a)!), PY_LINK.data_packet_hash);
  assert.is(linkPacketProofHash(p, initiatorKeys), null);
  assert.is(toHex(createIdentify(a, linkId)), PY_LINK.identify_plaintext);
  assert.is(toHex(readIdentify(hex(PY_LINK.identify_plaintext), linkId)!.hash), toHex(a.hash));
  assert.is(readIdentify(hex(PY_LINK.identify_plaintext), new Uint8Array(16)), null);
});

test('link requests that are refused, with reasons', () => {
  const good = hex(PY_LINK.link_request);
  const cases: Array<[string, Uint8Array]> = [
    ['no signalling is fine, 63 bytes is not', good.slice(0, good.length - 4)],
    ['mode 0 (AES-128) is not enabled', Uint8Array.from([...good.slice(0, good.length - 3), 0x00, 0x01, 0xf4])],
  ];
  for (const [why, raw] of cases) {
    const r = decodeLinkRequest(packet(toHex(raw)));
    assert.ok(!r.ok && r.code === 'ERR_RNS_LINK_REQUEST' && r.reason, why);
  }
  const bare = decodeLinkRequest(packet(toHex(good.slice(0, good.length - 3))));
  assert.ok(bare.ok && bare.request.mtu === null && toHex(bare.request.linkId) === PY_LINK.link_id, 'the id leaves signalling out');
  const notRequest = decodeLinkRequest(packet(PY_LINK.data_packet));
  assert.ok(!notRequest.ok);
});

test.run();
