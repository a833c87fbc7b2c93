// The RNode driver against the bearer contract (test/bearers/contract.ts), twice, with the
// link opened through ctx.openLink (the bridge's open-link.ts with the RNode probe and sim://
// simulator, as contractContext builds it):
//  - over TCP to the RNode simulator (serveRNodeTcp), a real socket: the missing device is a
//    closed port that later starts listening, and the device can be taken away and brought
//    back (the server stops and starts on the same port);
//  - over sim://<channel>, the in-process simulator a user binds for demos: the missing
//    device is a serial path that does not exist, and the simulated radio can be unplugged
//    (its link closed, opening it refused) and plugged back in.
// Peers are second RNode bearers on the same simulated radio channel. Backoffs are short
// (the driver's timing option) so reconnection takes milliseconds, not seconds.
import { createServer } from 'node:net';
import type { BearerContext } from '../../../src/bearers/bearer.ts';
import { createRNodeBearer } from '../../../src/bearers/rnode/driver.ts';
import { rnodeProbe } from '../../../src/bearers/rnode/probe.ts';
import { RNodeChannel } from '../../../src/bearers/rnode/simulator/channel.ts';
import { openRNodeSimLink, type RNodeSimLink } from '../../../src/bearers/rnode/simulator/link.ts';
import { serveRNodeTcp, type SimTransport } from '../../../src/bearers/rnode/simulator/serve.ts';
import { RNodeSimulator } from '../../../src/bearers/rnode/simulator/simulator.ts';
import { bearerContract, waitFor, type ContractHarness, type Peer } from '../contract.ts';

const SETTINGS = { preset: 'us-915' };
/** What the RNode driver module gives the bridge's openLink (probe for auto, sim://). */
const LINK = { probe: rnodeProbe, openSim: (channel: string) => openRNodeSimLink(channel) };

/** The RNode driver module's factory (rnode/index.ts: openLink from the context) with short
 *  backoffs, which its timing option allows. */
function createBearer(ctx: BearerContext) {
  return createRNodeBearer(ctx, { openLink: ctx.openLink, timing: { backoffInitialMs: 50, backoffMaxMs: 250 } });
}

/** A peer: a second RNode bearer on `device`'s channel, online before it is handed out. */
async function rnodePeer(ctx: BearerContext, device: string): Promise<Peer> {
  const bearer = createBearer(ctx);
  await bearer.start(device);
  await waitFor('the peer RNode online', () => bearer.stats().connected === true, 10_000);
  // The RNode has no addresses: every frame is reported from "rnode".
  return { send: (frame) => bearer.send(frame), expectedFrom: 'rnode', close: () => bearer.stop() };
}

/** A TCP port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---- over TCP --------------------------------------------------------------------------

interface Radio {
  sim: RNodeSimulator;
  transport: SimTransport;
}
const radios: Radio[] = [];
const channelOf = new Map<string, RNodeChannel>();

async function serveRadio(channel: RNodeChannel, port = 0): Promise<Radio> {
  const sim = new RNodeSimulator({ name: `contract-${radios.length + 1}`, channel });
  const transport = await serveRNodeTcp(sim, { port });
  const radio = { sim, transport };
  radios.push(radio);
  channelOf.set(transport.device, channel);
  return radio;
}

const overTcp: ContractHarness = {
  settings: SETTINGS,
  link: LINK,
  create: createBearer,
  workingDevice: async () => (await serveRadio(new RNodeChannel())).transport.device,
  missingDevice: async () => {
    const port = await closedPort();
    return { device: `tcp://127.0.0.1:${port}`, appear: async () => void (await serveRadio(new RNodeChannel(), port)) };
  },
  missingDeviceCanAppear: true,
  reconnects: true,
  loseDevice: async (device) => {
    const radio = radios.find((r) => r.transport.device === device)!;
    await radio.transport.stop();
    return () => radio.transport.start();
  },
  makePeer: async (device, ctx) => rnodePeer(ctx, (await serveRadio(channelOf.get(device)!)).transport.device),
  cleanup: async () => {
    for (const r of radios.splice(0)) {
      await r.transport.close();
      r.sim.close();
    }
    channelOf.clear();
  },
};

// ---- over sim:// -------------------------------------------------------------------------

// The simulated RNodes behind sim://, by channel, so a test can unplug them: while a channel
// is unplugged its links are closed and opening it fails, as a USB radio pulled out.
const simLinks = new Map<string, RNodeSimLink[]>();
const unplugged = new Set<string>();
let simChannels = 0;

const overSim: ContractHarness = {
  settings: SETTINGS,
  link: {
    probe: rnodeProbe,
    openSim: async (channel) => {
      if (unplugged.has(channel)) throw new Error(`sim://${channel} is unplugged`);
      const link = await openRNodeSimLink(channel);
      simLinks.set(channel, [...(simLinks.get(channel) ?? []), link]);
      return link;
    },
  },
  create: createBearer,
  workingDevice: async () => `sim://rnode-contract-${process.pid}-${++simChannels}`,
  missingDevice: async () => ({ device: '/dev/serial/by-id/does-not-exist' }),
  reconnects: true,
  loseDevice: async (device) => {
    const channel = device.slice('sim://'.length);
    unplugged.add(channel);
    for (const link of simLinks.get(channel) ?? []) await link.close();
    return async () => void unplugged.delete(channel);
  },
  makePeer: (device, ctx) => rnodePeer(ctx, device),
  cleanup: async () => {
    simLinks.clear();
    unplugged.clear();
  },
};

bearerContract('rnode over tcp', overTcp).run();
bearerContract('rnode over sim://', overSim).run();
