import type { SimulatorCommand } from '../../driver-module.ts';
import { SIM_DEVICE_OPTIONS } from '../../shared/simulators/usage.ts';

// The usage and options of `fieldbridge sim iridium`, apart from the simulator (cli.ts): the
// argument parser and the usage text need them whenever the command table is read, the
// simulator's code only when it runs (bearers/iridium/index.ts imports cli.ts
// when `sim iridium` runs).

export const IRIDIUM_SIM_OPTIONS: SimulatorCommand['options'] = {
  ...SIM_DEVICE_OPTIONS,
  imei: { type: 'string', multiple: true },
  bars: { type: 'string' },
  sky: { type: 'string' },
  'session-ms': { type: 'string' },
  inbox: { type: 'string' },
};

export const IRIDIUM_SIM_USAGE =
  'fieldbridge sim iridium (--tcp HOST:PORT | --pty PATH)... [--imei N]... [--bars 0-5] [--sky 0,32,...]\n' +
  '                        [--session-ms N] [--inbox DIR] [--verbose]\n' +
  '  Each --tcp/--pty is one simulated Iridium SBD modem (9602/9603/RockBLOCK AT commands,\n' +
  '  19200 baud on a pty); all share one gateway. IMEIs are made up unless --imei gives them\n' +
  '  (15 digits, in order). --bars sets the signal (default 5; 0 fails sessions with MO status\n' +
  '  32); --sky scripts the MO status of the next sessions, then they succeed; --session-ms is\n' +
  '  how long a session takes (default 3000). --inbox DIR: every file dropped there (1-270\n' +
  '  bytes) is queued as an MT message for the first modem and removed. SIGUSR1 drops the\n' +
  '  links, SIGUSR2 sends garbage. Stops on Ctrl-C.';
