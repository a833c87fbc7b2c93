import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CONTEXT, contextName, ENCRYPTED_MDU, MDU, MTU, PACKET_TYPE } from '../../../../src/bearers/rnode/reticulum/constants.ts';
import { decodePacket, encodePacket, hashablePart, type PacketFields, packetHash } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { hex, PY, toHex } from './fixtures.ts';

// Packets (docs/protocols/reticulum.md 2): Python-made packets parsed, generated and round
// tripped; a hand-built header; HEADER_2 made from a HEADER_1 packet the way Transport.outbound
// inserts a packet into transport; the packet hash; bad input.

type Fixture = { name: string; wire: string; fields: Omit<PacketFields, 'data'> & { data?: string }; hash?: string };

const fixtures: Fixture[] = [
  {
    name: 'announce (Python)', wire: PY.announce_b, hash: PY.announce_b_hash,
    fields: { headerType: 0, contextFlag: 0, transportType: 0, destinationType: 0, packetType: 1, hops: 0, transportId: null, destinationHash: hex(PY.b_delivery), context: 0 },
  },
  {
    name: 'announce with ratchet: context flag set (Python)', wire: PY.announce_b_ratchet, hash: PY.announce_b_ratchet_hash,
    fields: { headerType: 0, contextFlag: 1, transportType: 0, destinationType: 0, packetType: 1, hops: 0, transportId: null, destinationHash: hex(PY.b_delivery), context: 0 },
  },
  {
    name: 'LXMF data packet (Python)', wire: PY.lxm_packet, hash: PY.lxm_packet_hash,
    fields: { headerType: 0, contextFlag: 0, transportType: 0, destinationType: 0, packetType: 0, hops: 0, transportId: null, destinationHash: hex(PY.a_delivery), context: 0 },
  },
  {
    name: 'implicit proof (Python)', wire: PY.proof_implicit,
    fields: { headerType: 0, contextFlag: 0, transportType: 0, destinationType: 0, packetType: 3, hops: 0, transportId: null, destinationHash: hex(PY.lxm_packet_hash.slice(0, 32)), context: 0 },
  },
  {
    // Hand-built: flags 0x4A = 01 0 0 10 10: HEADER_2, no context flag, BROADCAST, PLAIN,
    // LINKREQUEST; hops 5; transport id 11..; destination 22..; context 0x0B; data "hi".
    name: 'hand-built HEADER_2', wire: '4a05' + '11'.repeat(16) + '22'.repeat(16) + '0b' + '6869',
    fields: {
      headerType: 1, contextFlag: 0, transportType: 0, destinationType: 2, packetType: 2, hops: 5, transportId: hex('11'.repeat(16)),
      destinationHash: hex('22'.repeat(16)), context: 0x0b, data: '6869',
    },
  },
];

for (const f of fixtures) {
  const wire = hex(f.wire);
  const headerLength = f.fields.transportId ? 35 : 19;
  const data = f.fields.data ?? f.wire.slice(headerLength * 2);
  test(`parse: ${f.name}`, () => {
    const r = decodePacket(wire);
    if (!r.ok) throw new Error(r.reason);
    const { hash, ...rest } = r.packet;
    assert.equal(rest, { ...f.fields, data: hex(data) });
    if (f.hash) assert.is(toHex(hash), f.hash);
  });
  test(`generate: ${f.name}`, () => {
    const out = encodePacket({
      destinationHash: f.fields.destinationHash, data: hex(data), packetType: f.fields.packetType, destinationType: f.fields.destinationType,
      context: f.fields.context, contextFlag: f.fields.contextFlag, hops: f.fields.hops, transportId: f.fields.transportId,
    });
    // encodePacket sets TRANSPORT with a transport id, as Reticulum does; the hand-built one says BROADCAST.
    const expected = f.fields.transportId ? hex(f.wire).map((b, i) => (i === 0 ? b | 0x10 : b)) : wire;
    assert.is(toHex(out), toHex(expected));
  });
  test(`round trip: ${f.name}`, () => {
    const r = decodePacket(wire);
    if (!r.ok) throw new Error(r.reason);
    const again = decodePacket(encodePacket(r.packet));
    if (!again.ok) throw new Error(again.reason);
    // Only the transport type may differ: encodePacket sets TRANSPORT whenever it writes a transport id.
    assert.equal({ ...again.packet, transportType: r.packet.transportType }, r.packet);
  });
}

test('hand-built: the packet hash is SHA-256 of (flags & 0x0F) + everything after the hops byte', () => {
  const wire = hex(PY.lxm_packet);
  const manual = createHash('sha256').update(Buffer.concat([Buffer.of(wire[0] & 0x0f), wire.subarray(2)])).digest('hex');
  assert.is(manual, PY.lxm_packet_hash);
  assert.is(toHex(packetHash(wire)), PY.lxm_packet_hash);
});

test('HEADER_2 as Transport.outbound makes it: same packet hash, transport id decoded', () => {
  const h1 = hex(PY.lxm_packet);
  const via = hex('ab'.repeat(16));
  // new flags = HEADER_2 << 6 | TRANSPORT << 4 | (flags & 0x0F); transport id after the hops byte.
  const h2 = Uint8Array.from([(1 << 6) | (1 << 4) | (h1[0] & 0x0f), h1[1], ...via, ...h1.subarray(2)]);
  const r = decodePacket(h2);
  if (!r.ok) throw new Error(r.reason);
  assert.is(r.packet.headerType, 1);
  assert.is(r.packet.transportType, 1);
  assert.is(toHex(r.packet.transportId!), toHex(via));
  assert.is(toHex(r.packet.destinationHash), PY.a_delivery);
  assert.is(toHex(r.packet.hash), PY.lxm_packet_hash);
  assert.is(toHex(hashablePart(h2)), toHex(hashablePart(h1)));
  // Our encoder builds the same bytes from the same fields.
  const ours = encodePacket({ destinationHash: r.packet.destinationHash, data: r.packet.data, transportId: via });
  assert.is(toHex(ours), toHex(h2));
});

test('hops change nothing in the hash; a forwarded packet keeps its identity', () => {
  const wire = hex(PY.lxm_packet);
  wire[1] = 7;
  assert.is(toHex(packetHash(wire)), PY.lxm_packet_hash);
});

test('sizes: MTU 500, MDU 464, ENCRYPTED_MDU 383 (Reticulum.py, Packet.py)', () => {
  assert.is(MTU, 500);
  assert.is(MDU, 464);
  assert.is(ENCRYPTED_MDU, 383);
});

test('context names: NONE, PATH_RESPONSE, LRPROOF named; undefined values are UNKNOWN', () => {
  assert.is(contextName(CONTEXT.NONE), 'NONE');
  assert.is(contextName(0x0b), 'PATH_RESPONSE');
  assert.is(contextName(0xff), 'LRPROOF');
  assert.is(contextName(0x42), 'UNKNOWN');
});

test('bad input: every truncation of every fixture is refused with a reason, never thrown', () => {
  for (const f of fixtures) {
    const wire = hex(f.wire);
    const header = f.fields.transportId ? 35 : 19;
    for (let n = 0; n < header; n++) {
      const r = decodePacket(wire.subarray(0, n));
      assert.not.ok(r.ok, `${f.name} cut to ${n}`);
      if (!r.ok) assert.is(r.code, 'ERR_RNS_PACKET_TRUNCATED');
    }
    // A bare header (no data) is a valid, empty packet, as in Packet.unpack.
    assert.ok(decodePacket(wire.subarray(0, header)).ok);
  }
});

test('bad input: over the MTU, hops 128 and up, and the IFAC bit are refused', () => {
  const over = new Uint8Array(MTU + 1);
  const r1 = decodePacket(over);
  assert.is(!r1.ok && r1.code, 'ERR_RNS_PACKET_TOO_LONG');
  const hops = hex(PY.proof_implicit);
  hops[1] = 128;
  const r2 = decodePacket(hops);
  assert.is(!r2.ok && r2.code, 'ERR_RNS_PACKET_HOPS');
  hops[1] = 127;
  assert.ok(decodePacket(hops).ok);
  const ifac = hex(PY.proof_implicit);
  ifac[0] |= 0x80;
  const r3 = decodePacket(ifac);
  assert.is(!r3.ok && r3.code, 'ERR_RNS_PACKET_IFAC');
  assert.match(!r3.ok ? r3.reason : '', /IFAC/);
});

test('encodePacket refuses what Reticulum would not send', () => {
  const d = hex(PY.a_delivery);
  assert.throws(() => encodePacket({ destinationHash: d.subarray(0, 15), data: new Uint8Array(0) }), /16 bytes/);
  assert.throws(() => encodePacket({ destinationHash: d, data: new Uint8Array(MTU - 18) }), /at most 500/);
  assert.ok(encodePacket({ destinationHash: d, data: new Uint8Array(MTU - 19) }).length === MTU);
  assert.throws(() => encodePacket({ destinationHash: d, data: new Uint8Array(0), packetType: 4 }), /packetType/);
  assert.throws(() => encodePacket({ destinationHash: d, data: new Uint8Array(0), hops: 128 }), /hops/);
  assert.is(encodePacket({ destinationHash: d, data: new Uint8Array(0), packetType: PACKET_TYPE.PROOF })[0], 0x03);
});

test.run();
