import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ANNOUNCE_MIN_LENGTH, announceRandomHash, createAnnounce, validateAnnounce } from '../../../../src/bearers/rnode/reticulum/announce.ts';
import { identityFromPrivateKey, signMessage, x25519PublicFromPrivate } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import { decodeLxmfAppData, encodeLxmfAppData } from '../../../../src/bearers/rnode/reticulum/lxmf.ts';
import { decodePacket, type Packet } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { B_PRIVATE, hex, PY, toHex } from './fixtures.ts';

// Announces (docs/protocols/reticulum.md 4) and LXMF's announce app data (7.4).

const RANDOM = hex('0102030405' + (1700000000).toString(16).padStart(10, '0'));
const RATCHET_B = x25519PublicFromPrivate(hex('22'.repeat(32)));

function packet(wire: Uint8Array): Packet {
  const r = decodePacket(wire);
  if (!r.ok) throw new Error(r.reason);
  return r.packet;
}

test('parse: B\'s announce as Python made it validates and gives key, name hash, app data, time', () => {
  const r = validateAnnounce(packet(hex(PY.announce_b)));
  if (!r.ok) throw new Error(r.reason);
  const a = r.announce;
  assert.is(toHex(a.destinationHash), PY.b_delivery);
  assert.is(toHex(a.identity.publicKey), PY.b_public);
  assert.is(toHex(a.identity.hash), PY.b_hash);
  assert.is(toHex(a.nameHash), PY.lxmf_name_hash);
  assert.is(toHex(a.randomHash), toHex(RANDOM));
  assert.is(a.emittedAt, 1700000000);
  assert.is(a.ratchet, null);
  assert.is(toHex(a.appData!), PY.announce_b_app_data);
  assert.is(a.hops, 0);
  assert.is(a.transportId, null);
  assert.is(a.pathResponse, false);
});

test('parse: an announce with the context flag set carries a ratchet', () => {
  const r = validateAnnounce(packet(hex(PY.announce_b_ratchet)));
  if (!r.ok) throw new Error(r.reason);
  assert.is(toHex(r.announce.ratchet!), toHex(RATCHET_B));
  assert.is(toHex(r.announce.appData!), PY.announce_b_app_data);
});

test('generate: our announce for B with Python\'s random hash and app data is byte for byte Python\'s', () => {
  const identity = identityFromPrivateKey(B_PRIVATE);
  const common = { identity, name: 'lxmf.delivery', now: 0, randomHash: RANDOM, appData: hex(PY.announce_b_app_data) };
  assert.is(toHex(createAnnounce(common)), PY.announce_b);
  assert.is(toHex(createAnnounce({ ...common, ratchet: RATCHET_B })), PY.announce_b_ratchet);
});

test('round trip: an announce we make validates; path responses and empty app data survive', () => {
  const identity = identityFromPrivateKey(B_PRIVATE);
  const wire = createAnnounce({ identity, name: 'lxmf.delivery', now: 1_800_000_000.7, pathResponse: true });
  const r = validateAnnounce(packet(wire));
  if (!r.ok) throw new Error(r.reason);
  assert.is(r.announce.emittedAt, 1_800_000_000);
  assert.is(r.announce.pathResponse, true);
  assert.is(r.announce.appData, null);
  assert.is(wire.length, 19 + ANNOUNCE_MIN_LENGTH);
});

test('hand-built: the random hash is 5 random bytes then big-endian Unix seconds', () => {
  assert.is(toHex(announceRandomHash(0x0102030405, hex('aabbccddee'))), 'aabbccddee0102030405');
});

test('bad input: a flipped bit anywhere in the announce data is refused', () => {
  const wire = hex(PY.announce_b);
  // In the key or the name hash it changes the address the data implies; in the random hash,
  // the signature or the app data it breaks the signature.
  for (let at = 19; at < wire.length; at++) {
    const bad = wire.slice();
    bad[at] ^= 0x01;
    const r = validateAnnounce(packet(bad));
    const expected = at < 19 + 74 ? 'ERR_RNS_ANNOUNCE_DESTINATION' : 'ERR_RNS_ANNOUNCE_SIGNATURE';
    assert.is(!r.ok && r.code, expected, `byte ${at}`);
  }
  // And in the destination hash itself.
  const bad = wire.slice();
  bad[5] ^= 0x80;
  const r = validateAnnounce(packet(bad));
  assert.is(!r.ok && r.code, 'ERR_RNS_ANNOUNCE_DESTINATION');
});

test('bad input: a valid signature over another destination hash is a destination mismatch', () => {
  const identity = identityFromPrivateKey(B_PRIVATE);
  const p = packet(createAnnounce({ identity, name: 'lxmf.delivery', now: 0, randomHash: RANDOM }));
  // Another destination's signed announce with B's lxmf.delivery address put in front: the
  // signature covers the address, so it fails even though the name hash fits.
  const other = packet(createAnnounce({ identity, name: 'lxmf.propagation', now: 0, randomHash: RANDOM }));
  const r0 = validateAnnounce({ ...other, destinationHash: p.destinationHash, data: Uint8Array.from([...other.data.subarray(0, 64), ...p.data.subarray(64, 74), ...other.data.subarray(74)]) });
  assert.is(!r0.ok && r0.code, 'ERR_RNS_ANNOUNCE_SIGNATURE');
  // A key holder can only claim another address by signing the claim: the hash check catches it.
  const nh = p.data.subarray(64, 74);
  const rnd = p.data.subarray(74, 84);
  const fakeDest = hex('00'.repeat(16));
  const sig = signMessage(identity, Uint8Array.from([...fakeDest, ...identity.publicKey, ...nh, ...rnd]));
  const lie: Packet = { ...p, destinationHash: fakeDest, data: Uint8Array.from([...identity.publicKey, ...nh, ...rnd, ...sig]) };
  const r = validateAnnounce(lie);
  assert.is(!r.ok && r.code, 'ERR_RNS_ANNOUNCE_DESTINATION');
});

test('bad input: truncated announce data, wrong packet type, non-SINGLE destination', () => {
  const p = packet(hex(PY.announce_b));
  for (const n of [0, 64, 147]) {
    const r = validateAnnounce({ ...p, data: p.data.subarray(0, n) });
    assert.is(!r.ok && r.code, 'ERR_RNS_ANNOUNCE_TRUNCATED', `length ${n}`);
  }
  const pr = packet(hex(PY.announce_b_ratchet));
  const r1 = validateAnnounce({ ...pr, data: pr.data.subarray(0, 179) });
  assert.is(!r1.ok && r1.code, 'ERR_RNS_ANNOUNCE_TRUNCATED');
  const r2 = validateAnnounce({ ...p, packetType: 0 });
  assert.is(!r2.ok && r2.code, 'ERR_RNS_ANNOUNCE_TYPE');
  const r3 = validateAnnounce({ ...p, destinationType: 2 });
  assert.is(!r3.ok && r3.code, 'ERR_RNS_ANNOUNCE_TYPE');
  // The ratchet flag set on an announce without one shifts every field: the signature fails.
  const r4 = validateAnnounce({ ...p, contextFlag: 1 });
  assert.not.ok(r4.ok);
});

test('LXMF app data: Python\'s [b"Peer B", None, [0]] gives name, no stamp cost, compression', () => {
  const r = decodeLxmfAppData(hex(PY.announce_b_app_data));
  assert.equal(r, { ok: true, displayName: 'Peer B', stampCost: null, supportsCompression: true, legacy: false });
});

test('LXMF app data: the old bare UTF-8 name, nothing, and a stamp cost', () => {
  assert.equal(decodeLxmfAppData(new TextEncoder().encode(PY.legacy_app_data_name)), { ok: true, displayName: 'Old Node', stampCost: null, supportsCompression: true, legacy: true });
  assert.equal(decodeLxmfAppData(null), { ok: true, displayName: null, stampCost: null, supportsCompression: true, legacy: false });
  // Hand-built: 92 = fixarray of 2, c4 02 "Hi" = bin 8, 08 = stamp cost 8 (no function list).
  assert.equal(decodeLxmfAppData(hex('92c402486908')), { ok: true, displayName: 'Hi', stampCost: 8, supportsCompression: true, legacy: false });
  // NULs and surrounding spaces are dropped, as LXMF does for display.
  assert.equal(decodeLxmfAppData(hex('91c40420416200')), { ok: true, displayName: 'Ab', stampCost: null, supportsCompression: true, legacy: false });
});

test('LXMF app data: ours is [name, cost or nil, []] and reads back', () => {
  // Hand-built: 93, c4 0a "Field Gate", c0 (no stamp cost), 90 (no functions: we take no compressed resources).
  assert.is(toHex(encodeLxmfAppData('Field Gate')), '93c40a4669656c642047617465c090');
  assert.is(toHex(encodeLxmfAppData(null, 12)), '93c00c90');
  assert.is(toHex(encodeLxmfAppData('x', 255)), '93c40178c090'); // LXMF announces 1-254 only
  assert.equal(decodeLxmfAppData(encodeLxmfAppData('Field Gate')), { ok: true, displayName: 'Field Gate', stampCost: null, supportsCompression: false, legacy: false });
});

test('LXMF app data: a broken msgpack array is refused with a reason', () => {
  for (const bad of ['93c40a46', '92c40141', 'dc00', '91c1', '9100ff']) {
    const r = decodeLxmfAppData(hex(bad));
    assert.is(!r.ok && r.code, 'ERR_LXMF_APP_DATA', bad);
  }
});

test.run();
