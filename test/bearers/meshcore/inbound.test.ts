import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addressOf, contactReport, inboundMessage, isAddress } from '../../../src/bearers/meshcore/inbound.ts';

// What the bridge stores of MeshCore messages and contacts (issue 21 items 3 and 5).

const prefix = Uint8Array.of(0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6);

test('a contact message comes from the sender\'s 12-digit key prefix, with SNR, route and a dedupe key of sender, time and text', () => {
  const f = inboundMessage({ type: 'CONTACT_MSG_RECV_V3', snr: -2.5, pubKeyPrefix: prefix, pathLen: 2, txtType: 0, timestamp: 1000, text: 'hi' })!;
  assert.is(f.from, 'a1b2c3d4e5f6');
  assert.equal(f.meta, { snr_db: -2.5, route: 'flood', path_len: 2, txt_type: 0, sender_timestamp: 1000 });
  const again = inboundMessage({ type: 'CONTACT_MSG_RECV', pubKeyPrefix: prefix, pathLen: 0xff, txtType: 0, timestamp: 1000, text: 'hi' })!;
  assert.is(again.dedupeKey, f.dedupeKey, 'the same message in the other format is the same message');
  assert.is(again.meta.route, 'direct');
  const other = inboundMessage({ type: 'CONTACT_MSG_RECV', pubKeyPrefix: prefix, pathLen: 0xff, txtType: 0, timestamp: 1001, text: 'hi' })!;
  assert.is.not(other.dedupeKey, f.dedupeKey);
});

test('a channel message is split into the sender name and the text; without a name it comes from its channel', () => {
  const f = inboundMessage({ type: 'CHANNEL_MSG_RECV', channelIndex: 2, pathLen: 0, txtType: 0, timestamp: 5, text: 'Bob: hello: world' })!;
  assert.equal([f.from, f.text, f.channel, f.to, f.meta.sender_name], ['Bob', 'hello: world', 2, 'broadcast', 'Bob']);
  const bare = inboundMessage({ type: 'CHANNEL_MSG_RECV', channelIndex: 1, pathLen: 0, txtType: 0, timestamp: 5, text: 'no name here' })!;
  assert.equal([bare.from, bare.text], ['channel:1', 'no name here']);
});

test('responses that are no message give null', () => {
  assert.is(inboundMessage({ type: 'NO_MORE_MESSAGES' }), null);
});

test('addresses and contact reports', () => {
  assert.is(addressOf(Uint8Array.from({ length: 32 }, (_, i) => i)), '000102030405');
  assert.ok(isAddress('a1b2c3d4e5f6'));
  assert.ok(isAddress('A1B2C3D4E5F6' + '00'.repeat(26)));
  assert.not.ok(isAddress('a1b2c3'));
  assert.not.ok(isAddress('broadcast'));
  const report = contactReport({
    publicKey: Uint8Array.from({ length: 32 }, (_, i) => i), type: 1, flags: 0, outPathLen: 0x42, outPath: new Uint8Array(64), name: 'carol',
    lastAdvert: 0, latitude: 52_500_000, longitude: 13_400_000, lastmod: 1_767_225_600,
  });
  assert.equal(report, {
    id: '000102030405', network: 'meshcore', long_name: 'carol', hops_away: 2, last_heard_at: '2026-01-01T00:00:00.000Z', position: { latitude: 52.5, longitude: 13.4 },
  });
});

test.run();
