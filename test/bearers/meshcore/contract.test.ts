// The MeshCore driver against the bearer contract (test/bearers/contract.ts), twice, with the
// link opened through ctx.openLink as the bridge opens it (open-link.ts with the module's
// simulator and TCP port 5000):
//  - over TCP to the companion-radio simulator (serveMeshCoreTcp), a real socket: the missing
//    device is a closed port that later starts listening; the device can be taken away and back;
//  - over sim://<channel>, in process: the missing device is a serial path that does not exist.
// Peers are second MeshCore bearers on the same simulated mesh. The suite's frames go to
// "broadcast": text as channel messages, binary as channel datagrams. Backoffs are short.
import { createServer } from 'node:net';
import type { BearerContext } from '../../../src/bearers/bearer.ts';
import { MeshCoreBearer } from '../../../src/bearers/meshcore/driver.ts';
import { MeshCoreDevice } from '../../../src/bearers/meshcore/simulator/device.ts';
import { meshcoreSimMesh, openMeshCoreSimLink } from '../../../src/bearers/meshcore/simulator/link.ts';
import { serveMeshCoreTcp, type SimTransport } from '../../../src/bearers/meshcore/simulator/serve.ts';
import { bearerContract, waitFor, type ContractHarness, type Peer } from '../contract.ts';

const SETTINGS = { command_timeout_s: 2, ack_timeout_max_s: 5 };
const LINK = { openSim: (channel: string) => openMeshCoreSimLink(channel), defaultTcpPort: 5000 };

function createBearer(ctx: BearerContext) {
  return new MeshCoreBearer(ctx, { openLink: ctx.openLink, timing: { backoffInitialMs: 50, backoffMaxMs: 250 } });
}

/** A second MeshCore bearer on `device`'s mesh, online. Its channel texts come from its
 *  radio's name and its datagrams from "channel:0", so no single expectedFrom. */
async function meshPeer(ctx: BearerContext, device: string): Promise<Peer> {
  const bearer = createBearer(ctx);
  await bearer.start(device);
  await waitFor('the peer online', () => bearer.phase === 'online', 10_000);
  return { send: (frame) => bearer.send(frame), close: () => bearer.stop() };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let meshes = 0;
const newMesh = (kind: string) => `mc-contract-${kind}-${process.pid}-${++meshes}`;

// ---- over TCP --------------------------------------------------------------------------

const served: Array<{ device: MeshCoreDevice; transport: SimTransport }> = [];
const meshOf = new Map<string, string>();

async function serveRadio(mesh: string, port = 0) {
  const device = new MeshCoreDevice({ name: `contract-${served.length + 1}`, mesh: meshcoreSimMesh(mesh) });
  const transport = await serveMeshCoreTcp(device, { port });
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
bearerContract('meshcore over tcp', overTcp).run();
const last = bearerContract('meshcore over sim://', overSim);
last.after(() => clearInterval(keepAlive));
last.run();
