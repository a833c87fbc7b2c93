import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RNodeBearer } from '../../../src/bearers/rnode/driver.ts';
import { RNODE_PRESETS } from '../../../src/bearers/rnode/radio.ts';
import { RNodeChannel } from '../../../src/bearers/rnode/simulator/channel.ts';
import { serveRNodeTcp } from '../../../src/bearers/rnode/simulator/serve.ts';
import { RNodeSimulator } from '../../../src/bearers/rnode/simulator/simulator.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { openTestLink, recorder, waitFor } from './helpers.ts';

// The backlog of backlog.test.ts in LXMF mode (issue 39 acceptance): two RNode interfaces in
// `reticulum` mode, each its own driver over a real TCP socket to its own simulated radio on
// one channel. The gateway, behind a 10 % short-term limit on us-915, sends 200 LXMF messages
// to the peer (four in flight, as the bridge does in this mode) with an announce after every
// tenth; delivered means the peer's proof came back. Every message reported delivered must
// have been received by the peer, every packet the gateway's radio sent must have been heard
// by the peer's radio (none dropped by the queue), and the firmware's short-term figure may
// never go above the limit. Time is a FakeClock shared by both drivers and both radios.

const US915 = RNODE_PRESETS.find((p) => p.name === 'us-915')!;

test('200 LXMF messages and announces behind a 10 % short-term limit: every delivered message received, never above the limit', async () => {
  const clock = new FakeClock(Date.parse('2026-11-24T06:00:00Z'));
  const channel = new RNodeChannel();
  const gwSim = new RNodeSimulator({ name: 'gateway', clock, channel });
  const peerSim = new RNodeSimulator({ name: 'peer', clock, channel });
  let worstShort = 0;
  gwSim.on('airtime', (a: { short: number }) => void (worstShort = Math.max(worstShort, a.short)));
  let sent = 0;
  gwSim.on('transmitted', () => void sent++);
  let heardFromGateway = 0;
  peerSim.on('received', () => void heardFromGateway++);
  const gwT = await serveRNodeTcp(gwSim, { port: 0, clock });
  const peerT = await serveRNodeTcp(peerSim, { port: 0, clock });
  const gwRec = recorder({ preset: 'us-915', mode: 'reticulum', st_alock: 10, display_name: 'gateway' }, clock, 'gw');
  const peerRec = recorder({ preset: 'us-915', mode: 'reticulum', display_name: 'peer' }, clock, 'peer');
  const gw = new RNodeBearer(gwRec.ctx, { openLink: openTestLink });
  const peer = new RNodeBearer(peerRec.ctx, { openLink: openTestLink });
  await gw.start(gwT.device);
  await peer.start(peerT.device);
  const step = () => new Promise((r) => setTimeout(r, 1));
  // The drivers' bring-up waits run on the shared clock.
  for (let t = 0; t < 2000 && (gw.phase !== 'online' || peer.phase !== 'online'); t++) {
    clock.advance(50);
    await step();
  }
  await waitFor('online', () => gw.phase === 'online' && peer.phase === 'online');
  // The gateway must know the peer's identity to encrypt for it.
  let announced = false;
  void peer.lxmf!.announce().then(() => void (announced = true));
  // Handed to the radio, then on the air (a few hundred ms at SF7): 10 s of simulated time.
  for (let t = 0; t < 2000 && !announced; t++) {
    clock.advance(50);
    await step();
  }
  for (let t = 0; t < 200; t++) {
    clock.advance(50);
    await step();
  }
  const to = peer.lxmf!.addressHex;
  const delivered: string[] = [];
  const pending = new Set<Promise<void>>();
  let next = 0;
  const launch = (i: number) => {
    const text = `message ${String(i).padStart(3, '0')} `.padEnd(80, '.');
    const p = gw.send({ deliveryId: `d${i}`, messageId: `m${i}`, to, channel: null, kind: 'text', text, payload: new TextEncoder().encode(text) })
      .then((r) => {
        assert.ok(r.ok, `message ${i}: ${r.ok ? '' : r.error}`);
        delivered.push(text);
      })
      .finally(() => pending.delete(p));
    pending.add(p);
    if (i % 10 === 9) void gw.lxmf!.announce();
  };
  const startedAt = clock.now();
  while (next < 200 || pending.size > 0) {
    while (next < 200 && pending.size < 4) launch(next++);
    clock.advance(50);
    await step();
    assert.ok(clock.now() - startedAt < 3_600_000, `${delivered.length} of 200 delivered after an hour of simulated time`);
  }
  for (let t = 0; t < 400 && heardFromGateway < sent; t++) {
    clock.advance(100);
    await step();
  }
  await gw.stop();
  await peer.stop();
  await gwT.close();
  await peerT.close();
  gwSim.close();
  peerSim.close();
  const received = new Set(peerRec.received.map((f) => f.text));
  assert.is(delivered.length, 200);
  for (const d of delivered) assert.ok(received.has(d), `reported delivered but not received: ${d.trim()}`);
  assert.is(gwSim.counters.droppedQueueFull, 0);
  assert.is(heardFromGateway, sent);
  assert.ok(Number(gw.lxmf!.stats().announces_sent) >= 20, `only ${gw.lxmf!.stats().announces_sent} announces sent`);
  assert.ok(worstShort <= 0.1, `short-term airtime reached ${(worstShort * 100).toFixed(2)} %`);
});

test.run();
