import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rnodeSimChannel } from '../../src/bearers/rnode/simulator/link.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';
import { lxmfPeerAvailability, lxmfPeerTest, reticulumInterface, untilReal, lxmfPeerTempDir, startLxmfPeerOnChannel, type ChannelLxmfPeer } from '../helpers/lxmf-peer.ts';

// Path requests against the real Reticulum and LXMF code (docs/reticulum.md, "Path requests"):
// a peer that starts after the bridge announced has never heard it. It asks the network for the
// bridge's path, the bridge answers at once with its announce in context PATH_RESPONSE, and the
// peer messages it. The bridge has never heard the peer announce either: to answer, it asks for
// the peer's path in turn, and RNS answers for its own destination. No announce interval passes
// (the bridge's is 30 minutes). Skipped, with the reason, where the sources are missing.

const avail = lxmfPeerAvailability();
const peerTest = lxmfPeerTest(avail);

const until = <T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000) => untilReal(what, probe, ms);

peerTest('a peer that starts after the bridge announced reaches it by a path request, and the bridge reaches the peer by one', async () => {
  if (!avail.ok) return;
  const name = `lxmf-path-${process.pid}`;
  const tmp = lxmfPeerTempDir();
  let peer: ChannelLxmfPeer | undefined;
  let t: TestBridge | undefined;
  try {
    t = await startTestBridge();
    const call = t.call;
    const { address: bridgeAddress, announced } = await reticulumInterface(call, name, { display_name: 'Path hut' });
    const echo = await call('POST', '/api/access-rules', {
      body: { name: 'pong', match: { direction: 'inbound', interfaces: ['lxmf'], text: { regex: '^ping' } }, schedule: null, action: 'forward', destinations: [{ interface: 'lxmf', to: '{from}' }] },
    });
    assert.is(echo.status, 201, echo.text);

    // The peer comes up after that announce: it has not heard the bridge.
    peer = await startLxmfPeerOnChannel(rnodeSimChannel(name), { displayName: 'Late Sideband', dir: join(tmp.dir, 'peer') });
    assert.not.ok(peer.events.some((e) => e.event === 'announce' && e.address === bridgeAddress), 'the peer started after the announce');
    // The answer is an announce, so it keeps the announce cap: it goes at once, or as soon as the
    // cap allows after the start-up announce (at us-915, SF7, a ~190-byte announce every 14 s).
    const bitrate: number = (await call('GET', '/api/interfaces/lxmf')).body.reported.bitrate_bps;
    const capMs = Math.ceil(((200 * 8) / bitrate) * 1000 / 0.02);
    const path = await peer.requestPath(bridgeAddress, 20_000);
    assert.ok(path.found, JSON.stringify(path));
    assert.ok(path.ms < capMs + 2_000, `path response after ${path.ms} ms (cap ${capMs} ms)`);
    const heard = await peer.waitForAnnounce(bridgeAddress, 1_000);
    assert.is(heard.path_response, true);
    assert.is(heard.display_name, 'Path hut');

    // The peer messages the bridge, which proves it; the bridge's answer needs the peer's key,
    // which it asks the network for.
    const sent = await peer.send(bridgeAddress, 'ping after a path request');
    await peer.waitForDelivery(sent.id, 'delivered', 15_000);
    const answer = await peer.waitForMessage({ from: bridgeAddress, content: 'ping after a path request' }, 30_000);
    assert.is(answer.signature_validated, true);
    const stats = (await call('GET', '/api/interfaces/lxmf')).body.reported.reticulum;
    assert.ok(stats.path_requests_heard >= 1 && stats.path_responses_sent >= 1, JSON.stringify(stats));
    assert.ok(stats.path_requests_sent >= 1, JSON.stringify(stats));
    assert.is(stats.announces_sent, announced.announces_sent + stats.path_responses_sent, 'no periodic announce went out');
    const stored = await until('the delivery delivered', async () => {
      const m = await call('GET', '/api/messages?direction=inbound');
      const msg = m.body.items.find((x: { text: string | null }) => x.text === 'ping after a path request');
      if (!msg) return undefined;
      const d = await call('GET', `/api/deliveries/message/${msg.id}`);
      return (d.body.items as Array<{ state: string; result: Record<string, unknown> | null }>).find((x) => x.state === 'delivered');
    });
    assert.is(stored.result?.proof, 'received');
  } finally {
    await t?.stop();
    await peer?.stop();
    tmp.remove();
  }
});

test.run();
