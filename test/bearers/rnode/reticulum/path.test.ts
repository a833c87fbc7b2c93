import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodePacket } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { createPathRequest, decodePathRequest, PATH_REQUEST_DESTINATION, pathRequestKey } from '../../../../src/bearers/rnode/reticulum/path.ts';
import { hex, toHex } from './fixtures.ts';

// Path requests (docs/protocols/reticulum.md 9). The fixture is what Reticulum 1.4.2 packs for
// RNS.Packet(Destination(None, OUT, PLAIN, "rnstransport", "path", "request"), dest + tag):
// flags 08 (HEADER_1, BROADCAST, PLAIN, DATA), hops 00, the path request destination, context
// 00, then destination hash 00..0f and tag aa * 16.
const PY_PATH_REQUEST = '08006b9f66014d9853faab220fba47d0276100000102030405060708090a0b0c0d0e0faaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const DEST = hex('000102030405060708090a0b0c0d0e0f');
const TAG = hex('aa'.repeat(16));

test('the path request destination is the hash of the name hash of rnstransport.path.request alone', () => {
  assert.is(toHex(PATH_REQUEST_DESTINATION), '6b9f66014d9853faab220fba47d02761');
});

test('a path request is built as Reticulum builds it, and read back', () => {
  assert.is(toHex(createPathRequest(DEST, TAG)), PY_PATH_REQUEST);
  const p = decodePacket(hex(PY_PATH_REQUEST));
  assert.ok(p.ok);
  const r = decodePathRequest(p.packet);
  assert.ok(r.ok);
  assert.equal([toHex(r.request.destinationHash), r.request.requestingTransportId, toHex(r.request.tag)], [toHex(DEST), null, 'aa'.repeat(16)]);
  assert.is(pathRequestKey(r.request), toHex(DEST) + 'aa'.repeat(16));
});

test('a transport node\'s request carries its identity hash between destination and tag; long tags are cut to 16 bytes', () => {
  const transport = hex('bb'.repeat(16));
  const raw = hex('08006b9f66014d9853faab220fba47d0276100' + toHex(DEST) + toHex(transport) + 'cc'.repeat(20));
  const p = decodePacket(raw);
  assert.ok(p.ok);
  const r = decodePathRequest(p.packet);
  assert.ok(r.ok);
  assert.is(toHex(r.request.requestingTransportId!), 'bb'.repeat(16));
  assert.is(toHex(r.request.tag), 'cc'.repeat(16));
});

test('tagless requests, other destinations and other packet types are refused with a reason', () => {
  for (const raw of [
    '08006b9f66014d9853faab220fba47d0276100' + toHex(DEST), // no tag: Reticulum ignores it
    '08006b9f66014d9853faab220fba47d0276100' + '0102', // too short for a destination
    '0800' + '00'.repeat(16) + '00' + toHex(DEST) + toHex(TAG), // another PLAIN destination
    '00006b9f66014d9853faab220fba47d0276100' + toHex(DEST) + toHex(TAG), // SINGLE, not PLAIN
    '09006b9f66014d9853faab220fba47d0276100' + toHex(DEST) + toHex(TAG), // an announce
  ]) {
    const p = decodePacket(hex(raw));
    assert.ok(p.ok);
    const r = decodePathRequest(p.packet);
    assert.ok(!r.ok && r.code === 'ERR_RNS_PATH_REQUEST' && r.reason, raw);
  }
});

test.run();
