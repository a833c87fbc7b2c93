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

// The backlog of backlog.test.ts with the long-term airtime limit set as well (issue 39
// acceptance): 200 frames on us-915 behind 10 % short-term and 0.5 % long-term. 200 frames
// of 80 bytes cost about 31 s of airtime as the firmware counts it, more than the 18 s that
// 0.5 % of 3600 s allows, so the long-term lock is reached mid-drain and holds until the
// firmware's hour of bins has moved on: the limit really binds. A send that times out while
// the radio is held fails retryable and is sent again, as the bridge's retry would; every
// frame reported delivered must be heard by a second radio on the channel, and neither
// firmware figure may go above its limit at any update. Time is a FakeClock shared by driver
// and radios, moved on in 500 ms steps (the lock lasts about an hour of simulated time).

const US915 = RNODE_PRESETS.find((p) => p.name === 'us-915')!;
const STEP_MS = 500;

test('200 frames behind 10 % short-term and 0.5 % long-term limits: every delivered frame heard, never above either limit', async () => {
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
  const rec = recorder({ preset: 'us-915', st_alock: 10, lt_alock: 0.5 }, clock);
  const bearer = new RNodeBearer(rec.ctx, { openLink: openTestLink });
  await bearer.start(transport.device);
  await waitFor('online', () => bearer.phase === 'online');
  const step = () => new Promise((r) => setTimeout(r, 1));
  const delivered: string[] = [];
  let retries = 0;
  const startedAt = clock.now();
  for (let i = 0; i < 200; i++) {
    const text = `frame ${String(i).padStart(3, '0')} `.padEnd(80, '.');
    for (;;) {
      let done = false;
      const result = bearer.send({ deliveryId: `d${i}`, messageId: `m${i}`, to: 'broadcast', channel: null, kind: 'text', text, payload: new TextEncoder().encode(text) })
        .then((r) => { done = true; return r; });
      while (!done) {
        clock.advance(STEP_MS);
        await step();
      }
      const r = await result;
      if (r.ok) break;
      assert.ok(r.retryable, `frame ${i} failed for good: ${r.error}`);
      retries++;
      assert.ok(clock.now() - startedAt < 3 * 3_600_000, `frame ${i} still not sent after 3 h of simulated time`);
    }
    delivered.push(text);
  }
  for (let t = 0; t < 200 && heard.length < delivered.length; t++) {
    clock.advance(STEP_MS);
    await step();
  }
  await bearer.stop();
  await transport.close();
  sim.close();
  listener.close();
  assert.is(sim.counters.droppedQueueFull, 0);
  assert.equal(heard, delivered);
  // The long-term limit bound: 31 s of airtime at 18 s an hour cannot drain within an hour.
  assert.ok(clock.now() - startedAt > 3_600_000, `drained in ${(clock.now() - startedAt) / 1000} s of simulated time: the long-term limit did not hold it`);
  assert.ok(worstLong <= 0.005, `long-term airtime reached ${(worstLong * 100).toFixed(3)} %`);
  assert.ok(worstShort <= 0.1, `short-term airtime reached ${(worstShort * 100).toFixed(2)} %`);
});

test.run();
