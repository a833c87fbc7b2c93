import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decryptFor } from '../../../../src/bearers/rnode/reticulum/crypto.ts';
import { identityFromPrivateKey } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import { decodeLxmfAppData, unpackMessage } from '../../../../src/bearers/rnode/reticulum/lxmf.ts';
import { skipObject } from '../../../../src/bearers/rnode/reticulum/msgpack.ts';
import { openOpportunisticPacket } from '../../../../src/bearers/rnode/reticulum/opportunistic.ts';
import { decodePacket } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { A_PRIVATE, hex, PY } from './fixtures.ts';
import { inputs, N, run } from './fuzz-helpers.ts';

// Seeded fuzz of decryption and the LXMF decoders: 10^6 inputs each (fuzz-helpers.ts).

const a = identityFromPrivateKey(A_PRIVATE);

test('fuzz: decryptFor', () => {
  const data = [hex(PY.lxm_packet).subarray(19), hex(PY.token_for_a), hex(PY.token_for_a_ratchet)];
  const counts = run('decryptFor', inputs(0xdec, data, 0.02, 300), (b) => {
    const d = decryptFor(a, b);
    return d ? { ok: true } : null;
  });
  assert.ok(counts.null > 900_000, JSON.stringify(counts));
});

test('fuzz: openOpportunisticPacket on whatever decodes', () => {
  const opened = run('openOpportunisticPacket', inputs(0x0b3, [hex(PY.lxm_packet)], 0.015, 300, true), (b) => {
    const p = decodePacket(b);
    return p.ok ? openOpportunisticPacket(a, p.packet) : p;
  });
  assert.ok(opened.ERR_LXMF_DECRYPT > 1000, JSON.stringify(opened));
});

test('fuzz: unpackMessage', () => {
  const seeds = [hex(PY.lxm_packed), hex(PY.lxm_stamped_packed)];
  const counts = run('unpackMessage', inputs(0x1a3f, seeds, 0.7, 200), (b) => unpackMessage(b));
  assert.ok(counts.ok > 100_000 && counts.ERR_LXMF_PAYLOAD > 100_000, JSON.stringify(counts));
});

test('fuzz: decodeLxmfAppData and skipObject', () => {
  const seeds = [hex(PY.announce_b_app_data), hex('92c402486908'), hex('93c0cc0891c0'), new TextEncoder().encode('Old Node')];
  const counts = run('decodeLxmfAppData', inputs(0xadd, seeds, 0.6, 40), (b) => decodeLxmfAppData(b));
  assert.ok(counts.ok > 100_000 && counts.ERR_LXMF_APP_DATA > 10_000, JSON.stringify(counts));
  const next = inputs(0x5c1b, seeds, 0.3, 64);
  for (let i = 0; i < N; i++) {
    const b = next();
    const end = skipObject(b, 0);
    assert.ok(end === -1 || (end > 0 && end <= b.length));
  }
});

test('after the fuzz every fixture still decodes as before', () => {
  assert.ok(decodeLxmfAppData(hex(PY.announce_b_app_data)).ok);
  assert.ok(decryptFor(a, hex(PY.token_for_a)));
  const m = unpackMessage(hex(PY.lxm_packed));
  assert.ok(m.ok && Buffer.from(m.message.hash).toString('hex') === PY.lxm_hash);
  const q = decodePacket(hex(PY.lxm_packet));
  assert.ok(q.ok && openOpportunisticPacket(a, q.packet).ok);
});


test.run();
