import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeCommand, encodeCommand } from '../../../../src/bearers/meshcore/codec/commands.ts';
import { decodeRadioMessage, encodeRadioMessage, isPush } from '../../../../src/bearers/meshcore/codec/responses.ts';
import { commandFixtures, hex, KEY, radioFixtures, toHex } from './fixtures.ts';

// Every fixture three ways (docs/style.md habit 2): parse the hand-written bytes, generate
// them from the value, and round-trip the value through both.

for (const f of commandFixtures) {
  test(`command parse: ${f.name}`, () => assert.equal(decodeCommand(hex(f.wire)), f.value));
  test(`command generate: ${f.name}`, () => assert.is(toHex(encodeCommand(f.value)), toHex(hex(f.wire))));
  test(`command round trip: ${f.name}`, () => assert.equal(decodeCommand(encodeCommand(f.value)), f.value));
}

for (const f of radioFixtures) {
  test(`radio parse: ${f.name}`, () => assert.equal(decodeRadioMessage(hex(f.wire)), f.value));
  test(`radio generate: ${f.name}`, () => assert.is(toHex(encodeRadioMessage(f.value)), toHex(hex(f.wire))));
  test(`radio round trip: ${f.name}`, () => assert.equal(decodeRadioMessage(encodeRadioMessage(f.value)), f.value));
}

test('commands shorter than the firmware accepts are malformed, with the code and the lengths', () => {
  assert.equal(decodeCommand(hex('02 00 00 D2 02 96 49 A1 B2 C3 D4 E5 F6')), {
    type: 'malformed', code: 2, reason: 'CMD_SEND_TXT_MSG needs 14 bytes, got 13',
  });
  assert.equal(decodeCommand(hex('01 00 00')).type, 'malformed');
  assert.equal(decodeCommand(hex('0D 00 01')).type, 'malformed');
  assert.equal(decodeCommand(new Uint8Array(0)), { type: 'malformed', code: -1, reason: 'empty frame' });
});

test('radio messages shorter than the firmware writes them are malformed', () => {
  assert.equal(decodeRadioMessage(hex('82 78 56 34 12 E8 03')), { type: 'malformed', code: 0x82, reason: 'SEND_CONFIRMED needs 9 bytes, got 7' });
  assert.equal(decodeRadioMessage(hex('06 01 78 56')).type, 'malformed');
  assert.equal(decodeRadioMessage(hex('05 01 16')).type, 'malformed');
  assert.equal(decodeRadioMessage(hex('80 01 02')).type, 'malformed');
  assert.equal(decodeRadioMessage(hex('1B 19 00 00 01 FF FF FF 05 A1')), {
    type: 'malformed', code: 0x1b, reason: 'CHANNEL_DATA_RECV announces 5 bytes of data, has 1',
  });
  assert.equal(decodeCommand(hex('3E 00 03 11 22')).type, 'malformed', 'a path longer than the frame');
});

test('the document\'s 6-byte ack push is malformed only when shorter than the firmware\'s 9 bytes', () => {
  // companion_protocol.md "PACKET_ACK": 82 + 6 bytes = 7 bytes; the firmware sends 9.
  assert.is(decodeRadioMessage(hex('82 01 02 03 04 05 06')).type, 'malformed');
});

test('a DEVICE_INFO of version >= 3 cut short keeps only the version (as the document\'s parser does)', () => {
  assert.equal(decodeRadioMessage(hex('0D 0D 32 08')), { type: 'DEVICE_INFO', firmwareVersion: 13 });
});

test('names are cut to their 32-byte field with a NUL, at a character boundary', () => {
  const long = 'ä'.repeat(20); // 40 bytes of UTF-8
  const body = encodeRadioMessage({ type: 'CHANNEL_INFO', index: 2, name: long, secret: new Uint8Array(16) });
  assert.is(body.length, 50);
  const back = decodeRadioMessage(body);
  assert.is(back.type === 'CHANNEL_INFO' && back.name, 'ä'.repeat(15));
});

test('SNR is carried in quarter dB and clamped to a signed byte', () => {
  const m = encodeRadioMessage({ type: 'CHANNEL_MSG_RECV_V3', snr: 100, channelIndex: 0, pathLen: 0, txtType: 0, timestamp: 0, text: '' });
  assert.is(m[1], 0x7f);
});

test('isPush: codes from 0x80 are pushes, including unknown ones', () => {
  assert.ok(isPush({ type: 'MSG_WAITING' }));
  assert.ok(isPush({ type: 'SEND_CONFIRMED', ackCode: 1, roundTripMs: 2 }));
  assert.ok(isPush({ type: 'ADVERT', publicKey: KEY }));
  assert.not.ok(isPush({ type: 'SENT', flood: false, expectedAck: 1, suggestedTimeoutMs: 1 }));
  assert.ok(isPush({ type: 'unknown', code: 0x88, body: hex('88') }));
  assert.not.ok(isPush({ type: 'unknown', code: 0x1b, body: hex('1B') }));
});

test.run();
