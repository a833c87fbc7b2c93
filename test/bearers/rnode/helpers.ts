// Shared by the RNode driver tests: a BearerContext that records what the bearer reports,
// openers for real links (TCP and serial), and a poll for conditions that real sockets
// reach a moment later. Not a test file (no .test.ts): the runner does not run it.
import type { BearerContext, BearerState, InboundFrame, SendResult } from '../../../src/bearers/bearer.ts';
import { RNodeBearer } from '../../../src/bearers/rnode/driver.ts';
import { encodeConfiguration } from '../../../src/bearers/rnode/protocol.ts';
import { RNODE_PRESETS } from '../../../src/bearers/rnode/radio.ts';
import { RNodeChannel } from '../../../src/bearers/rnode/simulator/channel.ts';
import { serveRNodeTcp } from '../../../src/bearers/rnode/simulator/serve.ts';
import { RNodeSimulator } from '../../../src/bearers/rnode/simulator/simulator.ts';
import { openSerialLink } from '../../../src/bearers/shared/links/serial-link.ts';
import { openTcpLink } from '../../../src/bearers/shared/links/tcp-link.ts';
import type { Link } from '../../../src/bearers/shared/links/link.ts';
import type { Clock, FakeClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { bearerContext } from '../../helpers/bearer-context.ts';

export interface Recorder {
  ctx: BearerContext;
  states: BearerState[];
  received: InboundFrame[];
  logs: string[];
  last(): BearerState | undefined;
}

export function recorder(settings: Record<string, unknown>, clock: Clock, name = 'lora'): Recorder {
  const states: BearerState[] = [];
  const received: InboundFrame[] = [];
  const logs: string[] = [];
  const log = createLogger({ level: 'debug', format: 'json', write: (line) => logs.push(line) });
  return {
    ctx: bearerContext({
      interfaceId: `ifc_${name}`,
      interfaceName: name,
      settings,
      log,
      clock,
      events: { receive: (f) => void received.push(f), state: (s) => states.push(s) },
    }),
    states,
    received,
    logs,
    last: () => states[states.length - 1],
  };
}

/** Opens tcp://host:port or a serial path, as the supervisor's openLink would (without its
 *  2 s ESP32 reset wait, which is the supervisor's and not the driver's). */
export function openTestLink(device: string): Promise<Link> {
  const tcp = /^tcp:\/\/([^:]+):(\d+)$/.exec(device);
  if (tcp) return openTcpLink(tcp[1], Number(tcp[2]), { connectTimeoutMs: 2000 });
  return openSerialLink(device);
}

export async function waitFor(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Lets pending socket I/O run (for "nothing happened" checks). */
export const settle = (ms = 50) => new Promise((r) => setTimeout(r, ms));

/**
 * A backlog rig: a simulated RNode on us-915 served over TCP with a FakeClock, a second radio on
 * the channel that records what it hears, the firmware's worst airtime figures at its updates, and
 * the real driver online through `ctx` (the tests' recorder or the bench's quiet context). The
 * backlog tests and `scripts/bench-rnode.ts` share it.
 */
export async function backlogRig(clock: FakeClock, makeCtx: (clock: FakeClock) => BearerContext) {
  const us915 = RNODE_PRESETS.find((p) => p.name === 'us-915')!;
  const channel = new RNodeChannel();
  const sim = new RNodeSimulator({ name: 'gateway', clock, channel });
  const listener = new RNodeSimulator({ name: 'listener', clock, channel });
  listener.fromHost(encodeConfiguration({ ...us915, st_alock: null, lt_alock: null }));
  const heard: string[] = [];
  listener.on('received', (p: Uint8Array) => heard.push(new TextDecoder().decode(p)));
  const worst = { short: 0, long: 0 };
  sim.on('airtime', (a: { short: number; long: number }) => {
    worst.short = Math.max(worst.short, a.short);
    worst.long = Math.max(worst.long, a.long);
  });
  const transport = await serveRNodeTcp(sim, { port: 0, clock });
  const bearer = new RNodeBearer(makeCtx(clock), { openLink: openTestLink });
  await bearer.start(transport.device);
  await waitFor('online', () => bearer.phase === 'online');
  /** Sends one text frame and moves the clock on in `stepMs` steps until the driver answers. */
  const send = async (i: number, text: string, stepMs: number): Promise<SendResult> => {
    let done = false;
    const result = bearer.send({ deliveryId: `d${i}`, messageId: `m${i}`, to: 'broadcast', channel: null, kind: 'text', text, payload: new TextEncoder().encode(text) })
      .then((r) => { done = true; return r; });
    while (!done) {
      clock.advance(stepMs);
      await new Promise((r) => setTimeout(r, 1));
    }
    return result;
  };
  /** Moves the clock on until the listener heard `count` frames, or `rounds` steps passed. */
  const flush = async (count: number, stepMs: number, rounds: number): Promise<void> => {
    for (let t = 0; t < rounds && heard.length < count; t++) {
      clock.advance(stepMs);
      await new Promise((r) => setTimeout(r, 1));
    }
  };
  const close = async (): Promise<void> => {
    await bearer.stop();
    await transport.close();
    sim.close();
    listener.close();
  };
  return { us915, sim, heard, worst, bearer, send, flush, close };
}
