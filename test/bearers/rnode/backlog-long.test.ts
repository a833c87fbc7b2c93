import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { backlogRig, recorder } from './helpers.ts';

// The backlog of backlog.test.ts with the long-term airtime limit set as well (issue 39
// acceptance): 200 frames on us-915 behind 10 % short-term and 0.5 % long-term. 200 frames
// of 80 bytes cost about 31 s of airtime as the firmware counts it, more than the 18 s that
// 0.5 % of 3600 s allows, so the long-term lock is reached mid-drain and holds until the
// firmware's hour of bins has moved on: the limit really binds. A send that times out while
// the radio is held fails retryable and is sent again, as the bridge's retry would; every
// frame reported delivered must be heard by a second radio on the channel, and neither
// firmware figure may go above its limit at any update. Time is a FakeClock shared by driver
// and radios, moved on in 500 ms steps (the lock lasts about an hour of simulated time).

const STEP_MS = 500;

test('200 frames behind 10 % short-term and 0.5 % long-term limits: every delivered frame heard, never above either limit', async () => {
  const clock = new FakeClock();
  const rig = await backlogRig(clock, (c) => recorder({ preset: 'us-915', st_alock: 10, lt_alock: 0.5 }, c).ctx);
  const delivered: string[] = [];
  let retries = 0;
  const startedAt = clock.now();
  for (let i = 0; i < 200; i++) {
    const text = `frame ${String(i).padStart(3, '0')} `.padEnd(80, '.');
    for (;;) {
      const r = await rig.send(i, text, STEP_MS);
      if (r.ok) break;
      assert.ok(r.retryable, `frame ${i} failed for good: ${r.error}`);
      retries++;
      assert.ok(clock.now() - startedAt < 3 * 3_600_000, `frame ${i} still not sent after 3 h of simulated time`);
    }
    delivered.push(text);
  }
  await rig.flush(delivered.length, STEP_MS, 200);
  await rig.close();
  assert.is(rig.sim.counters.droppedQueueFull, 0);
  assert.equal(rig.heard, delivered);
  // The long-term limit bound: 31 s of airtime at 18 s an hour cannot drain within an hour.
  assert.ok(clock.now() - startedAt > 3_600_000, `drained in ${(clock.now() - startedAt) / 1000} s of simulated time: the long-term limit did not hold it`);
  assert.ok(rig.worst.long <= 0.005, `long-term airtime reached ${(rig.worst.long * 100).toFixed(3)} %`);
  assert.ok(rig.worst.short <= 0.1, `short-term airtime reached ${(rig.worst.short * 100).toFixed(2)} %`);
});

test.run();
