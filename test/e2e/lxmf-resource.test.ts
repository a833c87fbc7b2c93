import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rnodeSimChannel } from '../../src/bearers/rnode/simulator/link.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';
import { lxmfPeerAvailability, lxmfPeerTest, reticulumInterface, TO_LXMF_RULE, untilReal, lxmfPeerTempDir, startLxmfPeerOnChannel, type ChannelLxmfPeer } from '../helpers/lxmf-peer.ts';

// Messages of several kilobytes as Reticulum resources over a link, against the real Reticulum
// and LXMF code (docs/reticulum.md, "Large messages"): 5,000 bytes from the peer to the bridge
// and from the bridge to the peer; then a transfer whose link the peer tears down halfway fails
// retryable, and the retry delivers it, once. Skipped, with the reason, where the sources are
// missing.

const avail = lxmfPeerAvailability();
const peerTest = lxmfPeerTest(avail);

const until = <T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 30_000) => untilReal(what, probe, ms);

/** 5,000 bytes of text that does not compress to nothing (LXMF would compress it if we let it). */
function text(seed: string, n = 5000): string {
  let s = '';
  let x = 0x2545f491 ^ seed.length;
  while (s.length < n) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    s += 'abcdefghijklmnopqrstuvwxyz .,'[(x >>> 0) % 29];
  }
  return `${seed}:${s}`.slice(0, n);
}

peerTest('5,000 bytes each way as resources; a link torn down mid-resource leaves the delivery retrying, and it completes later, once', async () => {
  if (!avail.ok) return;
  const name = `lxmf-res-${process.pid}`;
  const tmp = lxmfPeerTempDir();
  let peer: ChannelLxmfPeer | undefined;
  let t: TestBridge | undefined;
  try {
    peer = await startLxmfPeerOnChannel(rnodeSimChannel(name), { displayName: 'Sideband big', dir: join(tmp.dir, 'peer') });
    t = await startTestBridge();
    const call = t.call;
    const { address: bridgeAddress, reticulum } = await reticulumInterface(call, name, { display_name: 'Big hut' });
    assert.is((await call('POST', '/api/access-rules', { body: TO_LXMF_RULE })).status, 201);
    await peer.waitForAnnounce(bridgeAddress, 15_000);
    await peer.announce();
    await until('the bridge to list the peer', async () => (await call('GET', `/api/nodes/${peer!.address}`)).status === 200);

    // In: LXMF sends 5,000 bytes DIRECT as a resource (too large for a link packet), uncompressed
    // because our announce says we take no compression.
    const big = text('to the bridge');
    const sent = await peer.send(bridgeAddress, big, 'big');
    assert.is(sent.method, 'direct');
    await peer.waitForDelivery(sent.id, 'delivered', 60_000);
    const stored = await until('the resource stored', async () => {
      const m = await call('GET', '/api/messages?direction=inbound');
      return m.body.items.find((x: { title?: string; meta: { title?: string } }) => x.meta?.title === 'big');
    });
    assert.is(stored.text, big);
    assert.equal([stored.meta.signature, stored.meta.lxmf_method], ['valid', 'resource']);

    // Out: the bridge sends 5,000 bytes to the peer as a resource.
    await peer.teardownLinks(); // so the bridge opens its own link
    const reply = text('from the bridge');
    const back = await call('POST', '/api/messages/send', { body: { to: peer.address, text: reply } });
    assert.is(back.status, 202, back.text);
    const got = await peer.waitForMessage({ from: bridgeAddress, content: reply }, 60_000);
    assert.is(got.signature_validated, true);
    const d1 = await until('the resource delivered', async () => {
      const r = await call('GET', `/api/deliveries/${back.body.deliveries[0].id}`);
      return r.body.state === 'delivered' && r.body;
    }, 60_000);
    assert.equal([d1.result.proof, d1.result.method], ['received', 'resource']);

    // Torn down mid-resource: the attempt fails retryable, the retry delivers it once.
    const third = text('interrupted');
    const before = (await reticulum()).resources_out;
    const again = await call('POST', '/api/messages/send', { body: { to: peer.address, text: third } });
    assert.is(again.status, 202, again.text);
    await until('the resource under way', async () => (await reticulum()).resources_out > before && (await reticulum()).resources_active > 0);
    await new Promise((r) => setTimeout(r, 2_500)); // a few parts on the air
    assert.ok((await peer.teardownLinks()) >= 1);
    const failed = await until('the attempt failed', async () => {
      const r = await call('GET', `/api/deliveries/${again.body.deliveries[0].id}`);
      return r.body.last_error && r.body;
    });
    assert.match(failed.last_error, /ERR_LXMF_LINK/);
    const d2 = await until('the retry delivered', async () => {
      const r = await call('GET', `/api/deliveries/${again.body.deliveries[0].id}`);
      return r.body.state === 'delivered' && r.body;
    }, 90_000);
    assert.ok(d2.attempts >= 2, JSON.stringify(d2));
    await new Promise((r) => setTimeout(r, 1_000));
    assert.is(peer.events.filter((e) => e.event === 'message' && e.content === third).length, 1, 'received once');
    const stats = await reticulum();
    assert.ok(stats.resources_in >= 1 && stats.resources_out >= 3 && stats.resources_failed >= 1, JSON.stringify(stats));
    assert.is(stats.bad_signatures, 0);
  } finally {
    await t?.stop();
    await peer?.stop();
    tmp.remove();
  }
});

test.run();
