// The Iridium driver against the bearer contract (test/bearers/contract.ts), over TCP to the
// modem simulator (serveIridiumTcp, a real socket) and over sim://. The peer is a second
// iridium bearer on the same simulated gateway that writes RockBLOCK to RockBLOCK
// (docs/iridium.md): its frames reach the bearer under test through a ring alert. The suite's
// own frames go to `gateway`, where the mtu is 340 bytes (to a RockBLOCK it is 331, and the
// receiving modem takes at most 270): the gateway is what hears them, so peerHears is false
// (test/bearers/iridium/driver.test.ts checks what the gateway recorded). Serial numbers are
// handed out per gateway in order: the bearer under test opens first (0010001), the peer
// second (0010002).
import { createServer } from 'node:net';
import type { BearerContext } from '../../../src/bearers/bearer.ts';
import { IridiumBearer } from '../../../src/bearers/iridium/driver.ts';
import { IridiumGateway } from '../../../src/bearers/iridium/simulator/gateway.ts';
import { openIridiumSimLink } from '../../../src/bearers/iridium/simulator/link.ts';
import { IridiumModem } from '../../../src/bearers/iridium/simulator/modem.ts';
import { serveIridiumTcp, type SimTransport } from '../../../src/bearers/iridium/simulator/serve.ts';
import { bearerContract, waitFor, type ContractHarness, type Peer } from '../contract.ts';

const UNDER_TEST = 'RB0010001';
const PEER = 'RB0010002';
const SETTINGS = { session_interval_s: 0, failure_backoff_s: 0 };
const TIMING = { backoffInitialMs: 50, backoffMaxMs: 250, commandTimeoutMs: 1000, writeTimeoutMs: 3000 };
let channels = 0;

function createBearer(ctx: BearerContext) {
  return new IridiumBearer(ctx, { openLink: ctx.openLink, timing: TIMING });
}

/** A second iridium bearer on the gateway behind `device`, online and registered. */
async function iridiumPeer(ctx: BearerContext, device: string, open: (d: string) => Promise<import('../../../src/bearers/shared/links/link.ts').Link>): Promise<Peer> {
  const bearer = new IridiumBearer({ ...ctx, openLink: open }, { openLink: open, timing: TIMING });
  await bearer.start(device);
  await waitFor('the peer online and registered', () => bearer.phase === 'online' && bearer.stats().registered === true, 10_000);
  return { send: (frame) => bearer.send({ ...frame, to: UNDER_TEST }), expectedFrom: PEER, close: () => bearer.stop() };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const served: SimTransport[] = [];
const gatewayOf = new Map<string, IridiumGateway>();

async function serveModem(gateway: IridiumGateway, port = 0): Promise<SimTransport> {
  const t = await serveIridiumTcp(new IridiumModem({ name: `contract-${served.length}`, gateway }), { port });
  served.push(t);
  gatewayOf.set(t.device, gateway);
  return t;
}

const overTcp: ContractHarness = {
  settings: SETTINGS,
  destination: 'gateway',
  peerHears: false,
  create: createBearer,
  workingDevice: async () => (await serveModem(new IridiumGateway())).device,
  missingDevice: async () => {
    const port = await closedPort();
    return { device: `tcp://127.0.0.1:${port}`, appear: async () => void (await serveModem(new IridiumGateway(), port)) };
  },
  missingDeviceCanAppear: true,
  reconnects: true,
  loseDevice: async (device) => {
    const t = served.find((s) => s.device === device)!;
    await t.stop();
    return () => t.start();
  },
  makePeer: async (device, ctx) => {
    const t = await serveModem(gatewayOf.get(device)!);
    return iridiumPeer(ctx, t.device, ctx.openLink);
  },
  cleanup: async () => {
    for (const t of served.splice(0)) await t.close();
    gatewayOf.clear();
  },
};

const overSim: ContractHarness = {
  settings: SETTINGS,
  destination: 'gateway',
  peerHears: false,
  link: { openSim: (channel) => openIridiumSimLink(channel) },
  create: createBearer,
  workingDevice: async () => `sim://iridium-contract-${process.pid}-${++channels}`,
  missingDevice: async () => ({ device: '/dev/serial/by-id/does-not-exist' }),
  reconnects: true,
  makePeer: (device, ctx) => iridiumPeer(ctx, device, (d) => openIridiumSimLink(d.slice('sim://'.length))),
  cleanup: async () => {},
};

const keepAlive = setInterval(() => {}, 1000);
bearerContract('iridium over tcp', overTcp).run();
const last = bearerContract('iridium over sim://', overSim);
last.after(() => clearInterval(keepAlive));
last.run();
