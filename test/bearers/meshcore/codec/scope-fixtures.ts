import type { Command } from '../../../../src/bearers/meshcore/codec/commands.ts';
import type { RadioMessage } from '../../../../src/bearers/meshcore/codec/responses.ts';
import { type Fixture, hex } from './fixtures.ts';

// The flood-scope frames, written out byte by byte from meshcore-dev/MeshCore
// examples/companion_radio/MyMesh.cpp (companion-v1.17.1, d9296435): CMD_SET_FLOOD_SCOPE_KEY
// 54 (0x36) + variant byte [+ 16-byte key], CMD_SET_DEFAULT_FLOOD_SCOPE 63 (0x3F) + 31-byte
// name field + 16-byte key, CMD_GET_DEFAULT_FLOOD_SCOPE 64 (0x40), RESP_CODE_DEFAULT_FLOOD_SCOPE
// 28 (0x1C) written as 1 or 48 bytes. docs/protocols/meshcore.md 6.12. The key of the public
// region "de-by" is the first 16 bytes of SHA-256("#de-by"), computed with Python's hashlib,
// not with our code.

export const DE_BY_KEY_HEX = 'A2 21 3D 1E 45 9C 16 BC EB E2 65 81 42 AD 89 DE';
export const DE_BY_KEY = hex(DE_BY_KEY_HEX);
/** "de-by" in a 31-byte NUL-padded field. */
const DE_BY_FIELD = `64 65 2D 62 79 ${Array(26).fill('00').join(' ')}`;

export const scopeCommandFixtures: Fixture<Command>[] = [
  { name: 'CMD_SET_FLOOD_SCOPE_KEY with the key of "de-by"', wire: `36 00 ${DE_BY_KEY_HEX}`, value: { type: 'SET_FLOOD_SCOPE_KEY', variant: 0, key: DE_BY_KEY } },
  // "reset scope override": a variant-0 frame shorter than 18 bytes.
  { name: 'CMD_SET_FLOOD_SCOPE_KEY without a key (clear)', wire: '36 00', value: { type: 'SET_FLOOD_SCOPE_KEY', variant: 0 } },
  // "ver 12+": send un-scoped.
  { name: 'CMD_SET_FLOOD_SCOPE_KEY variant 1 (unscoped)', wire: '36 01', value: { type: 'SET_FLOOD_SCOPE_KEY', variant: 1 } },
  { name: 'CMD_SET_DEFAULT_FLOOD_SCOPE "de-by"', wire: `3F ${DE_BY_FIELD} ${DE_BY_KEY_HEX}`, value: { type: 'SET_DEFAULT_FLOOD_SCOPE', scope: { name: 'de-by', key: DE_BY_KEY } } },
  { name: 'CMD_SET_DEFAULT_FLOOD_SCOPE without a scope (clear)', wire: '3F', value: { type: 'SET_DEFAULT_FLOOD_SCOPE', scope: null } },
  { name: 'CMD_GET_DEFAULT_FLOOD_SCOPE', wire: '40', value: { type: 'GET_DEFAULT_FLOOD_SCOPE' } },
];

export const scopeRadioFixtures: Fixture<RadioMessage>[] = [
  { name: 'RESP_CODE_DEFAULT_FLOOD_SCOPE "de-by"', wire: `1C ${DE_BY_FIELD} ${DE_BY_KEY_HEX}`, value: { type: 'DEFAULT_FLOOD_SCOPE', scope: { name: 'de-by', key: DE_BY_KEY } } },
  { name: 'RESP_CODE_DEFAULT_FLOOD_SCOPE, none', wire: '1C', value: { type: 'DEFAULT_FLOOD_SCOPE', scope: null } },
];
