import type { SimulatorCommand } from '../../driver-module.ts';
import { SIM_DEVICE_OPTIONS } from '../../shared/simulators/usage.ts';

// The usage and options of `fieldbridge sim meshcore`, apart from the simulator (cli.ts): the
// argument parser and the usage text need them whenever the command table is read, the
// simulator's code only when it runs (bearers/meshcore/index.ts imports cli.ts
// when `sim meshcore` runs).

export const MESHCORE_SIM_OPTIONS: SimulatorCommand['options'] = {
  ...SIM_DEVICE_OPTIONS,
  'node-name': { type: 'string' },
  'lose-acks': { type: 'string' },
  'scoped-repeater': { type: 'string' },
  'flood-scope': { type: 'string' },
};

export const MESHCORE_SIM_USAGE =
  'fieldbridge sim meshcore (--tcp HOST:PORT | --pty PATH)... [--node-name NAME] [--lose-acks N]\n' +
  '    [--scoped-repeater REGION] [--flood-scope REGION] [--verbose]\n' +
  '  Each --tcp/--pty is one simulated MeshCore companion radio (TCP port 5000 on hardware); all\n' +
  '  share one mesh and know each other as contacts. --lose-acks loses the first N acks of each\n' +
  '  node. --scoped-repeater puts a repeater between the first node and the others that forwards\n' +
  '  floods only in REGION and drops unscoped ones; --flood-scope gives every node that default\n' +
  '  scope. SIGUSR1 drops the links, SIGUSR2 sends garbage. Stops on Ctrl-C.';
