import { FakeClock } from '../../../src/lib/clock.ts';
import { silentLogger } from '../../../src/lib/log.ts';
import type { InboundFrame, NodeReport, OutboundFrame, BearerState } from '../../../src/bearers/bearer.ts';
import { AprsBearer } from '../../../src/bearers/aprs/driver.ts';
import { AprsChannel, SimTnc } from '../../../src/bearers/aprs/simulator/channel.ts';
import { openLink } from '../../../src/bearers/shared/links/open-link.ts';
import { serveDeviceTcp, type TcpTransport } from '../../../src/bearers/shared/simulators/tcp.ts';
import { bearerContext } from '../../helpers/bearer-context.ts';

// An aprs bearer under test, with what it reported, and a simulated channel whose KISS TNC it
// reaches over a real TCP socket (the way it reaches Dire Wolf's KISS port).

export interface Harness {
  bearer: AprsBearer;
  clock: FakeClock;
  heard: InboundFrame[];
  nodes: NodeReport[];
  states: BearerState[];
  channel: AprsChannel;
  tnc: TcpTransport | null;
  stop(): Promise<void>;
}

export async function harness(settings: Record<string, unknown>, options: { tnc?: boolean; device?: string; storeFails?: boolean } = {}): Promise<Harness> {
  const clock = new FakeClock(Date.parse('2026-03-09T12:00:00Z'));
  const channel = new AprsChannel();
  const heard: InboundFrame[] = [];
  const nodes: NodeReport[] = [];
  const states: BearerState[] = [];
  let tnc: TcpTransport | null = null;
  if (options.tnc !== false) tnc = await serveDeviceTcp(new SimTnc(channel, 'tnc1'), { port: 0 });
  const ctx = bearerContext({
    interfaceId: 'ifc_aprs', interfaceName: 'aprs', settings: { rf_min_gap_s: 0, ...settings }, clock,
    log: silentLogger,
    events: { receive: (f) => (heard.push(f), options.storeFails ? false : true), state: (s) => void states.push(s), nodes: (r) => void nodes.push(...r) },
    openLink: (device) => openLink(device, { defaultTcpPort: 8001 }),
  });
  const bearer = new AprsBearer(ctx);
  await bearer.start(tnc ? tnc.device : (options.device ?? 'auto'));
  const h: Harness = {
    bearer, clock, heard, nodes, states, channel, tnc,
    stop: async () => {
      live.delete(h);
      await bearer.stop();
      await tnc?.close();
    },
  };
  live.add(h);
  return h;
}

const live = new Set<Harness>();

/** Stops every harness a test left running (one that failed before its own stop). */
export async function stopAll(): Promise<void> {
  for (const h of [...live]) await h.stop();
}

export async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const textFrame = (to: string, text: string, over: Partial<OutboundFrame> = {}): OutboundFrame => ({
  deliveryId: 'dlv_1', messageId: 'msg_1', to, channel: null, kind: 'text', text, payload: new TextEncoder().encode(text), ...over,
});
