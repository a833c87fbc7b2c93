import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rnodeSimChannel } from '../../src/bearers/rnode/simulator/link.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';
import { lxmfPeerAvailability, lxmfPeerTest, lxmfPeerTempDir, startLxmfPeerOnChannel, type ChannelLxmfPeer } from '../helpers/lxmf-peer.ts';

// The bridge against the real thing (issue 18 acceptance): the Reticulum and LXMF Python code
// (test/peers/reticulum/lxmf_peer.py, through RNS's own RNodeInterface on a simulated RNode)
// and a bridge whose RNode interface runs in reticulum mode on the same simulated channel.
// The peer messages the bridge, the bridge answers through a "{from}" rule; both messages are
// signed, checked and proven by the other side's own code. Skipped, with the reason, where the
// Reticulum and LXMF sources are not on the machine (docs/reticulum.md, "Testing against
// Reticulum and LXMF").

const avail = lxmfPeerAvailability();
const peerTest = lxmfPeerTest(avail);

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

peerTest('a real LXMF peer and the bridge exchange signed, proven messages both ways; the history shows the peer\'s address', async () => {
  if (!avail.ok) return;
  const name = `lxmf-real-${process.pid}`;
  const tmp = lxmfPeerTempDir();
  let peer: ChannelLxmfPeer | undefined;
  let t: TestBridge | undefined;
  try {
    // The peer first, so it hears the announce the bridge makes as its interface comes online.
    peer = await startLxmfPeerOnChannel(rnodeSimChannel(name), { displayName: 'Sideband user', dir: join(tmp.dir, 'peer') });
    t = await startTestBridge();
    const call = t.call;
    const created = await call('POST', '/api/interfaces', { body: { name: 'lxmf', kind: 'rnode', device: `sim://${name}`, settings: { preset: 'us-915', mode: 'reticulum', display_name: 'Fieldbridge hut' } } });
    assert.is(created.status, 201, created.text);
    const echo = await call('POST', '/api/access-rules', {
      body: { name: 'pong', match: { direction: 'inbound', interfaces: ['lxmf'], text: { regex: '^ping' } }, schedule: null, action: 'forward', destinations: [{ interface: 'lxmf', to: '{from}' }] },
    });
    assert.is(echo.status, 201, echo.text);
    const bridgeAddress: string = (await until('the bridge to announce', async () => {
      const r = (await call('GET', '/api/interfaces/lxmf')).body.reported.reticulum;
      return r?.last_announce_at && r;
    })).lxmf_address;

    // Reticulum validated our announce: signature, destination hash, LXMF app data.
    const heard = await peer.waitForAnnounce(bridgeAddress, 15_000);
    assert.is(heard.display_name, 'Fieldbridge hut');

    // Before the peer announces, the bridge cannot check its signature: stored, never as verified.
    const first = await peer.send(bridgeAddress, 'ping before my announce');
    const unverified = await until('the first message stored', async () => {
      const m = await call('GET', '/api/messages?direction=inbound');
      return m.body.items.find((x: { text: string | null }) => x.text === 'ping before my announce');
    });
    assert.is(unverified.meta.signature, 'unverified');
    await peer.waitForDelivery(first.id, 'delivered', 15_000);

    // Once the bridge has heard the peer announce, its messages are verified.
    await peer.announce();
    const node = await until('the bridge to list the peer', async () => {
      const r = await call('GET', `/api/nodes/${peer!.address}`);
      return r.status === 200 && r.body;
    });
    assert.equal([node.network, node.long_name], ['lxmf', 'Sideband user']);
    const second = await peer.send(bridgeAddress, 'ping from the ridge', 'check-in');
    const stored = await until('the second message stored', async () => {
      const m = await call('GET', '/api/messages?direction=inbound');
      return m.body.items.find((x: { text: string | null }) => x.text === 'ping from the ridge');
    });
    assert.is(stored.from, peer.address, 'the history shows the peer\'s LXMF address');
    assert.is(stored.to, bridgeAddress);
    assert.is(stored.meta.signature, 'valid');
    assert.is(stored.meta.title, 'check-in');
    // The peer's LXMF saw the bridge's proof and checked it against the bridge's key.
    await peer.waitForDelivery(second.id, 'delivered', 15_000);

    // The bridge's answer: LXMF validates our signature, and our delivery waits for its proof.
    const answer = await peer.waitForMessage({ from: bridgeAddress, content: 'ping from the ridge' }, 20_000);
    assert.is(answer.signature_validated, true, JSON.stringify(answer));
    assert.is(answer.to, peer.address);
    const delivery = await until('the answer delivered', async () => {
      const d = await call('GET', `/api/deliveries/message/${stored.id}`);
      const dd = d.body.items as Array<{ state: string; result: Record<string, unknown> | null }>;
      return dd.find((x) => x.state === 'delivered');
    });
    assert.is(delivery.result?.proof, 'received');
    const stats = (await call('GET', '/api/interfaces/lxmf')).body.reported.reticulum;
    assert.is(stats.bad_signatures, 0);
    assert.is(stats.undecryptable, 0);
    assert.ok(stats.proofs_received >= 1 && stats.proofs_sent >= 2, JSON.stringify(stats));
  } finally {
    await t?.stop();
    await peer?.stop();
    tmp.remove();
  }
});

test.run();
