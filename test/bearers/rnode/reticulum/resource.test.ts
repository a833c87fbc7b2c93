import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  assembleResource, decodeAdvertisement, decodeRequest, decodeResourceProof, encodeAdvertisement, encodeRequest, HASHMAP_MAX_LEN, mapHash,
  prepareResource, resourceProof, resourceSdu, transferSize,
} from '../../../../src/bearers/rnode/reticulum/resource.ts';
import { hex, toHex } from './fixtures.ts';
import { PY_LINK } from './link-fixtures.ts';

// Resources (docs/protocols/reticulum.md 11) against what Reticulum 1.4.2 made (link-fixtures.ts).

const key = hex(PY_LINK.derived_key);

test('an advertisement reads as Reticulum packed it, and ours packs to the same bytes', () => {
  const d = decodeAdvertisement(hex(PY_LINK.advertisement));
  assert.ok(d.ok);
  const a = d.advertisement;
  assert.equal([a.t, a.d, a.n, a.i, a.l, a.q, a.f], [5168, 5115, 12, 1, 1, null, 1]);
  assert.equal([toHex(a.h), toHex(a.r), toHex(a.m).length], [toHex(Uint8Array.from({ length: 32 }, (_, i) => i)), '01020304', 96]);
  assert.is(toHex(encodeAdvertisement(a)), PY_LINK.advertisement);
  assert.is(HASHMAP_MAX_LEN, PY_LINK.hashmap_max_len);
});

test('part requests, map hashes and proofs as Reticulum makes them', () => {
  const h = Uint8Array.from({ length: 32 }, (_, i) => i);
  const mapHashes = [0, 4, 8, 12].map((i) => Uint8Array.from({ length: 4 }, (_, k) => i + k));
  assert.is(toHex(encodeRequest({ exhausted: false, lastMapHash: null, resourceHash: h, mapHashes })), PY_LINK.request);
  const r = decodeRequest(hex(PY_LINK.request));
  assert.ok(r.ok && !r.request.exhausted && r.request.mapHashes.length === 4 && toHex(r.request.resourceHash) === toHex(h));
  assert.is(toHex(mapHash(new TextEncoder().encode('abc'), hex('01020304'))), PY_LINK.map_hash_of_abc);
  assert.is(toHex(resourceProof(new TextEncoder().encode('hello'), h)), PY_LINK.resource_proof_of_hello);
  const p = decodeResourceProof(hex(PY_LINK.resource_proof_of_hello));
  assert.ok(p.ok && toHex(p.resourceHash) === toHex(h));
});

test('a prepared resource: parts of one SDU, a hashmap per part, and it assembles back', () => {
  const data = Uint8Array.from({ length: 5115 }, (_, i) => (i * 7) & 0xff);
  const r = prepareResource(data, key, resourceSdu(500));
  assert.is(r.advertisement.t, transferSize(data.length));
  assert.is(r.parts.length, Math.ceil(r.advertisement.t / 464));
  assert.ok(r.parts.every((p, i) => p.length === (i < r.parts.length - 1 ? 464 : r.advertisement.t - 464 * i)));
  assert.is(r.advertisement.m.length, 4 * r.parts.length);
  assert.ok(r.parts.every((p, i) => toHex(mapHash(p, r.advertisement.r)) === toHex(r.advertisement.m.subarray(4 * i, 4 * i + 4))));
  const back = assembleResource(r.parts, key, r.advertisement);
  assert.ok(back && toHex(back) === toHex(data));
  assert.is(toHex(resourceProof(data, r.advertisement.h).subarray(32)), toHex(r.expectedProof));
  // A part out of order or damaged: the assembly does not check out.
  assert.is(assembleResource([r.parts[1], r.parts[0], ...r.parts.slice(2)], key, r.advertisement), null);
});

test('malformed advertisements, requests and proofs are refused with reasons', () => {
  for (const raw of ['', 'c0', '90', '81a174cd1430', PY_LINK.advertisement.replace('a16dc430', 'a16dc431')]) {
    const d = decodeAdvertisement(hex(raw));
    assert.ok(!d.ok && d.code === 'ERR_RNS_RESOURCE_ADV' && d.reason, raw);
  }
  for (const raw of ['', '01', '00' + '11'.repeat(31), '00' + '11'.repeat(32) + 'aabb']) {
    const r = decodeRequest(hex(raw));
    assert.ok(!r.ok && r.code === 'ERR_RNS_RESOURCE_REQUEST' && r.reason, raw);
  }
  const p = decodeResourceProof(new Uint8Array(63));
  assert.ok(!p.ok && p.code === 'ERR_RNS_RESOURCE_PROOF');
});

test.run();
