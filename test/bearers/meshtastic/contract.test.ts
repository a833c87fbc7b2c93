// The Meshtastic driver against the bearer contract (test/bearers/contract.ts), twice, with
// the link opened through ctx.openLink as the bridge opens it (open-link.ts with the module's
// probe, simulator and TCP port 4403):
//  - over TCP to the firmware simulator (serveMeshtasticTcp), a real socket: the missing device
//    is a closed port that later starts listening; the device can be taken away and back;
//  - over sim://<channel>, the in-process simulator: the missing device is a serial path that
//    does not exist.
// Peers are second Meshtastic bearers on the same simulated mesh. Backoffs are short.
import { createServer } from 'node:net';
import type { BearerContext } from '../../../src/bearers/bearer.ts';
import { MeshtasticBearer } from '../../../src/bearers/meshtastic/driver.ts';
import { meshtasticProbe } from '../../../src/bearers/meshtastic/probe.ts';
import { MeshtasticDevice } from '../../../src/bearers/meshtastic/simulator/device.ts';
import { meshtasticSimMesh, openMeshtasticSimLink } from '../../../src/bearers/meshtastic/simulator/link.ts';
import { serveMeshtasticTcp, type SimTransport } from '../../../src/bearers/meshtastic/simulator/serve.ts';
import { bearerContract, waitFor, type ContractHarness, type Peer } from '../contract.ts';

const SETTINGS = { handshake_timeout_s: 3, ack_timeout_s: 5 };
const LINK = { probe: meshtasticProbe, openSim: (channel: string) => openMeshtasticSimLink(channel), defaultTcpPort: 4403 };

function createBearer(ctx: BearerContext) {
  return new MeshtasticBearer(ctx, { openLink: ctx.openLink, timing: { wakeMs: 5, backoffInitialMs: 50, backoffMaxMs: 250 } });
}

/** A second Meshtastic bearer on `device`'s mesh, online; its frames come from its node id. */
async function meshPeer(ctx: BearerContext, device: string): Promise<Peer> {
  const bearer = createBearer(ctx);
  await bearer.start(device);
  await waitFor('the peer online', () => bearer.phase === 'online', 10_000);
  return { send: (frame) => bearer.send(frame), expectedFrom: String(bearer.stats().node_id), close: () => bearer.stop() };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---- over TCP --------------------------------------------------------------------------

/** A mesh with one remote node listening, so a broadcast has a neighbour to repeat it (its
 *  acknowledgement): a lone radio's broadcast fails with MAX_RETRANSMIT, as on hardware. */
function newMesh(kind: string): string {
  const name = `mt-contract-${kind}-${process.pid}-${++meshes}`;
  meshtasticSimMesh(name).addRemoteNode({ num: 0x00c0ffee, long_name: 'listener' });
  return name;
}

const served: Array<{ device: MeshtasticDevice; transport: SimTransport }> = [];
const meshOf = new Map<string, string>();
let meshes = 0;

async function serveRadio(mesh: string, port = 0) {
  const device = new MeshtasticDevice({ name: `contract-${served.length + 1}`, mesh: meshtasticSimMesh(mesh) });
  const transport = await serveMeshtasticTcp(device, { port });
  served.push({ device, transport });
  meshOf.set(transport.device, mesh);
  return transport;
}

const overTcp: ContractHarness = {
  settings: SETTINGS,
  link: LINK,
  create: createBearer,
  workingDevice: async () => (await serveRadio(newMesh('tcp'))).device,
  missingDevice: async () => {
    const port = await closedPort();
    return { device: `tcp://127.0.0.1:${port}`, appear: async () => void (await serveRadio(newMesh('tcp'), port)) };
  },
  missingDeviceCanAppear: true,
  reconnects: true,
  loseDevice: async (device) => {
    const radio = served.find((r) => r.transport.device === device)!;
    await radio.transport.stop();
    return () => radio.transport.start();
  },
  makePeer: async (device, ctx) => meshPeer(ctx, (await serveRadio(meshOf.get(device)!)).device),
  cleanup: async () => {
    for (const r of served.splice(0)) {
      await r.transport.close();
      r.device.close();
    }
    meshOf.clear();
  },
};

// ---- over sim:// -------------------------------------------------------------------------

const overSim: ContractHarness = {
  settings: SETTINGS,
  link: LINK,
  create: createBearer,
  workingDevice: async () => `sim://${newMesh('sim')}`,
  missingDevice: async () => ({ device: '/dev/serial/by-id/does-not-exist' }),
  reconnects: true,
  makePeer: (device, ctx) => meshPeer(ctx, device),
  cleanup: async () => {},
};

// The driver's and the simulator's timers are unref'd; the suite's waits keep the process up.
const keepAlive = setInterval(() => {}, 1000);
bearerContract('meshtastic over tcp', overTcp).run();
const last = bearerContract('meshtastic over sim://', overSim);
last.after(() => clearInterval(keepAlive));
last.run();
