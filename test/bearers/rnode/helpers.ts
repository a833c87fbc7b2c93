// Shared by the RNode driver tests: a BearerContext that records what the bearer reports,
// openers for real links (TCP and serial), and a poll for conditions that real sockets
// reach a moment later. Not a test file (no .test.ts): the runner does not run it.
import type { BearerContext, BearerState, InboundFrame } from '../../../src/bearers/bearer.ts';
import { openSerialLink } from '../../../src/bearers/shared/links/serial-link.ts';
import { openTcpLink } from '../../../src/bearers/shared/links/tcp-link.ts';
import type { Link } from '../../../src/bearers/shared/links/link.ts';
import type { Clock } from '../../../src/lib/clock.ts';
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
