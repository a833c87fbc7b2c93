import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { identityFromPrivateKey, publicIdentity } from '../../../../src/bearers/rnode/reticulum/identity.ts';
import { packMessage, unpackMessage, verifyMessage } from '../../../../src/bearers/rnode/reticulum/lxmf.ts';
import { createOpportunisticPacket, openOpportunisticPacket } from '../../../../src/bearers/rnode/reticulum/opportunistic.ts';
import { decodePacket } from '../../../../src/bearers/rnode/reticulum/packet.ts';
import { generateStamp, stampValid, stampValue, stampWorkblock, ticketStamp } from '../../../../src/bearers/rnode/reticulum/stamp.ts';
import { A_PRIVATE, B_PRIVATE, hex, PY, toHex } from './fixtures.ts';

// LXMF stamps (docs/protocols/reticulum.md 7.5), against LXStamper's own values (vectors.py).

const messageId = hex(PY.lxm_hash);
const workblock = stampWorkblock(messageId);
const counterStamp = (n: number) => new Uint8Array(createHash('sha256').update(Uint8Array.of(n >> 24, (n >> 16) & 255, (n >> 8) & 255, n & 255)).digest());

test('parse: the workblock for a message id is LXStamper\'s, byte for byte', () => {
  assert.is(workblock.length, PY.stamp_workblock_len);
  assert.is(createHash('sha256').update(workblock).digest('hex'), PY.stamp_workblock_sha256);
});

test('parse: the first counter stamp LXStamper accepts at cost 8 is the first we accept', () => {
  let n = 0;
  while (!stampValid(counterStamp(n), 8, workblock)) n++;
  assert.is(n, PY.stamp_cost8_n);
  assert.is(toHex(counterStamp(n)), PY.stamp_cost8);
  assert.is(stampValue(workblock, hex(PY.stamp_cost8)), PY.stamp_cost8_value);
  assert.not.ok(stampValid(hex(PY.stamp_cost8), PY.stamp_cost8_value + 1, workblock));
  assert.ok(stampValid(hex(PY.stamp_cost8), 0, workblock));
});

test('generate and round trip: a stamp we find meets its cost and rides as the fifth element', () => {
  const stamp = generateStamp(messageId, 8, { workblock })!;
  assert.ok(stamp && stampValid(stamp, 8, workblock));
  const b = identityFromPrivateKey(B_PRIVATE);
  const m = packMessage({ destinationHash: hex(PY.a_delivery), source: b, timestamp: 1700000000.5, title: 'Greeting', content: 'Hello from B', fields: new Map([[15, 2]]), stamp });
  assert.is(toHex(m.hash), PY.lxm_hash); // the stamp does not change the message id
  const r = unpackMessage(m.packed);
  assert.ok(r.ok && toHex(r.message.stamp!) === toHex(stamp) && verifyMessage(r.message, publicIdentity(hex(PY.b_public))!).ok);
});

test('generateStamp gives up after maxAttempts; tickets stand in for stamps', () => {
  assert.is(generateStamp(messageId, 40, { workblock, maxAttempts: 50 }), null);
  assert.throws(() => generateStamp(messageId, 256, { workblock }), /0 to 255/);
  // vectors.py's stamped message used ticket 33..33 for message lxm_stamped_hash.
  assert.is(toHex(ticketStamp(hex('33'.repeat(16)), hex(PY.lxm_stamped_hash))), PY.lxm_stamped_stamp);
});

test('an opportunistic packet with a stamp cost carries a stamp the recipient accepts', () => {
  const b = identityFromPrivateKey(B_PRIVATE);
  const a = identityFromPrivateKey(A_PRIVATE);
  const made = createOpportunisticPacket({ source: b, recipient: publicIdentity(a.publicKey)!, timestamp: 3, content: 'stamped', stampCost: 6 });
  const p = decodePacket(made.packet);
  const r = p.ok ? openOpportunisticPacket(a, p.packet) : p;
  if (!r.ok) throw new Error(r.reason);
  assert.is(toHex(r.message.hash), toHex(made.messageHash));
  assert.ok(stampValid(r.message.stamp!, 6, stampWorkblock(r.message.hash)));
  assert.ok(verifyMessage(r.message, publicIdentity(b.publicKey)!).ok);
});

test.run();
