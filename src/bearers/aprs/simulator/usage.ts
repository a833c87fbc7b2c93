import type { SimulatorCommand } from '../../driver-module.ts';
import { SIM_DEVICE_OPTIONS } from '../../shared/simulators/usage.ts';

// The usage and options of `fieldbridge sim aprs`, apart from the simulator (cli.ts), which
// loads only when the command runs.

export const APRS_SIM_OPTIONS: SimulatorCommand['options'] = {
  ...SIM_DEVICE_OPTIONS,
  station: { type: 'string', multiple: true },
  'aprs-is': { type: 'string' },
};

export const APRS_SIM_USAGE =
  'fieldbridge sim aprs (--tcp HOST:PORT | --pty PATH)... [--station CALL[,digi][,noack][,echo]]...\n' +
  '                     [--aprs-is HOST:PORT] [--verbose]\n' +
  '  Each --tcp/--pty is one KISS TNC on one simulated APRS channel (the bridge\'s device:\n' +
  '  tcp://HOST:PORT, as Dire Wolf\'s KISS port). --station adds a simulated station: it\n' +
  '  acknowledges messages to it (noack: never), digi repeats WIDE1-1 frames, echo answers\n' +
  '  each message with "echo: <text>". --aprs-is also runs an APRS-IS stand-in there (it\n' +
  '  checks passcodes). Every frame on the air is printed. Stops on Ctrl-C.';
