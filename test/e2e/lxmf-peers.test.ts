import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { RNodeChannel } from '../../src/bearers/rnode/simulator/channel.ts';
import { LXMF_PEER_RADIO, lxmfPeerAvailability, lxmfPeerTest, lxmfPeerTempDir, startLxmfPeerOnChannel, type ChannelLxmfPeer } from '../helpers/lxmf-peer.ts';

// Two real Reticulum + LXMF endpoints (test/peers/reticulum/lxmf_peer.py), each through RNS's
// own RNodeInterface on one of our simulated RNodes, both radios on one simulated channel.
// Proves the harness and the simulator against the real code before a bridge joins
// (docs/reticulum.md, "Testing against Reticulum and LXMF"). Radio: 915 MHz, 125 kHz, SF7,
// CR 4/5 (the us-915 preset): an announce is ~0.35 s on air, a message ~0.35 s, its proof ~0.16 s.

const avail = lxmfPeerAvailability();
const peerTest = lxmfPeerTest(avail);

peerTest('two LXMF peers on simulated RNodes announce, hear each other, and exchange proven messages', async () => {
  if (!avail.ok) return;
  const t0 = Date.now();
  const channel = new RNodeChannel({ linkQuality: () => ({ rssi_dbm: -84, snr_db: 7.5 }) });
  const tmp = lxmfPeerTempDir();
  let alice: ChannelLxmfPeer | undefined;
  let bob: ChannelLxmfPeer | undefined;
  const marks: string[] = [];
  const mark = (what: string) => marks.push(`${what} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  try {
    // Each peer on its own simulated RNode at its own loopback address, port 7633.
    const started = await Promise.allSettled([
      startLxmfPeerOnChannel(channel, { displayName: 'Alice', dir: join(tmp.dir, 'alice') }),
      startLxmfPeerOnChannel(channel, { displayName: 'Bob', dir: join(tmp.dir, 'bob') }),
    ]);
    [alice, bob] = started.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
    for (const r of started) if (r.status === 'rejected') throw r.reason;
    if (!alice || !bob) throw new Error('unreachable');
    mark('ready');
    const [simA, simB] = [alice.sim, bob.sim];
    assert.is.not(alice.rnode.host, bob.rnode.host);
    // RNS configured each radio as asked and read the values back (RNodeInterface.validateRadioState).
    for (const sim of [simA, simB]) {
      const c = sim.config;
      assert.equal(
        { frequency_hz: c.frequency_hz, bandwidth_hz: c.bandwidth_hz, sf: c.sf, cr: c.cr, tx_power_dbm: c.tx_power_dbm, radio_on: c.radio_on },
        { ...LXMF_PEER_RADIO, radio_on: true },
        sim.name,
      );
    }
    assert.is(alice.ready.rnode.online, true);
    assert.match(alice.address, /^[0-9a-f]{32}$/);
    assert.is.not(alice.address, bob.address);

    // Sending before the recipient's announce was heard: no identity to encrypt to.
    try {
      await alice.send(bob.address, 'too early');
      assert.unreachable('sent without knowing the identity');
    } catch (e) {
      assert.is((e as { code?: string }).code, 'unknown_destination', String(e));
    }

    await alice.announce();
    const heardAlice = await bob.waitForAnnounce(alice.address, 10_000);
    await bob.announce();
    const heardBob = await alice.waitForAnnounce(bob.address, 10_000);
    mark('announces heard');
    assert.is(heardAlice.display_name, 'Alice');
    assert.is(heardAlice.identity_hash, alice.identityHash);
    assert.is(heardAlice.hops, 1);
    assert.is(heardBob.display_name, 'Bob');

    const toBob = await alice.send(bob.address, 'Hello Bob, over LoRa', 'greeting');
    assert.is(toBob.method, 'opportunistic');
    const atBob = await bob.waitForMessage({ from: alice.address }, 15_000);
    assert.equal(
      { id: atBob.id, to: atBob.to, title: atBob.title, content: atBob.content, signature_validated: atBob.signature_validated, unverified_reason: atBob.unverified_reason, method: atBob.method },
      { id: toBob.id, to: bob.address, title: 'greeting', content: 'Hello Bob, over LoRa', signature_validated: true, unverified_reason: null, method: 'opportunistic' },
    );
    assert.equal([atBob.rssi, atBob.snr], [-84, 7.5], 'RSSI and SNR from the simulated channel reach LXMF');
    const provenToAlice = await alice.waitForDelivery(toBob.id, 'delivered', 20_000);
    assert.is(provenToAlice.attempts, 1);
    mark('alice -> bob delivered');

    const toAlice = await bob.send(alice.address, 'Hi Alice, proof follows', 'reply');
    const atAlice = await alice.waitForMessage({ from: bob.address }, 15_000);
    assert.is(atAlice.content, 'Hi Alice, proof follows');
    assert.is(atAlice.signature_validated, true);
    await bob.waitForDelivery(toAlice.id, 'delivered', 20_000);
    mark('bob -> alice delivered');

    // Each radio sent an announce, a message and a proof; nothing was dropped on the way.
    for (const sim of [simA, simB]) {
      assert.ok(sim.counters.transmitted >= 3, `${sim.name} transmitted ${sim.counters.transmitted}`);
      assert.is(sim.counters.droppedQueueFull + sim.counters.droppedRadioOff, 0, sim.name);
    }

    const [codeA, codeB] = await Promise.all([alice.stop(), bob.stop()]);
    mark('stopped');
    assert.equal([codeA, codeB], [0, 0]);
    // RNS detaches cleanly: radio off, then CMD_LEAVE (RNodeInterface.detach).
    for (const sim of [simA, simB]) {
      assert.is(sim.counters.leaves, 1, sim.name);
      assert.is(sim.config.radio_on, false, sim.name);
    }
    console.log(`  timings: ${marks.join(', ')}`);
  } finally {
    await Promise.all([alice?.stop(), bob?.stop()]);
    tmp.remove();
  }
});

test.run();
