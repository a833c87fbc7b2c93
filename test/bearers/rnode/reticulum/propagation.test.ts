import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { identityFromPrivateKey } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import { lxmfDeliveryHash } from '../../../../src/bearers/rnode/reticulum/destination.ts';
import { packMessage } from '../../../../src/bearers/rnode/reticulum/lxmf.ts';
import {
  decodePropagationAppData, encodeGetRequestData, openPropagated, propagatedForm, propagationContainer, readFetchedMessages, readTransientIds,
} from '../../../../src/bearers/rnode/reticulum/propagation.ts';
import { decodeLinkResponse, encodeLinkRequest, requestPathHash } from '../../../../src/bearers/rnode/reticulum/request.ts';
import { generateStampAsync, stampValid, stampValue, stampWorkblock, WORKBLOCK_EXPAND_ROUNDS_PN } from '../../../../src/bearers/rnode/reticulum/stamp.ts';
import { A_PRIVATE, B_PRIVATE, hex, toHex } from './fixtures.ts';
import { PY_PROPAGATION as PY } from './propagation-fixtures.ts';

// Link requests and responses and the propagation node formats, against bytes Reticulum and
// LXMF made (propagation-fixtures.ts; docs/protocols/reticulum.md 12 and 13).

const a = identityFromPrivateKey(A_PRIVATE);
const b = identityFromPrivateKey(B_PRIVATE);

test('a list request is byte for byte what Link.request packs', () => {
  assert.is(toHex(requestPathHash('/get')), PY.get_path_hash);
  assert.is(toHex(encodeLinkRequest('/get', encodeGetRequestData(null, null), 1700000000.5)), PY.request_list);
});

test('responses: a list of transient ids, and an error code instead of a list', () => {
  const list = decodeLinkResponse(hex(PY.response_list));
  assert.ok(list.ok);
  if (!list.ok) return;
  assert.is(toHex(list.response.requestId), '000102030405060708090a0b0c0d0e0f');
  const ids = readTransientIds(list.response.response);
  assert.equal(ids.ok && ids.ids.map(toHex), ['01'.repeat(32), '02'.repeat(32)]);
  const err = decodeLinkResponse(hex(PY.response_error));
  assert.ok(err.ok);
  const refused = err.ok ? readTransientIds(err.response.response) : null;
  assert.equal(refused, { ok: false, code: 'ERR_LXMF_PROPAGATION', reason: 'the node needs our identity first (no identification on the link)' });
  assert.is(decodeLinkResponse(hex('92c40f000102030405060708090a0b0c0d0e')).ok, false, 'a 15-byte request id');
  assert.is(decodeLinkResponse(hex(PY.response_error + '00')).ok, false, 'bytes after the array');
});

test('a node\'s announce app data: cost, flexibility, limits and name', () => {
  const info = decodePropagationAppData(hex(PY.pn_app_data));
  assert.ok(info.ok);
  if (!info.ok) return;
  assert.equal([info.enabled, info.stampCost, info.stampFlexibility, info.peeringCost, info.transferLimitKb, info.syncLimitKb, info.name], [true, PY.pn_stamp_cost, 3, 18, 256, 10240, PY.pn_name]);
  assert.is(decodePropagationAppData(hex('93c2ce6b0b6994c3')).ok, false, 'an older, shorter form');
  assert.is(decodePropagationAppData(null).ok, false);
});

test('a message fetched from a node opens to what B sent, and its Python stamp checks out', () => {
  const fetched = decodeLinkResponse(hex(PY.response_get));
  const messages = fetched.ok ? readFetchedMessages(fetched.response.response) : null;
  assert.ok(messages?.ok);
  if (!messages?.ok) return;
  const m = openPropagated(a, lxmfDeliveryHash(a), messages.messages[0]);
  assert.ok(m.ok);
  if (!m.ok) return;
  assert.is(new TextDecoder().decode(m.message.content), 'left for you');
  assert.is(toHex(m.message.hash), PY.message_hash);
  assert.is(toHex(m.message.sourceHash), toHex(lxmfDeliveryHash(b)));
  assert.is(openPropagated(b, lxmfDeliveryHash(b), messages.messages[0]).ok, false, 'addressed to A, not B');
  const workblock = stampWorkblock(hex(PY.transient_id), WORKBLOCK_EXPAND_ROUNDS_PN);
  assert.ok(stampValid(hex(PY.pn_stamp_cost_8), 8, workblock));
  assert.is(stampValue(workblock, hex(PY.pn_stamp_cost_8)), PY.pn_stamp_value);
});

test('what we send a node: recipient in the clear, the rest for the recipient, a stamp at the cost', async () => {
  const packed = packMessage({ source: a, destinationHash: lxmfDeliveryHash(b), timestamp: 1700000000, title: '', content: new TextEncoder().encode('for B via the node') });
  const form = propagatedForm(packed.packed, b);
  assert.is(toHex(form.lxmfData.subarray(0, 16)), toHex(lxmfDeliveryHash(b)));
  const opened = openPropagated(b, lxmfDeliveryHash(b), form.lxmfData);
  assert.ok(opened.ok && toHex(opened.message.hash) === toHex(packed.hash));
  const stamp = await generateStampAsync(form.transientId, 8, { rounds: WORKBLOCK_EXPAND_ROUNDS_PN });
  assert.ok(stamp);
  assert.ok(stampValid(stamp!.stamp, 8, stampWorkblock(form.transientId, WORKBLOCK_EXPAND_ROUNDS_PN)));
  const container = propagationContainer(form, stamp!.stamp, 1700000000.25);
  assert.is(toHex(container.subarray(0, 11)), '92cb41d954fc401000009' + '1');
});

test.run();
