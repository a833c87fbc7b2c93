import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeCommand, encodeCommand } from '../../../../src/bearers/meshcore/codec/commands.ts';
import { CMD, PUSH_CODE, RESP_CODE } from '../../../../src/bearers/meshcore/codec/constants.ts';
import { encodeFrame, FrameDecoder } from '../../../../src/bearers/meshcore/codec/frame.ts';
import { decodeRadioMessage, encodeRadioMessage } from '../../../../src/bearers/meshcore/codec/responses.ts';
import { commandFixtures, hex, radioFixtures } from './fixtures.ts';
import { rng } from '../../../helpers/rng.ts';

// Seeded fuzz (docs/style.md habit 2): 10^6 inputs, random bytes and mutations of the
// fixtures, through the frame decoders and both message decoders. Nothing may throw, what
// decodes to a known message must encode again, and the frame decoder must still find a
// clean frame afterwards.


const INPUTS = 1_000_000;
const codes = [...Object.values(CMD), ...Object.values(RESP_CODE), ...Object.values(PUSH_CODE), 0x3c, 0x3e];
const seeds = [...commandFixtures, ...radioFixtures].map((f) => hex(f.wire));
const framedSeeds = seeds.map((s) => encodeFrame('from-radio', s));

test(`fuzz: ${INPUTS.toLocaleString('en')} inputs through the frame and message decoders without a throw`, () => {
  const random = rng(0x6d63);
  const toRadio = new FrameDecoder('to-radio');
  const fromRadio = new FrameDecoder('from-radio');
  const buffer = new Uint8Array(200);
  let known = 0;
  for (let n = 0; n < INPUTS; n++) {
    let input: Uint8Array;
    const kind = random();
    if (kind < 0.4) {
      const length = Math.floor(random() * 48);
      for (let i = 0; i < length; i++) buffer[i] = Math.floor(random() * 256);
      if (length > 0 && random() < 0.7) buffer[0] = codes[Math.floor(random() * codes.length)];
      input = buffer.subarray(0, length);
    } else {
      const base = (kind < 0.8 ? seeds : framedSeeds)[Math.floor(random() * seeds.length)];
      input = base.slice(0, Math.min(base.length, 1 + Math.floor(random() * (base.length + 4))));
      const flips = Math.floor(random() * 4);
      for (let i = 0; i < flips && input.length > 0; i++) input[Math.floor(random() * input.length)] = Math.floor(random() * 256);
    }
    const c = decodeCommand(input);
    if (c.type !== 'unknown' && c.type !== 'malformed') {
      encodeCommand(c);
      known++;
    }
    const m = decodeRadioMessage(input);
    if (m.type !== 'unknown' && m.type !== 'malformed') encodeRadioMessage(m);
    for (const e of toRadio.push(input)) if (e.type === 'frame') decodeCommand(e.body);
    for (const e of fromRadio.push(input)) if (e.type === 'frame') decodeRadioMessage(e.body);
  }
  assert.ok(known > INPUTS / 10, `only ${known} inputs decoded to known commands`);
  // Still usable: after a reset, a clean frame comes through.
  fromRadio.reset();
  assert.equal(fromRadio.push(hex('3E 01 00 83')), [{ type: 'frame', body: hex('83') }]);
  toRadio.reset();
  assert.equal(toRadio.push(hex('3C 01 00 0A')), [{ type: 'frame', body: hex('0A') }]);
});

test.run();
