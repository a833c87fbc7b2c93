import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RNodeBearer } from '../../../src/bearers/rnode/driver.ts';
import { encodeConfiguration } from '../../../src/bearers/rnode/protocol.ts';
import { RNODE_PRESETS } from '../../../src/bearers/rnode/radio.ts';
import { RNodeChannel } from '../../../src/bearers/rnode/simulator/channel.ts';
import { serveRNodeTcp } from '../../../src/bearers/rnode/simulator/serve.ts';
import { RNodeSimulator } from '../../../src/bearers/rnode/simulator/simulator.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { openTestLink, recorder, waitFor } from './helpers.ts';

// A backlog behind an airtime limit: the driver hands the simulated RNode (over a real TCP
// socket) only frames its packet queue holds whole and its airtime limit allows, so every
// frame reported delivered is heard by a second radio on the channel, and the firmware's
// short-term figure never goes above the limit. Time is a FakeClock shared by both radios
// and the driver; the loop below moves it on in small steps and lets the socket work.

const US915 = RNODE_PRESETS.find((p) => p.name === 'us-915')!;

async function drain(settings: Record<string, unknown>, frames: number, bytes: number) {
  const clock = new FakeClock();
  const channel = new RNodeChannel();
  const sim = new RNodeSimulator({ name: 'gateway', clock, channel });
  const listener = new RNodeSimulator({ name: 'listener', clock, channel });
  listener.fromHost(encodeConfiguration({ ...US915, st_alock: null, lt_alock: null }));
  const heard: string[] = [];
  listener.on('received', (p: Uint8Array) => heard.push(new TextDecoder().decode(p)));
  let worstShort = 0;
  let worstLong = 0;
  sim.on('airtime', (a: { short: number; long: number }) => {
    worstShort = Math.max(worstShort, a.short);
    worstLong = Math.max(worstLong, a.long);
  });
  const transport = await serveRNodeTcp(sim, { port: 0, clock });
  const rec = recorder({ preset: 'us-915', ...settings }, clock);
  const bearer = new RNodeBearer(rec.ctx, { openLink: openTestLink });
  await bearer.start(transport.device);
  await waitFor('online', () => bearer.phase === 'online');
  const delivered: string[] = [];
  const step = () => new Promise((r) => setTimeout(r, 1));
  for (let i = 0; i < frames; i++) {
    const text = `frame ${String(i).padStart(3, '0')} `.padEnd(bytes, '.');
    let done = false;
    const result = bearer.send({ deliveryId: `d${i}`, messageId: `m${i}`, to: 'broadcast', channel: null, kind: 'text', text, payload: new TextEncoder().encode(text) })
      .then((r) => { done = true; return r; });
    // One delivery at a time, as the bridge sends in raw mode.
    while (!done) {
      clock.advance(50);
      await step();
    }
    const r = await result;
    assert.ok(r.ok, `frame ${i}: ${r.ok ? '' : r.error}`);
    delivered.push(text);
  }
  // Let the radio send what it holds.
  for (let t = 0; t < 400 && heard.length < delivered.length; t++) {
    clock.advance(100);
    await step();
  }
  await bearer.stop();
  await transport.close();
  sim.close();
  listener.close();
  return { delivered, heard, worstShort, worstLong, dropped: sim.counters.droppedQueueFull };
}

test('200 frames behind a 10 % short-term limit: every delivered frame is heard, none dropped, never above the limit', async () => {
  const r = await drain({ st_alock: 10 }, 200, 80);
  assert.is(r.dropped, 0);
  assert.is(r.heard.length, 200);
  assert.equal(r.heard, r.delivered);
  assert.ok(r.worstShort <= 0.1, `short-term airtime reached ${(r.worstShort * 100).toFixed(2)} %`);
});

test('without a limit the radio\'s queue is never overfilled: 200 frames of 200 bytes all heard', async () => {
  const r = await drain({}, 200, 200);
  assert.is(r.dropped, 0);
  assert.equal(r.heard, r.delivered);
});

test.run();
