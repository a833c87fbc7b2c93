import { statSync } from 'node:fs';
import type { SimRunOptions, SimValues, SimulatorCommand } from '../../driver-module.ts';
import { optionList, parseTargets, runSimulator, SimUsageError } from '../../shared/simulators/run.ts';
import { IridiumGateway, type MoRecord } from './gateway.ts';
import { watchInbox, type InboxWatch } from './inbox.ts';
import { IridiumModem, type SessionReport } from './modem.ts';
import { serveIridiumPty, serveIridiumTcp } from './serve.ts';
import { IRIDIUM_SIM_OPTIONS as OPTIONS, IRIDIUM_SIM_USAGE as USAGE } from './usage.ts';

// `fieldbridge sim iridium --tcp 127.0.0.1:7800 | --pty PATH ...`: runs simulated Iridium SBD
// modems (9602/9603/RockBLOCK) by hand, for trying the bridge without a satellite or credits.
// Each --tcp or --pty is one modem; all share one simulated gateway and sky, so RockBLOCKs can
// write to each other (`RB` + the 7-digit serial). --inbox DIR turns files dropped there into
// MT messages for the first modem (inbox.ts). Runs until SIGINT/SIGTERM (or the abort signal);
// SIGUSR1 drops every link, SIGUSR2 sends garbage. --tcp, --pty and --verbose mean what they
// mean for the other simulators.

/** Returns the exit code: 0 after a clean stop, 2 for a usage error (message written). */
const run = (values: SimValues, options: SimRunOptions = {}): Promise<number> =>
  runSimulator(values, options, USAGE, parsePlan, (plan, write) => {
    const gateway = new IridiumGateway({ bars: plan.bars });
    gateway.script(...plan.sky);
    return {
      // A fresh CSQ reading takes a moment on a real modem (iridium-sbd.md 3.5).
      make: (i) => new IridiumModem({ name: `iridium${i + 1}`, gateway, imei: plan.imeis[i], sessionMs: plan.sessionMs, csqDelayMs: 1000 }),
      serve: (modem, t) => (t.kind === 'tcp' ? serveIridiumTcp(modem, { host: t.host, port: t.port }) : serveIridiumPty(modem, { path: t.path })),
      announce: ({ device, transport }) => {
        watch(device, write, plan.verbose);
        write(`${device.name} IMEI ${device.imei} serial ${device.serial}: listening on ${transport.device}`);
      },
      started: (modems) => {
        if (plan.inbox === null) return;
        const first = modems[0].device;
        const inbox: InboxWatch = watchInbox(plan.inbox, {
          write,
          queue: (bytes, name) => {
            gateway.queueMt(first.imei, bytes);
            write(`inbox: queued ${name} (${bytes.length} bytes) for ${first.name}, ${gateway.queued(first.imei)} waiting`);
          },
        });
        write(`inbox: watching ${plan.inbox} for MT messages to ${first.name}`);
        return () => inbox.stop();
      },
    };
  });

/** The first bytes of a message: as text when they read as text, else in hex. */
export function preview(bytes: Uint8Array): string {
  const head = bytes.subarray(0, 40);
  const more = bytes.length > head.length ? '...' : '';
  const text = Buffer.from(head).toString('latin1');
  if (/^[\x20-\x7e\r\n\t]*$/.test(text)) return JSON.stringify(text) + more;
  return `hex ${Buffer.from(head).toString('hex')}${more}`;
}

function watch(modem: IridiumModem, write: (line: string) => void, verbose: boolean): void {
  const name = modem.name;
  modem.on('mo', (r: MoRecord) => {
    const again = r.duplicate ? ' again (the MO buffer was not cleared with AT+SBDD0)' : '';
    const to = r.forwardedTo ? `, for the RockBLOCK with IMEI ${r.forwardedTo}` : '';
    write(`${name}: MO message MOMSN ${r.momsn} received${again}, ${r.payload.length} bytes${to}: ${preview(r.payload)}`);
  });
  modem.on('session', (s: SessionReport) => {
    const mt = s.mt === 1 ? `MT ${s.mtLength} bytes MTMSN ${s.mtmsn}` : s.mt === 0 ? 'no MT' : 'MT check failed';
    write(`${name}: session (${s.command}) MO status ${s.mo}, MOMSN ${s.momsn}, ${mt}, ${s.mtQueued} queued`);
  });
  modem.on('ring', () => write(`${name}: SBDRING (an MT message is waiting)`));
  modem.on('reset', () => write(`${name}: reset`));
  if (verbose) {
    modem.on('command', (line: string) => write(`${name}: host sent ${JSON.stringify(line)}`));
    modem.on('unknown-command', (c: string) => write(`${name}: unknown command ${c} (answered ERROR)`));
    modem.on('mt-read', (b: Uint8Array) => write(`${name}: host read the MT buffer (${b.length} bytes)`));
  }
}

function parsePlan(values: SimValues) {
  const targets = parseTargets(values, { tcp: '127.0.0.1:7800', pty: '/tmp/iridium0' });
  const imeis = optionList(values.imei);
  for (const n of imeis) if (!/^\d{15}$/.test(n)) throw new SimUsageError(`--imei ${JSON.stringify(n)}: expected 15 digits, for example 300434063123450`);
  if (imeis.length > targets.length) throw new SimUsageError(`${imeis.length} --imei for ${targets.length} modems: give at most one per --tcp/--pty`);
  if (new Set(imeis).size !== imeis.length) throw new SimUsageError('each --imei must be different');
  let bars = 5;
  if (values.bars !== undefined) {
    const b = String(values.bars);
    if (!/^[0-5]$/.test(b)) throw new SimUsageError(`--bars ${JSON.stringify(b)}: expected 0 to 5`);
    bars = Number(b);
  }
  let sky: number[] = [];
  if (values.sky !== undefined) {
    const s = String(values.sky);
    sky = s.split(',').map((x) => x.trim()).filter((x) => x !== '').map(Number);
    if (sky.length === 0 || sky.some((n) => !Number.isInteger(n) || n < 0 || n > 255) || !/^[\d,\s]+$/.test(s)) {
      throw new SimUsageError(`--sky ${JSON.stringify(s)}: expected MO status numbers 0-255 separated by commas, for example 32,32,0`);
    }
  }
  let sessionMs = 3000;
  if (values['session-ms'] !== undefined) {
    const v = String(values['session-ms']);
    if (!/^\d{1,7}$/.test(v)) throw new SimUsageError(`--session-ms ${JSON.stringify(v)}: expected milliseconds, 0 to 9999999`);
    sessionMs = Number(v);
  }
  let inbox: string | null = null;
  if (values.inbox !== undefined) {
    inbox = String(values.inbox);
    let dir = false;
    try {
      dir = statSync(inbox).isDirectory();
    } catch {
      dir = false;
    }
    if (!dir) throw new SimUsageError(`--inbox ${JSON.stringify(inbox)}: expected an existing folder`);
  }
  return { targets, imeis, bars, sky, sessionMs, inbox, verbose: values.verbose === true };
}

export const iridiumSimulator: SimulatorCommand = { usage: USAGE, options: OPTIONS, run };
