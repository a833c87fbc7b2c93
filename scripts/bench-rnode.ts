// The RNode backlog figure for `npm run bench` (issue 39): 200 frames of 80 bytes queued for an
// RNode in raw mode on us-915 behind a 10 % short-term airtime limit, sent through the real
// driver (src/bearers/rnode/driver.ts) over a real TCP socket to the RNode simulator, which
// models the firmware's packet queue and airtime bins (docs/protocols/rnode.md 1.10); a second
// simulated radio on the channel counts what was heard. The setup is that of
// test/bearers/rnode/backlog.test.ts. Time is a FakeClock shared by the driver and both radios,
// moved on in 50 ms steps: every time printed is simulated time, not wall-clock time.
//
// Figures and targets:
//   frames on the air / frames delivered      equal (nothing reported delivered that was not heard)
//   utilisation of the limit                  >= 95 %: the airtime the firmware charged to its
//                                             bins over the drain, against limit x drain time
//   worst short-term figure                   <= the limit, at every update the firmware makes
//                                             (its lock is decided on these figures; 15 s window)
//   drain time against airtime / limit        <= (charged airtime / limit) / 0.95

import { firmwarePacketCostMs } from '../src/bearers/rnode/firmware.ts';
import { FakeClock } from '../src/lib/clock.ts';
import { createLogger } from '../src/lib/log.ts';
import { bearerContext } from '../test/helpers/bearer-context.ts';
import { backlogRig } from '../test/bearers/rnode/helpers.ts';

const FRAMES = 200;
const BYTES = 80;
const LIMIT_PCT = 10;
const TARGET_UTILISATION = 0.95;
const STEP_MS = 50;


export async function main(): Promise<number> {
  const clock = new FakeClock();
  const wallStart = performance.now();
  const rig = await backlogRig(clock, (c) => bearerContext({
    interfaceId: 'ifc_bench', interfaceName: 'bench', settings: { preset: 'us-915', st_alock: LIMIT_PCT },
    log: createLogger({ level: 'error', format: 'json', write: () => {} }), clock: c,
    events: { receive: () => {}, state: () => {} },
  }));
  const { sim, heard } = rig;
  // The span of the radio's transmissions and what the firmware charged for them.
  let firstTx: number | null = null;
  let lastTxEnd = 0;
  let charged = 0;
  let frameCost = 0;
  const radio = { sf: rig.us915.sf, bandwidthHz: rig.us915.bandwidth_hz, cr: rig.us915.cr };
  sim.on('transmitted', (p: Uint8Array, ms: number) => {
    // Emitted when the transmission ends; it began ms earlier.
    firstTx ??= clock.now() - ms;
    lastTxEnd = clock.now();
    const cost = firmwarePacketCostMs(p.length, radio);
    charged += cost;
    frameCost = Math.max(frameCost, cost);
  });
  try {
    const sendStart = clock.now();
    const delivered: string[] = [];
    for (let i = 0; i < FRAMES; i++) {
      const text = `frame ${String(i).padStart(3, '0')} `.padEnd(BYTES, '.');
      // One delivery at a time, as the bridge sends in raw mode.
      const r = await rig.send(i, text, STEP_MS);
      if (r.ok) delivered.push(text);
    }
    // Let the radio send what it holds.
    await rig.flush(delivered.length, 100, 400);
    const wallMs = performance.now() - wallStart;
    const heardSet = new Set(heard);
    const allHeard = delivered.every((d) => heardSet.has(d)) && heard.length === delivered.length;
    const drainMs = lastTxEnd - (firstTx ?? sendStart);
    const limit = LIMIT_PCT / 100;
    const utilisation = drainMs > 0 ? charged / (drainMs * limit) : 0;
    const idealMs = charged / limit;
    const okEqual = allHeard && sim.counters.droppedQueueFull === 0;
    const okUtil = utilisation >= TARGET_UTILISATION;
    const worstShort = rig.worst.short;
    const okWorst = worstShort <= limit;
    const okDrain = drainMs <= idealMs / TARGET_UTILISATION;
    const verdict = (ok: boolean) => (ok ? 'MET' : 'NOT MET');
    const w = (s: string) => process.stdout.write(s + '\n');
    w(`RNode backlog: ${FRAMES} frames of ${BYTES} bytes, raw mode, us-915, ${LIMIT_PCT} % short-term airtime limit, real driver over TCP to the simulator (simulated time; ${(wallMs / 1000).toFixed(1)} s wall)`);
    w(`  frames on the air / delivered       ${heard.length} / ${delivered.length} (dropped by the radio's queue: ${sim.counters.droppedQueueFull})   target equal: ${verdict(okEqual)}`);
    w(`  utilisation of the limit            ${(utilisation * 100).toFixed(1)} % (${(charged / 1000).toFixed(2)} s charged by the firmware over ${(drainMs / 1000).toFixed(1)} s)   target >= ${TARGET_UTILISATION * 100} %: ${verdict(okUtil)}`);
    // The firmware's short-term window is two 7.5 s bins: whole frames of one cost fill at most
    // this share of the limit in it, whatever the schedule (docs/performance.md, "RNode backlog").
    const windowMs = 15_000 * limit;
    const wholeFrames = Math.floor(windowMs / frameCost);
    w(`  what whole frames allow             ${((wholeFrames * frameCost) / windowMs * 100).toFixed(1)} % (${wholeFrames} frames of ${frameCost} ms in the ${windowMs} ms a 15 s window allows)`);
    w(`  worst short-term figure (15 s)      ${(worstShort * 100).toFixed(2)} % at the firmware's updates   target <= ${LIMIT_PCT} %: ${verdict(okWorst)}`);
    w(`  drain time against airtime / limit  ${(drainMs / 1000).toFixed(1)} s against ${(idealMs / 1000).toFixed(1)} s (${(drainMs / idealMs).toFixed(3)}x)   target <= ${(1 / TARGET_UTILISATION).toFixed(3)}x: ${verdict(okDrain)}`);
    return okEqual && okUtil && okWorst && okDrain ? 0 : 1;
  } finally {
    await rig.close();
  }
}

if (import.meta.main) process.exitCode = await main();
