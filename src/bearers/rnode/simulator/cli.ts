import type { SimRunOptions, SimValues, SimulatorCommand } from '../../driver-module.ts';
import { RNodeChannel } from './channel.ts';
import { serveRNodePty, serveRNodeTcp } from './serve.ts';
import { RNodeSimulator, type EchoField } from './simulator.ts';
import { commandName } from '../protocol.ts';
import { ECHO_TYPES } from '../verify.ts';
import { parseTargets, runSimulator, SimUsageError } from '../../shared/simulators/run.ts';
import { RNODE_SIM_OPTIONS as OPTIONS, RNODE_SIM_USAGE as USAGE } from './usage.ts';

// `fieldbridge sim rnode --tcp 127.0.0.1:7633 | --pty PATH ...`: runs simulated RNodes by
// hand, for trying the bridge without a radio (docs/design.md section 7). Each --tcp or --pty is
// one radio; all of them share one simulated channel, so two of them make a link. Runs until
// SIGINT/SIGTERM (or the abort signal); SIGUSR1 drops every radio's link, SIGUSR2 sends
// garbage, to watch the bridge recover.

const ECHO_FIELDS: readonly EchoField[] = ECHO_TYPES;


/** Returns the exit code: 0 after a clean stop, 2 for a usage error (message written). */
const run = (values: SimValues, options: SimRunOptions = {}): Promise<number> =>
  runSimulator(values, options, USAGE, parsePlan, (plan, write) => {
    const channel = new RNodeChannel(plan.quality ? { linkQuality: () => plan.quality! } : {});
    return {
      make: (i) => new RNodeSimulator({
        name: `rnode${i + 1}`,
        channel,
        firmware: plan.firmware,
        maxTxPowerDbm: plan.maxTxPower,
        faults: { withholdReady: plan.withholdReady, wrongEcho: plan.wrongEcho },
      }),
      serve: (sim, t) => (t.kind === 'tcp' ? serveRNodeTcp(sim, { host: t.host, port: t.port }) : serveRNodePty(sim, { path: t.path })),
      announce: ({ device, transport }) => {
        watch(device, write, plan.verbose);
        write(`${device.name}: listening on ${transport.device}`);
      },
    };
  });

function watch(sim: RNodeSimulator, write: (line: string) => void, verbose: boolean): void {
  sim.on('config', (c) => {
    if (c.radio_on) write(`${sim.name}: radio on ${c.frequency_hz} Hz, ${c.bandwidth_hz} Hz, SF${c.sf}, CR4/${c.cr}, ${c.tx_power_dbm} dBm`);
  });
  sim.on('transmitted', (p: Uint8Array, ms: number) => write(`${sim.name}: sent ${p.length} bytes (${ms.toFixed(1)} ms on air)`));
  sim.on('received', (p: Uint8Array, q: { rssi_dbm: number; snr_db: number }) => write(`${sim.name}: heard ${p.length} bytes at ${q.rssi_dbm} dBm, SNR ${q.snr_db} dB`));
  sim.on('leave', () => write(`${sim.name}: host left`));
  if (verbose) sim.on('host-frame', (f: { command: number; payload: Uint8Array }) => write(`${sim.name}: host sent ${commandName(f.command)} (${f.payload.length} bytes)`));
}


function parsePlan(values: SimValues) {
  const targets = parseTargets(values, { tcp: '127.0.0.1:7633', pty: '/tmp/rnode0' });
  let firmware: { major: number; minor: number } | undefined;
  if (values.fw !== undefined) {
    const m = /^(\d{1,3})\.(\d{1,3})$/.exec(String(values.fw));
    if (!m || Number(m[1]) > 255 || Number(m[2]) > 255) throw new SimUsageError(`--fw ${JSON.stringify(values.fw)}: expected MAJOR.MINOR, for example 1.86`);
    firmware = { major: Number(m[1]), minor: Number(m[2]) };
  }
  const num = (name: string, min: number, max: number) => {
    const raw = values[name];
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) throw new SimUsageError(`--${name} ${JSON.stringify(raw)}: expected a number from ${min} to ${max}`);
    return n;
  };
  const maxTxPower = num('max-tx-power', 0, 37);
  const rssi = num('rssi', -150, -20);
  const snr = num('snr', -30, 30);
  if ((rssi === undefined) !== (snr === undefined)) throw new SimUsageError('--rssi and --snr go together');
  const wrongEcho = values['wrong-echo'] === undefined ? null : (String(values['wrong-echo']) as EchoField);
  if (wrongEcho !== null && !ECHO_FIELDS.includes(wrongEcho)) throw new SimUsageError(`--wrong-echo ${JSON.stringify(wrongEcho)}: expected one of ${ECHO_FIELDS.join(', ')}`);
  return {
    targets,
    firmware,
    maxTxPower,
    quality: rssi !== undefined && snr !== undefined ? { rssi_dbm: rssi, snr_db: snr } : null,
    withholdReady: values['withhold-ready'] === true,
    wrongEcho,
    verbose: values.verbose === true,
  };
}

export const rnodeSimulator: SimulatorCommand = { usage: USAGE, options: OPTIONS, run };
