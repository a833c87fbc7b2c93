import type { SimulatorCommand } from '../../driver-module.ts';
import { SIM_DEVICE_OPTIONS } from '../../shared/simulators/usage.ts';

// The usage and options of `fieldbridge sim rnode`, apart from the simulator (cli.ts): the
// argument parser and the usage text need them whenever the command table is read, the
// simulator's code only when it runs (bearers/rnode/index.ts imports cli.ts
// when `sim rnode` runs).

export const RNODE_SIM_OPTIONS: SimulatorCommand['options'] = {
  ...SIM_DEVICE_OPTIONS,
  fw: { type: 'string' },
  'max-tx-power': { type: 'string' },
  'withhold-ready': { type: 'boolean' },
  'wrong-echo': { type: 'string' },
  rssi: { type: 'string' },
  snr: { type: 'string' },
};

export const RNODE_SIM_USAGE =
  'fieldbridge sim rnode (--tcp HOST:PORT | --pty PATH)... [--fw 1.86] [--max-tx-power 22]\n' +
  '       [--withhold-ready] [--wrong-echo frequency|bandwidth|txpower|sf|cr|radio_state|st_alock|lt_alock]\n' +
  '       [--rssi=DBM --snr=DB] [--verbose]\n' +
  '  Each --tcp/--pty is one simulated RNode; all share one channel. SIGUSR1 drops the links,\n' +
  '  SIGUSR2 sends garbage. Stops on Ctrl-C.';
