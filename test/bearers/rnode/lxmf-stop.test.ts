import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RNodeBearer } from '../../../src/bearers/rnode/driver.ts';
import { RNodeChannel } from '../../../src/bearers/rnode/simulator/channel.ts';
import { serveRNodeTcp } from '../../../src/bearers/rnode/simulator/serve.ts';
import { RNodeSimulator } from '../../../src/bearers/rnode/simulator/simulator.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { openTestLink, recorder } from './helpers.ts';

// An RNode interface in `reticulum` mode that stops with an LXMF link open tells the peer
// (LINKCLOSE) while its radio is still on: the peer closes the link at once instead of keeping
// it until its keep-alive timeout (minutes), and the radio drops nothing when it goes off. Two
// drivers over real TCP sockets to two simulated radios on one channel; time is a FakeClock
// both share, moved on 50 ms per real millisecond while the test waits.

test('a stop with an LXMF link open: the peer hears LINKCLOSE before the radio goes off', async () => {
  const clock = new FakeClock(Date.parse('2026-11-24T06:00:00Z'));
  const ticker = setInterval(() => clock.advance(50), 1);
  const channel = new RNodeChannel();
  const gwSim = new RNodeSimulator({ name: 'gateway', clock, channel });
  const peerSim = new RNodeSimulator({ name: 'peer', clock, channel });
  const gwT = await serveRNodeTcp(gwSim, { port: 0, clock });
  const peerT = await serveRNodeTcp(peerSim, { port: 0, clock });
  const gw = new RNodeBearer(recorder({ preset: 'us-915', mode: 'reticulum', display_name: 'gateway' }, clock, 'gw').ctx, { openLink: openTestLink });
  const peer = new RNodeBearer(recorder({ preset: 'us-915', mode: 'reticulum', display_name: 'peer' }, clock, 'peer').ctx, { openLink: openTestLink });
  const until = async (what: string, ok: () => boolean) => {
    for (let i = 0; i < 10_000 && !ok(); i++) await new Promise((r) => setTimeout(r, 1));
    assert.ok(ok(), `${what} (simulated ${(clock.now() - Date.parse('2026-11-24T06:00:00Z')) / 1000} s)`);
  };
  const links = (b: RNodeBearer) => b.lxmf!.stats().links_active;
  try {
    await gw.start(gwT.device);
    await peer.start(peerT.device);
    await until('both online', () => gw.phase === 'online' && peer.phase === 'online');
    await peer.lxmf!.announce();
    await until('the gateway knows the peer', () => gw.lxmf!.stats().peers_known === 1);
    // Larger than one packet: it goes over a link, as a resource.
    const text = 'x'.repeat(1_000);
    const sent = await gw.send({ deliveryId: 'd1', messageId: 'm1', to: peer.lxmf!.addressHex, channel: null, kind: 'text', text, payload: new TextEncoder().encode(text) });
    assert.ok(sent.ok, sent.ok ? '' : sent.error);
    await until('a link open on both sides', () => links(gw) === 1 && links(peer) === 1);
    const stoppedAt = clock.now();
    await gw.stop();
    await until('the peer closed its link', () => links(peer) === 0);
    assert.ok(clock.now() - stoppedAt < 30_000, `the peer closed it ${(clock.now() - stoppedAt) / 1000} s after the stop: on LINKCLOSE, not a timeout`);
    assert.is(gwSim.counters.droppedRadioOff, 0, 'the radio dropped nothing when it went off');
  } finally {
    await gw.stop();
    await peer.stop();
    clearInterval(ticker);
    await gwT.close();
    await peerT.close();
    gwSim.close();
    peerSim.close();
  }
});

test.run();
