import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodePacket } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { decodePathRequest } from '../../../../src/bearers/rnode/reticulum/path.ts';
import { hex } from './fixtures.ts';
import { inputs, run } from './fuzz-helpers.ts';

// Seeded fuzz of the decoders that links, resources and path requests added: 10^6 inputs each
// (fuzz-helpers.ts). None may throw; every refusal carries a code and a reason.

const pathRequests = [
  '08006b9f66014d9853faab220fba47d0276100000102030405060708090a0b0c0d0e0faaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  '08006b9f66014d9853faab220fba47d0276100000102030405060708090a0b0c0d0e0fbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbcccccccccccccccccccccccccccccccc',
].map(hex);

test('fuzz: decodePathRequest on whatever decodes', () => {
  const counts = run('decodePathRequest', inputs(0x9a7b, pathRequests, 0.9, 120, true), (b) => {
    const p = decodePacket(b);
    return p.ok ? decodePathRequest(p.packet) : p;
  });
  assert.ok(counts.ok > 100_000 && counts.ERR_RNS_PATH_REQUEST > 10_000, JSON.stringify(counts));
});

test.run();
