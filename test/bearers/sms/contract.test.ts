// The SMS driver against the bearer contract (test/bearers/contract.ts), over TCP to the modem
// simulator (serveSmsTcp, a real socket) and over sim://. Peers are second SMS bearers on the
// same simulated network with a known number, which the suite's frames are addressed to.
import { createServer } from 'node:net';
import type { BearerContext } from '../../../src/bearers/bearer.ts';
import { SmsBearer } from '../../../src/bearers/sms/driver.ts';
import { SmsModem } from '../../../src/bearers/sms/simulator/modem.ts';
import { openSmsSimLink, smsSimNetwork } from '../../../src/bearers/sms/simulator/link.ts';
import { serveSmsTcp, type SimTransport } from '../../../src/bearers/sms/simulator/serve.ts';
import { bearerContract, waitFor, type ContractHarness, type Peer } from '../contract.ts';

const PEER = '+15557770001';
const SETTINGS = { poll_s: 5 };
const TIMING = { backoffInitialMs: 50, backoffMaxMs: 250, commandTimeoutMs: 1000, sendTimeoutMs: 5000 };
let networks = 0;

function createBearer(ctx: BearerContext) {
  return new SmsBearer(ctx, { openLink: ctx.openLink, timing: TIMING });
}

/** A second SMS bearer with the number PEER on `network`, online. */
async function smsPeer(ctx: BearerContext, network: string, transports: SimTransport[] | null): Promise<Peer> {
  let device = `sim://${network}`;
  let open = (d: string) => openSmsSimLink(d.slice('sim://'.length), { number: PEER });
  if (transports) {
    const t = await serveSmsTcp(new SmsModem({ name: 'peer', network: smsSimNetwork(network), number: PEER }));
    transports.push(t);
    device = t.device;
    open = ctx.openLink as never;
  }
  const bearer = new SmsBearer({ ...ctx, openLink: open }, { openLink: open, timing: TIMING });
  await bearer.start(device);
  await waitFor('the peer online', () => bearer.phase === 'online', 10_000);
  // The peer writes to the bearer under test: the network's other number.
  const target = () => smsSimNetwork(network).numbers.find((n) => n !== PEER)!;
  return { send: (frame) => bearer.send({ ...frame, to: target() }), expectedFrom: PEER, close: () => bearer.stop() };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const served: SimTransport[] = [];
const networkOf = new Map<string, string>();

async function serveModem(network: string, port = 0): Promise<SimTransport> {
  const t = await serveSmsTcp(new SmsModem({ name: `contract-${served.length}`, network: smsSimNetwork(network) }), { port });
  served.push(t);
  networkOf.set(t.device, network);
  return t;
}

const overTcp: ContractHarness = {
  settings: SETTINGS,
  destination: PEER,
  create: createBearer,
  workingDevice: async () => (await serveModem(`sms-contract-tcp-${process.pid}-${++networks}`)).device,
  missingDevice: async () => {
    const port = await closedPort();
    return { device: `tcp://127.0.0.1:${port}`, appear: async () => void (await serveModem(`sms-contract-tcp-${process.pid}-${++networks}`, port)) };
  },
  missingDeviceCanAppear: true,
  reconnects: true,
  loseDevice: async (device) => {
    const t = served.find((s) => s.device === device)!;
    await t.stop();
    return () => t.start();
  },
  makePeer: (device, ctx) => smsPeer(ctx, networkOf.get(device)!, served),
  cleanup: async () => {
    for (const t of served.splice(0)) await t.close();
    networkOf.clear();
  },
};

const overSim: ContractHarness = {
  settings: SETTINGS,
  destination: PEER,
  link: { openSim: (channel) => openSmsSimLink(channel) },
  create: createBearer,
  workingDevice: async () => `sim://sms-contract-${process.pid}-${++networks}`,
  missingDevice: async () => ({ device: '/dev/serial/by-id/does-not-exist' }),
  reconnects: true,
  makePeer: (device, ctx) => smsPeer(ctx, device.slice('sim://'.length), null),
  cleanup: async () => {},
};

const keepAlive = setInterval(() => {}, 1000);
bearerContract('sms over tcp', overTcp).run();
const last = bearerContract('sms over sim://', overSim);
last.after(() => clearInterval(keepAlive));
last.run();
