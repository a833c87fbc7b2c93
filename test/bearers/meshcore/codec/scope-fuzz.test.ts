import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeCommand, encodeCommand } from '../../../../src/bearers/meshcore/codec/commands.ts';
import { decodeRadioMessage, encodeRadioMessage } from '../../../../src/bearers/meshcore/codec/responses.ts';
import { parseScope } from '../../../../src/bearers/meshcore/codec/scope.ts';
import { splitAddress } from '../../../../src/bearers/meshcore/scope.ts';
import { hex } from './fixtures.ts';
import { scopeCommandFixtures, scopeRadioFixtures } from './scope-fixtures.ts';
import { rng } from '../../../helpers/rng.ts';

// Seeded fuzz of the flood-scope parsers (docs/style.md habit 2): 10^6 inputs, mutations and
// cuts of the scope frames through both message decoders, and random strings through the
// scope names and addresses a delivery may carry. Nothing may throw; what decodes must encode
// again; a region that parses has a 16-byte key and a name of at most 30 bytes.

const INPUTS = 1_000_000;
const seeds = [...scopeCommandFixtures, ...scopeRadioFixtures].map((f) => hex(f.wire));
const alphabet = ['#', '*', '$', '-', ' ', 'a', 'Z', '0', '9', ',', 'ä', '€', '\u0000', '\t', 'de-by', 'broadcast', 'a1b2c3d4e5f6', '##'];

test(`fuzz: ${INPUTS.toLocaleString('en')} inputs through the flood-scope decoders and the scope parsers`, () => {
  const random = rng(0x5c0e);
  let frames = 0;
  let regions = 0;
  for (let n = 0; n < INPUTS; n++) {
    if (random() < 0.6) {
      const base = seeds[Math.floor(random() * seeds.length)];
      const input = base.slice(0, Math.min(base.length, Math.floor(random() * (base.length + 2))));
      const flips = Math.floor(random() * 4);
      for (let i = 1; i < flips && input.length > 1; i++) input[1 + Math.floor(random() * (input.length - 1))] = Math.floor(random() * 256);
      const c = decodeCommand(input);
      if (c.type !== 'unknown' && c.type !== 'malformed') {
        encodeCommand(c);
        frames++;
      }
      const m = decodeRadioMessage(input);
      if (m.type !== 'unknown' && m.type !== 'malformed') encodeRadioMessage(m);
    } else {
      const parts = Math.floor(random() * 6);
      let s = '';
      for (let i = 0; i < parts; i++) s += alphabet[Math.floor(random() * alphabet.length)];
      if (random() < 0.2) s += String.fromCharCode(Math.floor(random() * 0x3000));
      const p = parseScope(s);
      if (p.type === 'region') {
        assert.is(p.scope.key.length, 16);
        assert.ok(new TextEncoder().encode(p.scope.name).length <= 30, s);
        regions++;
      }
      const a = splitAddress(s);
      if (!('problem' in a)) assert.ok(!a.to.includes('#') || a.scope === null, s);
    }
  }
  assert.ok(frames > INPUTS / 10, `only ${frames} frames decoded to known commands`);
  assert.ok(regions > INPUTS / 100, `only ${regions} strings were regions`);
});

test.run();
