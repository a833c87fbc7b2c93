import type { SimRunOptions, SimValues, SimulatorCommand } from '../../driver-module.ts';
import { SmsModem } from './modem.ts';
import type { SubmittedMessage } from './messages.ts';
import { SmsNetwork, type NetworkMessage } from './network.ts';
import { serveSmsPty, serveSmsTcp } from './serve.ts';
import { optionList, parseTargets, runSimulator, SimUsageError } from '../../shared/simulators/run.ts';
import { SMS_SIM_OPTIONS as OPTIONS, SMS_SIM_USAGE as USAGE } from './usage.ts';

// `fieldbridge sim sms --tcp 127.0.0.1:7700 | --pty PATH ...`: runs simulated cellular modems
// by hand, for trying the bridge (or Gammu) without a modem or a SIM. Each --tcp or --pty is
// one modem; all of them share one simulated operator, so they can text each other. The
// network numbers them +15550000001, +15550000002, ... unless --number is given (once per
// modem, in order). Runs until SIGINT/SIGTERM (or the abort signal); SIGUSR1 drops every
// modem's link, SIGUSR2 sends garbage. --tcp, --pty and --verbose mean what they mean for
// `sim rnode` and `sim meshtastic`.


/** Returns the exit code: 0 after a clean stop, 2 for a usage error (message written). */
const run = (values: SimValues, options: SimRunOptions = {}): Promise<number> =>
  runSimulator(values, options, USAGE, parsePlan, (plan, write) => {
    const network = new SmsNetwork();
    return {
      make: (i) => new SmsModem({ name: `sms${i + 1}`, network, number: plan.numbers[i], pin: plan.pin }),
      serve: (modem, t) => (t.kind === 'tcp' ? serveSmsTcp(modem, { host: t.host, port: t.port }) : serveSmsPty(modem, { path: t.path })),
      announce: ({ device, transport }) => {
        watch(device, write, plan.verbose);
        write(`${device.name} ${device.number}: listening on ${transport.device}`);
      },
    };
  });

function watch(modem: SmsModem, write: (line: string) => void, verbose: boolean): void {
  const name = `${modem.name} ${modem.number}`;
  const show = (text: string | null) => (text === null ? 'data' : JSON.stringify(text.length > 60 ? text.slice(0, 57) + '...' : text));
  modem.on('sent', (m: SubmittedMessage, mr: number) => {
    const part = m.concat ? ` (part ${m.concat.sequence}/${m.concat.total})` : '';
    write(`${name}: sent ${show(m.text)}${part} to ${m.to}, reference ${mr}${m.statusReport ? ', report requested' : ''}`);
  });
  modem.on('received', (m: NetworkMessage, index?: number) => write(`${name}: received a message from ${m.from}${index === undefined ? ' (+CMT)' : ` in slot ${index}`}`));
  modem.on('status-report', (m: NetworkMessage) => write(`${name}: status report about a message to ${m.from}`));
  modem.on('reset', () => write(`${name}: reset`));
  modem.on('bad-pdu', (why: string) => write(`${name}: refused a PDU: ${why}`));
  if (verbose) {
    modem.on('command', (line: string) => write(`${name}: host sent ${line}`));
    modem.on('unknown-command', (c: string) => write(`${name}: unknown command ${c} (answered ERROR)`));
  }
}


function parsePlan(values: SimValues) {
  const targets = parseTargets(values, { tcp: '127.0.0.1:7700', pty: '/tmp/modem0' });
  const numbers = optionList(values.number);
  for (const n of numbers) {
    if (!/^\+[1-9][0-9]{2,14}$/.test(n)) throw new SimUsageError(`--number ${JSON.stringify(n)}: expected an E.164 number, "+" and 3 to 15 digits, for example +15550000001`);
  }
  if (numbers.length > targets.length) throw new SimUsageError(`${numbers.length} --number for ${targets.length} modems: give at most one per --tcp/--pty`);
  if (new Set(numbers).size !== numbers.length) throw new SimUsageError('each --number must be different');
  let pin: string | null = null;
  if (values.pin !== undefined) {
    pin = String(values.pin);
    if (!/^[0-9]{4,8}$/.test(pin)) throw new SimUsageError(`--pin ${JSON.stringify(pin)}: expected 4 to 8 digits`);
  }
  return { targets, numbers, pin, verbose: values.verbose === true };
}

export const smsSimulator: SimulatorCommand = { usage: USAGE, options: OPTIONS, run };
