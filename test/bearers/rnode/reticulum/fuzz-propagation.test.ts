import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lxmfDeliveryHash } from '../../../../src/bearers/rnode/reticulum/destination.ts';
import { identityFromPrivateKey } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import { decodePropagationAppData, openPropagated, readFetchedMessages, readTransientIds } from '../../../../src/bearers/rnode/reticulum/propagation.ts';
import { decodeLinkResponse } from '../../../../src/bearers/rnode/reticulum/request.ts';
import { A_PRIVATE, hex } from './fixtures.ts';
import { inputs, run } from './fuzz-helpers.ts';
import { PY_PROPAGATION as PY } from './propagation-fixtures.ts';

// Seeded fuzz of the decoders propagation nodes added: link responses (and what is read from
// them: id lists, fetched messages, opened messages) and a node's announce app data; 10^6
// inputs each (fuzz-helpers.ts). None may throw; every refusal carries a code and a reason.

const a = identityFromPrivateKey(A_PRIVATE);
const address = lxmfDeliveryHash(a);

test('fuzz: decodeLinkResponse and what the client reads from it', () => {
  const seeds = [hex(PY.response_list), hex(PY.response_error), hex(PY.response_get)];
  const counts = run('link responses', inputs(0x5e7a, seeds, 0.7, 300), (b) => {
    const r = decodeLinkResponse(b);
    if (!r.ok) return r;
    const ids = readTransientIds(r.response.response);
    const got = readFetchedMessages(r.response.response);
    if (ids.ok) return ids;
    if (!got.ok) return got;
    for (const m of got.messages) {
      const opened = openPropagated(a, address, m);
      if (!opened.ok) return opened;
    }
    return { ok: true };
  });
  assert.ok(counts.ok > 10_000 && counts.ERR_RNS_LINK_RESPONSE > 100_000, JSON.stringify(counts));
});

test('fuzz: decodePropagationAppData', () => {
  const counts = run('propagation app data', inputs(0x9a9d, [hex(PY.pn_app_data)], 0.8, 60), (b) => decodePropagationAppData(b));
  assert.ok(counts.ok > 1000 && counts.ERR_LXMF_APP_DATA > 100_000, JSON.stringify(counts));
});

test('the fixtures still read the same afterwards', () => {
  const info = decodePropagationAppData(hex(PY.pn_app_data));
  assert.ok(info.ok && info.stampCost === PY.pn_stamp_cost);
  assert.ok(decodeLinkResponse(hex(PY.response_get)).ok);
});

test.run();
