import type { SimRunOptions, SimValues, SimulatorCommand } from '../../driver-module.ts';
import { formatNodeId, type MeshPacket, portName, ROUTING_ERROR, type ToRadio, toRadioVariant } from '../codec/messages.ts';
import { MeshtasticDevice } from './device.ts';
import { MeshtasticMesh, type RoutingErrorName } from './mesh.ts';
import { serveMeshtasticPty, serveMeshtasticTcp } from './serve.ts';
import { FIRMWARE_LINES, FIRMWARE_PROFILES, type FirmwareLine } from './firmware.ts';
import { utf8Length } from './state.ts';
import { parseTargets, runSimulator, SimUsageError } from '../../shared/simulators/run.ts';
import { MESHTASTIC_SIM_OPTIONS as OPTIONS, MESHTASTIC_SIM_USAGE as USAGE } from './usage.ts';

// `fieldbridge sim meshtastic --tcp 127.0.0.1:4403 | --pty PATH ...`: runs simulated Meshtastic
// nodes by hand, for trying the bridge without a radio. Each --tcp or --pty is one node; all
// of them share one simulated mesh, so two of them make a link. Runs until SIGINT/SIGTERM (or
// the abort signal); SIGUSR1 drops every node's link, SIGUSR2 sends garbage, to watch the
// bridge recover. --tcp, --pty and --verbose mean what they mean for `sim rnode`.

const REFUSALS = Object.keys(ROUTING_ERROR).filter((n) => n !== 'NONE') as RoutingErrorName[];


/** Returns the exit code: 0 after a clean stop, 2 for a usage error (message written). */
const run = (values: SimValues, options: SimRunOptions = {}): Promise<number> =>
  runSimulator(values, options, USAGE, parsePlan, (plan, write) => {
    const mesh = new MeshtasticMesh();
    return {
      make: (i) => {
        const longName = plan.nodeName === undefined ? undefined : plan.targets.length === 1 ? plan.nodeName : `${plan.nodeName} ${i + 1}`;
        return new MeshtasticDevice({ name: `meshtastic${i + 1}`, mesh, longName, firmware: plan.firmware, faults: { refuseAcks: plan.refuseAcks } });
      },
      serve: (device, t) => (t.kind === 'tcp' ? serveMeshtasticTcp(device, { host: t.host, port: t.port }) : serveMeshtasticPty(device, { path: t.path })),
      announce: ({ device, transport }) => {
        watch(device, write, plan.verbose);
        write(`${label(device)}: listening on ${transport.device}`);
      },
    };
  });

const label = (d: MeshtasticDevice) => `${d.name} ${formatNodeId(d.num)}`;

function describe(p: MeshPacket): string {
  const to = p.to === undefined ? '?' : p.to === 0xffffffff ? 'everyone' : formatNodeId(p.to);
  const port = p.decoded ? portName(p.decoded.portnum ?? 0) : 'encrypted';
  const size = p.decoded?.payload?.length ?? p.encrypted?.length ?? 0;
  return `${port} (${size} bytes) to ${to}, id ${(p.id ?? 0).toString(16)}${p.want_ack ? ', want_ack' : ''}`;
}

function watch(device: MeshtasticDevice, write: (line: string) => void, verbose: boolean): void {
  const name = label(device);
  device.on('handshake', (nonce: number) => write(`${name}: host handshake (nonce ${nonce})`));
  device.on('transmitted', (p: MeshPacket) => write(`${name}: sent ${describe(p)}`));
  device.on('received', (p: MeshPacket) => write(`${name}: heard ${describe(p)} from ${formatNodeId(p.from ?? 0)} at ${p.rx_rssi} dBm, SNR ${p.rx_snr} dB`));
  device.on('admin', (m: object) => write(`${name}: admin ${Object.keys(m).filter((k) => k !== 'session_passkey' && k !== '$unknown').join(', ') || 'unknown'}`));
  device.on('rebooted', (reason: string) => write(`${name}: rebooted (${reason})`));
  device.on('replayed', (count: number) => write(`${name}: replayed ${count} node-database records after the handshake`));
  device.on('disconnect', () => write(`${name}: host disconnected`));
  if (verbose) device.on('host-frame', (m: ToRadio) => write(`${name}: host sent ${toRadioVariant(m) ?? 'an unknown ToRadio'}`));
}


function parsePlan(values: SimValues) {
  const targets = parseTargets(values, { tcp: '127.0.0.1:4403', pty: '/tmp/meshtastic0' });
  const firmware = (values.firmware === undefined ? '2.7' : String(values.firmware)) as FirmwareLine;
  if (!FIRMWARE_LINES.includes(firmware)) throw new SimUsageError(`--firmware ${JSON.stringify(values.firmware)}: expected one of ${FIRMWARE_LINES.join(', ')}`);
  let nodeName: string | undefined;
  if (values['node-name'] !== undefined) {
    nodeName = String(values['node-name']);
    // The longest name the node keeps (2.7: mesh.options User.long_name; 2.8: 24 bytes), with room for " N".
    const room = FIRMWARE_PROFILES[firmware].longNameStoredBytes - (targets.length > 1 ? 1 + String(targets.length).length : 0);
    if (nodeName.trim() === '' || utf8Length(nodeName) > room) {
      throw new SimUsageError(`--node-name ${JSON.stringify(nodeName)}: expected 1 to ${room} bytes of UTF-8`);
    }
  }
  let refuseAcks: RoutingErrorName | null = null;
  if (values['refuse-acks'] !== undefined) {
    const reason = String(values['refuse-acks']).toUpperCase();
    if (!REFUSALS.includes(reason as RoutingErrorName)) {
      throw new SimUsageError(`--refuse-acks ${JSON.stringify(values['refuse-acks'])}: expected a routing error, one of ${REFUSALS.join(', ')}`);
    }
    refuseAcks = reason as RoutingErrorName;
  }
  return { targets, nodeName, refuseAcks, firmware, verbose: values.verbose === true };
}

export const meshtasticSimulator: SimulatorCommand = { usage: USAGE, options: OPTIONS, run };
