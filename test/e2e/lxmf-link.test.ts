import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rnodeSimChannel } from '../../src/bearers/rnode/simulator/link.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';
import { lxmfPeerAvailability, lxmfPeerTest, reticulumInterface, TO_LXMF_RULE, untilReal, lxmfPeerTempDir, startLxmfPeerOnChannel, type ChannelLxmfPeer } from '../helpers/lxmf-peer.ts';

// LXMF's DIRECT method against the real Reticulum and LXMF code (docs/reticulum.md, "Links"):
// the peer opens a Reticulum link to the bridge and delivers over it, as Sideband does by
// default; the bridge proves it over the link and answers over the same link (LXMF identifies
// on its link, which makes it a backchannel). After the peer tears its links down, a message too
// large for one packet makes the bridge open a link of its own. Skipped, with the reason, where
// the sources are missing.

const avail = lxmfPeerAvailability();
const peerTest = lxmfPeerTest(avail);

const until = <T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000) => untilReal(what, probe, ms);

peerTest('DIRECT both ways: the peer\'s link is accepted and proven, the bridge answers over it, then opens its own', async () => {
  if (!avail.ok) return;
  const name = `lxmf-link-${process.pid}`;
  const tmp = lxmfPeerTempDir();
  let peer: ChannelLxmfPeer | undefined;
  let t: TestBridge | undefined;
  try {
    peer = await startLxmfPeerOnChannel(rnodeSimChannel(name), { displayName: 'Sideband direct', dir: join(tmp.dir, 'peer') });
    t = await startTestBridge();
    const call = t.call;
    const { address: bridgeAddress } = await reticulumInterface(call, name, { display_name: 'Link hut' });
    assert.is((await call('POST', '/api/access-rules', { body: TO_LXMF_RULE })).status, 201);
    await peer.waitForAnnounce(bridgeAddress, 15_000);
    await peer.announce();
    await until('the bridge to list the peer', async () => (await call('GET', `/api/nodes/${peer!.address}`)).status === 200);

    // 1. The peer delivers DIRECT: a link to the bridge, the message on it, our proof back.
    const first = await peer.send(bridgeAddress, 'over a link', 'direct', { method: 'direct' });
    assert.is(first.method, 'direct');
    await peer.waitForDelivery(first.id, 'delivered', 20_000);
    const stored = await until('the direct message stored', async () => {
      const m = await call('GET', '/api/messages?direction=inbound');
      return m.body.items.find((x: { text: string | null }) => x.text === 'over a link');
    });
    assert.equal([stored.meta.signature, stored.meta.lxmf_method, stored.meta.title], ['valid', 'direct', 'direct']);
    const inbound = await until('the peer\'s link listed', async () => {
      const r = (await call('GET', '/api/interfaces/lxmf')).body.reported.reticulum;
      return (r.links as Array<{ direction: string; state: string; peer: string | null; rtt_ms: number | null }>).find((l) => l.direction === 'in' && l.state === 'active' && l.peer === peer!.address);
    });
    assert.ok(inbound.rtt_ms !== null && inbound.rtt_ms > 0, JSON.stringify(inbound));

    // 2. The bridge answers: the peer identified on its link, so the answer goes back over it.
    const back = await call('POST', '/api/messages/send', { body: { to: peer.address, text: 'back over your link' } });
    assert.is(back.status, 202, back.text);
    const got = await peer.waitForMessage({ from: bridgeAddress, content: 'back over your link' }, 20_000);
    assert.equal([got.signature_validated, got.method], [true, 'direct']);
    const d1 = await until('the answer delivered', async () => {
      const r = await call('GET', `/api/deliveries/${back.body.deliveries[0].id}`);
      return r.body.state === 'delivered' && r.body;
    });
    assert.equal([d1.result.proof, d1.result.method], ['received', 'direct']);

    // 3. The peer drops its links; 300 characters do not fit one packet, so the bridge opens a
    //    link of its own and sends them as one link packet.
    assert.ok((await peer.teardownLinks()) >= 1);
    await until('the bridge to see the link closed', async () => {
      const r = (await call('GET', '/api/interfaces/lxmf')).body.reported.reticulum;
      return r.links.length === 0 && r.links_closed >= 1;
    });
    const long = 'L'.repeat(300);
    const own = await call('POST', '/api/messages/send', { body: { to: peer.address, text: long } });
    assert.is(own.status, 202, own.text);
    const got2 = await peer.waitForMessage({ from: bridgeAddress, content: long }, 30_000);
    assert.equal([got2.signature_validated, got2.method], [true, 'direct']);
    const d2 = await until('the long one delivered', async () => {
      const r = await call('GET', `/api/deliveries/${own.body.deliveries[0].id}`);
      return r.body.state === 'delivered' && r.body;
    });
    assert.equal([d2.result.proof, d2.result.method], ['received', 'direct']);
    const stats = (await call('GET', '/api/interfaces/lxmf')).body.reported.reticulum;
    assert.ok(stats.links.some((l: { direction: string; state: string }) => l.direction === 'out' && l.state === 'active'), JSON.stringify(stats.links));
    assert.ok(stats.links_in >= 1 && stats.links_out >= 1 && stats.links_established >= 2, JSON.stringify(stats));
    assert.is(stats.bad_signatures, 0);
  } finally {
    await t?.stop();
    await peer?.stop();
    tmp.remove();
  }
});

test.run();
