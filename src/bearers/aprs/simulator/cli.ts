import type { SimRunOptions, SimValues, SimulatorCommand } from '../../driver-module.ts';
import { serveDevicePty } from '../../shared/simulators/pty.ts';
import { optionList, parseTargets, runSimulator, SimUsageError } from '../../shared/simulators/run.ts';
import { serveDeviceTcp } from '../../shared/simulators/tcp.ts';
import { CALLSIGN } from '../settings.ts';
import { AprsIsStandIn } from './aprs-is-server.ts';
import { AprsChannel, SimTnc, type SimStationOptions } from './channel.ts';
import { APRS_SIM_OPTIONS as OPTIONS, APRS_SIM_USAGE as USAGE } from './usage.ts';

// `fieldbridge sim aprs --tcp 127.0.0.1:8001 --station N0CALL-7,echo`: KISS TNCs on one
// simulated APRS channel with simulated stations, and optionally an APRS-IS stand-in, for
// trying the bridge without a radio or a licence.

const run = (values: SimValues, options: SimRunOptions = {}): Promise<number> =>
  runSimulator(values, options, USAGE, parsePlan, (plan, write) => {
    const channel = new AprsChannel();
    for (const s of plan.stations) channel.addStation(s);
    channel.on('frame', (line: string) => write(`air: ${line}`));
    let server: AprsIsStandIn | null = null;
    return {
      make: (i) => new SimTnc(channel, `tnc${i + 1}`),
      serve: (tnc, t) => (t.kind === 'tcp' ? serveDeviceTcp(tnc, { host: t.host, port: t.port }) : serveDevicePty(tnc, { path: t.path })),
      announce: ({ device, transport }) => write(`${device.name}: KISS TNC listening on ${transport.device}`),
      started: () => {
        if (plan.aprsIs === null) return;
        const at = plan.aprsIs;
        server = new AprsIsStandIn();
        server.on('login', (l: { callsign: string; verified: boolean; filter: string | null }) => write(`aprs-is: login ${l.callsign} ${l.verified ? 'verified' : 'unverified'}${l.filter ? ` filter ${l.filter}` : ''}`));
        server.on('packet', (line: string) => write(`aprs-is: ${line}`));
        void server.listen(at.port, at.host).then(() => write(`aprs-is: stand-in listening on ${at.host}:${at.port}`), (e: Error) => write(`aprs-is: ${e.message}`));
        return () => void server?.close();
      },
    };
  });

function parsePlan(values: SimValues) {
  const targets = parseTargets(values, { tcp: '127.0.0.1:8001', pty: '/tmp/kiss0' });
  const stations: SimStationOptions[] = optionList(values.station).map((spec) => {
    const [call, ...flags] = spec.split(',');
    if (!CALLSIGN.safeParse(call).success) throw new SimUsageError(`--station ${JSON.stringify(spec)}: ${JSON.stringify(call)} is not a callsign (e.g. N0CALL-7)`);
    const unknown = flags.filter((f) => !['digi', 'noack', 'echo'].includes(f));
    if (unknown.length > 0) throw new SimUsageError(`--station ${JSON.stringify(spec)}: unknown flag ${unknown[0]} (digi, noack, echo)`);
    return { callsign: call.toUpperCase(), digipeater: flags.includes('digi'), acks: !flags.includes('noack'), reply: flags.includes('echo') ? (text: string) => `echo: ${text}`.slice(0, 67) : null };
  });
  let aprsIs: { host: string; port: number } | null = null;
  if (typeof values['aprs-is'] === 'string') {
    const m = /^([^:\s]+):(\d{1,5})$/.exec(values['aprs-is']);
    if (!m) throw new SimUsageError(`--aprs-is ${JSON.stringify(values['aprs-is'])}: expected HOST:PORT, for example 127.0.0.1:14580`);
    aprsIs = { host: m[1], port: Number(m[2]) };
  }
  return { targets, stations, aprsIs, verbose: values.verbose === true };
}

export const aprsSimulator: SimulatorCommand = { usage: USAGE, options: OPTIONS, run };
