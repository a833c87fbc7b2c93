import type { SimulatorCommand } from '../../driver-module.ts';
import { SIM_DEVICE_OPTIONS } from '../../shared/simulators/usage.ts';

// The usage and options of `fieldbridge sim sms`, apart from the simulator (cli.ts): the
// argument parser and the usage text need them whenever the command table is read, the
// simulator's code only when it runs (bearers/sms/index.ts imports cli.ts
// when `sim sms` runs).

export const SMS_SIM_OPTIONS: SimulatorCommand['options'] = {
  ...SIM_DEVICE_OPTIONS,
  number: { type: 'string', multiple: true },
  pin: { type: 'string' },
};

export const SMS_SIM_USAGE =
  'fieldbridge sim sms (--tcp HOST:PORT | --pty PATH)... [--number +E164]... [--pin 1234] [--verbose]\n' +
  '  Each --tcp/--pty is one simulated modem (AT commands, 3GPP TS 27.005); all share one\n' +
  '  network and can text each other. Numbers are +15550000001... unless --number gives them\n' +
  '  (in order). --pin makes every SIM ask for that PIN. SIGUSR1 drops the links, SIGUSR2 sends\n' +
  '  garbage. Stops on Ctrl-C.';
