import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { backlogRig, recorder } from './helpers.ts';

// A backlog behind an airtime limit: the driver hands the simulated RNode (over a real TCP
// socket) only frames its packet queue holds whole and its airtime limit allows, so every
// frame reported delivered is heard by a second radio on the channel, and the firmware's
// short-term figure never goes above the limit. Time is a FakeClock shared by both radios
// and the driver; the loop below moves it on in small steps and lets the socket work.

async function drain(settings: Record<string, unknown>, frames: number, bytes: number) {
  const rig = await backlogRig(new FakeClock(), (clock) => recorder({ preset: 'us-915', ...settings }, clock).ctx);
  const delivered: string[] = [];
  for (let i = 0; i < frames; i++) {
    const text = `frame ${String(i).padStart(3, '0')} `.padEnd(bytes, '.');
    // One delivery at a time, as the bridge sends in raw mode.
    const r = await rig.send(i, text, 50);
    assert.ok(r.ok, `frame ${i}: ${r.ok ? '' : r.error}`);
    delivered.push(text);
  }
  // Let the radio send what it holds.
  await rig.flush(delivered.length, 100, 400);
  await rig.close();
  return { delivered, heard: rig.heard, worstShort: rig.worst.short, worstLong: rig.worst.long, dropped: rig.sim.counters.droppedQueueFull };
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
