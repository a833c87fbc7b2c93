import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { iridiumSimGateway } from '../../../src/bearers/iridium/simulator/link.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { startTestBridge } from '../../helpers/bridge.ts';
import { createIridiumInterface, health, interfaceStats, keepProcessAlive, waitUntil } from '../../helpers/iridium.ts';

// Issue 30, time from the radios: a gateway whose system clock is in 1970 (a Raspberry Pi with
// no real-time clock, no NTP) and an Iridium modem that hears the network. The Iridium driver
// reads the network's time (AT-MSSTM) and tells it; the bridge's clock takes it only when
// bridge.clock.radio_time names `iridium` (docs/clock.md). Two fake clocks that never meet:
// the bridge's (1970) and the simulated network's (2026-11-28), neither compared with real time.

// A whole number of 90 ms ticks after ERA3's epoch (iridium-sbd.md 3.8): read without rounding.
const NETWORK_TIME = Date.parse('2026-11-28T12:00:02.000Z');
const BOOT_1970 = Date.parse('1970-01-02T00:00:00.000Z');
let channels = 0;

async function run(radioTime: string[]): Promise<{ clock: any; stats: any }> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-radio-time-'));
  const release = keepProcessAlive();
  const clock = new FakeClock(BOOT_1970);
  const channel = `radio-time-${process.pid}-${++channels}`;
  // Made before the bridge opens the channel, so its modem counts on the network's clock.
  iridiumSimGateway(channel, { clock: new FakeClock(NETWORK_TIME) });
  const t = await startTestBridge({ clock, dir });
  try {
    const set = await t.call('POST', '/api/config/module', { body: { section: 'bridge', settings: { clock: { radio_time: radioTime } } } });
    assert.is(set.status, 200, set.text);
    await createIridiumInterface(t, 'sat', `sim://${channel}`);
    // The driver's timers run on the bridge's fake clock: move it a little while waiting.
    const stats = await waitUntil('the modem online and the network time read', async () => {
      clock.advance(200);
      const h = await health(t, 'sat');
      const s = h.phase === 'online' ? await interfaceStats(t, 'sat') : null;
      return s?.network_time ? s : false;
    });
    // The guard acts on the 'time' event as it comes; give the event loop a turn.
    await new Promise((r) => setTimeout(r, 50));
    const h = (await t.call('GET', '/api/health', { key: null })).body;
    return { clock: h.clock, stats };
  } finally {
    await t.stop();
    release();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('bridge.clock.radio_time ["iridium"]: a bridge in 1970 takes the Iridium network\'s time, and health names the source', async () => {
  const { clock, stats } = await run(['iridium']);
  assert.is(stats.network_time.time, '2026-11-28T12:00:02.000Z');
  assert.is(clock.source, 'iridium');
  assert.is(clock.last_jump.source, 'iridium');
  // The bridge's clock now runs from the network's time (plus the few fake seconds waited).
  const now = Date.parse(clock.time);
  assert.ok(now >= NETWORK_TIME && now < NETWORK_TIME + 60_000, clock.time);
  // 1970 is far behind: health shows the system clock behind the bridge's.
  assert.ok(clock.system_offset_s < -1_700_000_000, JSON.stringify(clock));
});

test('without the setting the same time is read but not taken: the bridge stays on its system clock', async () => {
  const { clock, stats } = await run([]);
  assert.is(stats.network_time.time, '2026-11-28T12:00:02.000Z', 'the driver did tell the time');
  assert.is(clock.source, 'system');
  assert.ok(Date.parse(clock.time) < Date.parse('1971-01-01T00:00:00.000Z'), clock.time);
});

test.run();
