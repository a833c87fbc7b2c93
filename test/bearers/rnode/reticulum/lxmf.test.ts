import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LXMF_FIELD } from '../../../../src/bearers/rnode/reticulum/constants.ts';
import { decrypt } from '../../../../src/bearers/rnode/reticulum/crypto.ts';
import { identityFromPrivateKey, publicIdentity } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import {
  LXMF_ENCRYPTED_PACKET_MAX_CONTENT, LXMF_OPPORTUNISTIC_MAX_CONTENT, LXMF_PACKET_MAX_PLAINTEXT, opportunisticPlaintext, packMessage, unpackMessage,
  unpackOpportunistic, verifyMessage,
} from '../../../../src/bearers/rnode/reticulum/lxmf.ts';
import { createOpportunisticPacket, openOpportunisticPacket } from '../../../../src/bearers/rnode/reticulum/opportunistic.ts';
import { decodePacket, type Packet } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { A_PRIVATE, B_PRIVATE, hex, PY, PY_SIZES, RATCHET_PRIVATE, toHex } from './fixtures.ts';

// LXMF messages (docs/protocols/reticulum.md 7). PY.lxm_* are messages from B to A packed by
// LXMF's own LXMessage.pack (vectors.py).

const a = identityFromPrivateKey(A_PRIVATE);
const b = identityFromPrivateKey(B_PRIVATE);
const aPublic = publicIdentity(hex(PY.a_public))!;
const bPublic = publicIdentity(hex(PY.b_public))!;
const utf8 = (x: Uint8Array) => new TextDecoder().decode(x);

function packet(wire: Uint8Array): Packet {
  const r = decodePacket(wire);
  if (!r.ok) throw new Error(r.reason);
  return r.packet;
}

test('parse: Python\'s message gives every part, the message id, and verifies with B\'s key', () => {
  const r = unpackMessage(hex(PY.lxm_packed));
  if (!r.ok) throw new Error(r.reason);
  const m = r.message;
  assert.is(toHex(m.destinationHash), PY.a_delivery);
  assert.is(toHex(m.sourceHash), PY.b_delivery);
  assert.is(m.timestamp, 1700000000.5);
  assert.is(utf8(m.title), 'Greeting');
  assert.is(utf8(m.content), 'Hello from B');
  assert.equal([...m.fields], [[LXMF_FIELD.RENDERER, 2]]);
  assert.is(m.stamp, null);
  assert.is(toHex(m.hash), PY.lxm_hash);
  assert.equal(verifyMessage(m, bPublic), { ok: true });
});

test('parse: a five-element payload carries a stamp; the id still covers four elements', () => {
  const r = unpackMessage(hex(PY.lxm_stamped_packed));
  if (!r.ok) throw new Error(r.reason);
  assert.is(toHex(r.message.stamp!), PY.lxm_stamped_stamp);
  assert.is(toHex(r.message.hash), PY.lxm_stamped_hash);
  assert.is(utf8(r.message.title), '');
  assert.is(r.message.fields.size, 0);
  assert.ok(verifyMessage(r.message, bPublic).ok);
});

test('generate: our packing of the same message is byte for byte LXMF\'s', () => {
  const m = packMessage({
    destinationHash: hex(PY.a_delivery), source: b, timestamp: 1700000000.5, title: 'Greeting', content: 'Hello from B',
    fields: new Map([[LXMF_FIELD.RENDERER, 2]]),
  });
  assert.is(toHex(m.packed), PY.lxm_packed);
  assert.is(toHex(m.hash), PY.lxm_hash);
  const s = packMessage({ destinationHash: hex(PY.a_delivery), source: b, timestamp: 1700000001.25, content: 'Stamped', stamp: hex(PY.lxm_stamped_stamp) });
  assert.is(toHex(s.packed), PY.lxm_stamped_packed);
  assert.is(toHex(s.hash), PY.lxm_stamped_hash);
});

test('hand-built: a whole-second timestamp is still a float64 (cb), as Python packs a float', () => {
  const m = packMessage({ destinationHash: hex(PY.b_delivery), source: a, timestamp: 1700000000, content: '' });
  // 94 | cb 41 d9 54 fc 40 00 00 00 | c4 00 | c4 00 | 80 (1700000000 = 0x41D954FC40000000)
  assert.is(toHex(m.packed.subarray(96)), '94cb41d954fc40000000c400c40080');
});

test('round trip: pack, unpack, verify; fields with nested values survive', () => {
  const fields = new Map<number | string, unknown>([[LXMF_FIELD.THREAD, hex('0102')], [0x40, { '0': hex('aa'), '1': 'ok' }], [0xfb, [1, -2, 3.5]]]);
  const m = packMessage({ destinationHash: hex(PY.b_delivery), source: a, timestamp: 1.5, title: hex('00ff'), content: 'hi', fields });
  const r = unpackMessage(m.packed);
  if (!r.ok) throw new Error(r.reason);
  assert.equal(r.message.fields, fields);
  assert.is(toHex(r.message.title), '00ff');
  assert.is(toHex(r.message.hash), toHex(m.hash));
  assert.ok(verifyMessage(r.message, aPublic).ok);
});

test('opportunistic: Python\'s packet to A opens, unpacks and verifies; its data lacks the destination hash', () => {
  const p = packet(hex(PY.lxm_packet));
  const r = openOpportunisticPacket(a, p);
  if (!r.ok) throw new Error(r.reason);
  assert.is(toHex(r.message.hash), PY.lxm_hash);
  assert.is(r.ratchetId, null);
  assert.ok(verifyMessage(r.message, bPublic).ok);
  // What the packet carries is exactly the packed message after its first 16 bytes.
  assert.is(toHex(decrypt(a, p.data)!), PY.lxm_packed.slice(32));
  assert.is(toHex(opportunisticPlaintext(hex(PY.lxm_packed))), PY.lxm_packed.slice(32));
  assert.ok(unpackOpportunistic(hex(PY.a_delivery), decrypt(a, p.data)!).ok);
});

test('opportunistic: we make the packet B would, to A or to A\'s ratchet, and it opens', () => {
  const made = createOpportunisticPacket({ source: b, recipient: aPublic, timestamp: 1700000000.5, title: 'Greeting', content: 'Hello from B', fields: new Map([[15, 2]]) });
  assert.is(toHex(made.messageHash), PY.lxm_hash);
  const p = packet(made.packet);
  assert.is(toHex(p.hash), toHex(made.packetHash));
  assert.is(p.data.length, hex(PY.lxm_packet).length - 19);
  const r = openOpportunisticPacket(a, p);
  assert.ok(r.ok && verifyMessage(r.message, bPublic).ok);
  const viaRatchet = createOpportunisticPacket({ source: b, recipient: aPublic, ratchet: hex(PY.ratchet_public), timestamp: 2, content: 'x' });
  const r2 = openOpportunisticPacket(a, packet(viaRatchet.packet), { ratchets: [RATCHET_PRIVATE] });
  assert.is(r2.ok && toHex(r2.ratchetId!), PY.ratchet_id);
  const via = createOpportunisticPacket({ source: b, recipient: aPublic, timestamp: 2, content: 'x', transportId: hex('ab'.repeat(16)) });
  assert.is(toHex(packet(via.packet).transportId!), 'ab'.repeat(16));
});

test('sizes: 287 content bytes fill ENCRYPTED_MDU exactly, as LXMF makes them; 288 is refused', () => {
  assert.is(LXMF_PACKET_MAX_PLAINTEXT, 383);
  assert.is(LXMF_OPPORTUNISTIC_MAX_CONTENT, 287);
  assert.is(LXMF_ENCRYPTED_PACKET_MAX_CONTENT, 295);
  const fit = createOpportunisticPacket({ source: b, recipient: aPublic, timestamp: 1700000000, content: 'x'.repeat(287) });
  assert.is(fit.packet.length, PY_SIZES['287'].packet); // 483
  assert.is(packMessage({ destinationHash: hex(PY.a_delivery), source: b, timestamp: 1700000000, content: 'x'.repeat(287) }).packed.length - 16, PY_SIZES['287'].plaintext);
  assert.is(packMessage({ destinationHash: hex(PY.a_delivery), source: b, timestamp: 1700000000, content: 'x'.repeat(295) }).packed.length - 16, PY_SIZES['295'].plaintext);
  assert.is(fit.packet.length + 16, 499); // still within the MTU when forwarded in HEADER_2 form
  assert.throws(() => createOpportunisticPacket({ source: b, recipient: aPublic, timestamp: 1700000000, content: 'x'.repeat(288) }), /at most 383/);
});

test('bad input: forged signature, wrong sender, wrong destination, undecryptable packet', () => {
  const r = unpackMessage(hex(PY.lxm_packed));
  if (!r.ok) throw new Error(r.reason);
  const forged = { ...r.message, signature: r.message.signature.map((x, i) => (i === 5 ? x ^ 1 : x)) };
  assert.equal(verifyMessage(forged, bPublic), { ok: false, code: 'ERR_LXMF_SIGNATURE', reason: 'the message signature does not verify' });
  const v = verifyMessage(r.message, aPublic);
  assert.is(!v.ok && v.code, 'ERR_LXMF_SOURCE');
  // Tampered content changes the id, so B's signature no longer verifies.
  const tampered = hex(PY.lxm_packed);
  tampered[tampered.length - 4] ^= 0x20;
  const t = unpackMessage(tampered);
  assert.ok(t.ok && !verifyMessage(t.message, bPublic).ok);
  const p = packet(hex(PY.lxm_packet));
  const o1 = openOpportunisticPacket(b, p);
  assert.is(!o1.ok && o1.code, 'ERR_LXMF_DESTINATION');
  const o2 = openOpportunisticPacket(a, { ...p, data: p.data.map((x, i) => (i === 60 ? x ^ 1 : x)) });
  assert.is(!o2.ok && o2.code, 'ERR_LXMF_DECRYPT');
  const o3 = openOpportunisticPacket(a, { ...p, packetType: 1 });
  assert.is(!o3.ok && o3.code, 'ERR_LXMF_DESTINATION');
});

test('bad input: truncated messages and malformed payloads are refused with a reason', () => {
  const packed = hex(PY.lxm_packed);
  for (let n = 0; n < packed.length; n++) {
    const r = unpackMessage(packed.subarray(0, n));
    assert.not.ok(r.ok, `cut to ${n}`);
    if (!r.ok) assert.ok(r.code === 'ERR_LXMF_TRUNCATED' || r.code === 'ERR_LXMF_PAYLOAD', r.code);
  }
  const head = packed.subarray(0, 96);
  const payloads: [string, RegExp][] = [
    ['93cb41d954fc40000000c400c400', /4 or 5 elements/], // three elements
    ['80', /not a msgpack array/],
    ['94c0c400c40080', /timestamp/],
    ['94cb41d954fc40000000' + '00c40080', /title/],
    ['94cb41d954fc40000000c400c4000c', /fields/],
    ['94cb41d954fc40000000c400c40080ff', /bytes follow/],
    ['94cb41d954fc40000000c400c40081c1c0', /fields|malformed/],
  ];
  for (const [payload, reason] of payloads) {
    const r = unpackMessage(Uint8Array.from([...head, ...hex(payload)]));
    assert.is(!r.ok && r.code, 'ERR_LXMF_PAYLOAD', payload);
    assert.match(!r.ok ? r.reason : '', reason);
  }
  // Fields as nil are accepted as empty, as Python's set_fields(None).
  const nilFields = unpackMessage(Uint8Array.from([...head, ...hex('94cb41d954fc40000000c400c400c0')]));
  assert.ok(nilFields.ok && nilFields.message.fields.size === 0);
});

test.run();
