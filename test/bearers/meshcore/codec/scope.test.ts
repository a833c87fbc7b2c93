import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeCommand, encodeCommand } from '../../../../src/bearers/meshcore/codec/commands.ts';
import { decodeRadioMessage, encodeRadioMessage } from '../../../../src/bearers/meshcore/codec/responses.ts';
import { parseScope, regionKey, regionNameProblem, transportCode } from '../../../../src/bearers/meshcore/codec/scope.ts';
import { hex, toHex } from './fixtures.ts';
import { DE_BY_KEY, DE_BY_KEY_HEX, scopeCommandFixtures, scopeRadioFixtures } from './scope-fixtures.ts';

// The flood-scope frames three ways (docs/style.md habit 2), and the region key and transport
// code against values computed with Python's hashlib and hmac from the firmware's definitions
// (TransportKeyStore.cpp getAutoKeyFor, calcTransportCode; docs/protocols/meshcore.md 6.12).

for (const f of scopeCommandFixtures) {
  test(`command parse: ${f.name}`, () => assert.equal(decodeCommand(hex(f.wire)), f.value));
  test(`command generate: ${f.name}`, () => assert.is(toHex(encodeCommand(f.value)), toHex(hex(f.wire))));
  test(`command round trip: ${f.name}`, () => assert.equal(decodeCommand(encodeCommand(f.value)), f.value));
}

for (const f of scopeRadioFixtures) {
  test(`radio parse: ${f.name}`, () => assert.equal(decodeRadioMessage(hex(f.wire)), f.value));
  test(`radio generate: ${f.name}`, () => assert.is(toHex(encodeRadioMessage(f.value)), toHex(hex(f.wire))));
  test(`radio round trip: ${f.name}`, () => assert.equal(decodeRadioMessage(encodeRadioMessage(f.value)), f.value));
}

test('a key of 32 bytes (meshcore.js passes the whole SHA-256) is read as its first 16, as the firmware does', () => {
  const whole = hex(`36 00 ${DE_BY_KEY_HEX} 1D 4A 0B 5E 2F 9C 8A 70 11 22 33 44 55 66 77 88`);
  assert.equal(decodeCommand(whole), { type: 'SET_FLOOD_SCOPE_KEY', variant: 0, key: DE_BY_KEY });
  // 2 to 17 bytes: no key, the scope is cleared.
  assert.equal(decodeCommand(hex('36 00 A2 21 3D')), { type: 'SET_FLOOD_SCOPE_KEY', variant: 0 });
  assert.equal(decodeCommand(hex('36')), { type: 'malformed', code: 0x36, reason: 'CMD_SET_FLOOD_SCOPE_KEY needs 2 bytes, got 1' });
  assert.equal(decodeCommand(hex('36 07')), { type: 'SET_FLOOD_SCOPE_KEY', variant: 7 });
});

test('a default-scope frame of fewer than 48 bytes clears the scope (the firmware reads none)', () => {
  assert.equal(decodeCommand(hex('3F 64 65 2D 62 79 00')), { type: 'SET_DEFAULT_FLOOD_SCOPE', scope: null });
});

test('a DEFAULT_FLOOD_SCOPE answer of 2 to 47 bytes is malformed (the firmware writes 1 or 48)', () => {
  assert.equal(decodeRadioMessage(hex('1C 64 65')), { type: 'malformed', code: 0x1c, reason: 'DEFAULT_FLOOD_SCOPE needs 1 or 48 bytes, got 3' });
});

test('region keys: SHA-256 of "#" and the name, first 16 bytes; a leading # is the same region', () => {
  assert.is(toHex(regionKey('de-by')), DE_BY_KEY_HEX);
  assert.is(toHex(regionKey('#de-by')), DE_BY_KEY_HEX);
  assert.is(toHex(regionKey('nl-ut')), '3B ED A3 38 1A 99 23 12 19 79 9A 7D 58 5F 27 69');
  assert.is(toHex(regionKey('test')), '9C D8 FC F2 2A 47 33 3B 59 1D 96 A2 B8 48 B7 3F');
});

test('transport codes: HMAC-SHA256 over type and payload, first two bytes little-endian, 0000 and FFFF reserved', () => {
  assert.is(transportCode(DE_BY_KEY, 2, new TextEncoder().encode('hello')), 0xb18c);
  // Payloads whose HMAC starts 00 00 and FF FF (found with Python): the firmware moves them to 1 and FFFE.
  assert.is(transportCode(DE_BY_KEY, 5, hex('CC 5B 01 00')), 0x0001);
  assert.is(transportCode(DE_BY_KEY, 5, hex('0A 0D 00 00')), 0xfffe);
});

test('scope choices: a public region by name, * for none, bad names with their reason', () => {
  assert.equal(parseScope('de-by'), { type: 'region', scope: { name: 'de-by', key: DE_BY_KEY } });
  assert.equal(parseScope(' #de-by '), { type: 'region', scope: { name: 'de-by', key: DE_BY_KEY } });
  assert.equal(parseScope('*'), { type: 'unscoped' });
  assert.is(parseScope('').type, 'invalid');
  assert.match(regionNameProblem('a b') ?? '', /letters, digits/);
  assert.match(regionNameProblem('x'.repeat(31)) ?? '', /at most 30 bytes/);
  assert.match(regionNameProblem('$secret') ?? '', /private region/);
  assert.is(regionNameProblem('Zürich-Nord'), null);
});

test.run();
