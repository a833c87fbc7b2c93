import type { SimRunOptions, SimValues, SimulatorCommand } from '../../driver-module.ts';
import { type Command, hex, NAME_FIELD_SIZE, parseScope, type FloodScope, utf8 } from '../codec/index.ts';
import { optionList, parseTargets, runSimulator, SimUsageError } from '../../shared/simulators/run.ts';
import { MeshCoreDevice } from './device.ts';
import { MeshCoreMesh } from './mesh.ts';
import { SimRepeater } from './repeater.ts';
import { serveMeshCorePty, serveMeshCoreTcp } from './serve.ts';
import { MESHCORE_SIM_OPTIONS as OPTIONS, MESHCORE_SIM_USAGE as USAGE } from './usage.ts';

// `fieldbridge sim meshcore --tcp 127.0.0.1:5000 | --pty PATH ...`: runs simulated MeshCore
// companion radios by hand, for trying the bridge (or the MeshCore apps' clients) without a
// radio. Each --tcp or --pty is one node; all share one simulated mesh and are each other's
// contacts, so two of them make a link. Runs until SIGINT/SIGTERM (or the abort signal);
// SIGUSR1 drops every node's link, SIGUSR2 sends garbage. --tcp, --pty and --verbose mean
// what they mean for the other simulators. --scoped-repeater REGION puts the first node on one
// side of a simulated repeater that forwards floods only in REGION and drops unscoped ones
// (`region denyf *`), the others on the other side; --flood-scope REGION gives every node that
// default scope (docs/protocols/meshcore.md 6.12).

/** Returns the exit code: 0 after a clean stop, 2 for a usage error (message written). */
const run = (values: SimValues, options: SimRunOptions = {}): Promise<number> =>
  runSimulator(values, options, USAGE, parsePlan, (plan, write) => {
    const mesh = new MeshCoreMesh();
    if (plan.repeaterRegion) mesh.addRepeater(new SimRepeater({ name: 'repeater', sites: ['near', 'far'], allow: [plan.repeaterRegion], denyUnscoped: true }));
    return {
      make: (i) => {
        const name = plan.nodeName === undefined ? `meshcore${i + 1}` : plan.targets.length === 1 ? plan.nodeName : `${plan.nodeName} ${i + 1}`;
        const site = plan.repeaterRegion ? (i === 0 ? 'near' : 'far') : undefined;
        return new MeshCoreDevice({ name, mesh, site, defaultFloodScope: plan.floodScope, faults: { lostAcks: plan.loseAcks } });
      },
      serve: (device, t) => (t.kind === 'tcp' ? serveMeshCoreTcp(device, { host: t.host, port: t.port }) : serveMeshCorePty(device, { path: t.path })),
      announce: ({ device, transport }) => {
        watch(device, write, plan.verbose);
        write(`${label(device)}: listening on ${transport.device}`);
      },
    };
  });

const label = (d: MeshCoreDevice) => `${d.name} ${hex(d.publicKey.subarray(0, 6))}`;

function watch(device: MeshCoreDevice, write: (line: string) => void, verbose: boolean): void {
  const name = label(device);
  device.on('sent', (s: { to: string; text: string; expectedAck: number; flood: boolean }) =>
    write(`${name}: sent ${JSON.stringify(s.text)} to ${s.to} (${s.flood ? 'flood' : 'direct'}, ack ${s.expectedAck.toString(16).padStart(8, '0')})`));
  device.on('sent-channel', (s: { channel: number; text: string }) => write(`${name}: sent ${JSON.stringify(s.text)} on channel ${s.channel}`));
  device.on('received', (r: { from: string; text: string }) => write(`${name}: heard ${JSON.stringify(r.text)} from ${r.from}`));
  device.on('received-channel', (r: { channel: number; text: string }) => write(`${name}: heard ${JSON.stringify(r.text)} on channel ${r.channel}`));
  device.on('confirmed', (ack: number) => write(`${name}: ack ${ack.toString(16).padStart(8, '0')} confirmed`));
  if (verbose) device.on('host-command', (c: Command) => write(`${name}: host sent ${c.type === 'unknown' ? `unknown command ${c.code}` : c.type}`));
}

function parsePlan(values: SimValues) {
  const targets = parseTargets(values, { tcp: '127.0.0.1:5000', pty: '/tmp/meshcore0' });
  let nodeName: string | undefined;
  if (values['node-name'] !== undefined) {
    nodeName = String(values['node-name']);
    // A contact's name field is 32 bytes with its NUL; leave room for " N".
    const room = NAME_FIELD_SIZE - 1 - (targets.length > 1 ? 1 + String(targets.length).length : 0);
    if (nodeName.trim() === '' || utf8(nodeName).length > room) {
      throw new SimUsageError(`--node-name ${JSON.stringify(nodeName)}: expected 1 to ${room} bytes of UTF-8`);
    }
  }
  let loseAcks = 0;
  const lose = optionList(values['lose-acks']);
  if (lose.length > 0) {
    loseAcks = Number(lose[0]);
    if (!/^\d{1,6}$/.test(lose[0])) throw new SimUsageError(`--lose-acks ${JSON.stringify(lose[0])}: expected a count, for example 2`);
  }
  const region = (option: string): FloodScope | undefined => {
    const v = optionList(values[option])[0];
    if (v === undefined) return undefined;
    const scope = parseScope(v);
    if (scope.type !== 'region') throw new SimUsageError(`--${option} ${JSON.stringify(v)}: expected a region name, for example de-by${scope.type === 'invalid' ? ` (${scope.problem})` : ''}`);
    return scope.scope;
  };
  const repeaterRegion = region('scoped-repeater')?.name;
  const floodScope = region('flood-scope');
  return { targets, nodeName, loseAcks, verbose: values.verbose === true, repeaterRegion, floodScope };
}

export const meshcoreSimulator: SimulatorCommand = { usage: USAGE, options: OPTIONS, run };
