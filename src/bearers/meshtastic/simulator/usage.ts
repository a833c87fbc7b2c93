import type { SimulatorCommand } from '../../driver-module.ts';
import { SIM_DEVICE_OPTIONS } from '../../shared/simulators/usage.ts';

// The usage and options of `fieldbridge sim meshtastic`, apart from the simulator (cli.ts): the
// argument parser and the usage text need them whenever the command table is read, the
// simulator's code only when it runs (bearers/meshtastic/index.ts imports cli.ts
// when `sim meshtastic` runs).

export const MESHTASTIC_SIM_OPTIONS: SimulatorCommand['options'] = {
  ...SIM_DEVICE_OPTIONS,
  'node-name': { type: 'string' },
  'refuse-acks': { type: 'string' },
  firmware: { type: 'string' },
};

export const MESHTASTIC_SIM_USAGE =
  'fieldbridge sim meshtastic (--tcp HOST:PORT | --pty PATH)... [--node-name NAME]\n' +
  '       [--refuse-acks MAX_RETRANSMIT|NO_ROUTE|GOT_NAK|...] [--firmware 2.7|2.8] [--verbose]\n' +
  '  Each --tcp/--pty is one simulated Meshtastic node (TCP port 4403 on hardware); all share\n' +
  '  one mesh. --refuse-acks answers direct messages with that routing error. SIGUSR1 drops\n' +
  '  the links, SIGUSR2 sends garbage. --firmware 2.8 behaves as a 2.8 board (node database\n' +
  '  replayed after the handshake, 24-byte long names, no Range Test); 2.7 is the default.\n' +
  '  Stops on Ctrl-C.';
