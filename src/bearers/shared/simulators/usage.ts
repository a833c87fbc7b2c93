import type { SimulatorCommand } from '../../driver-module.ts';

/** The options every `fieldbridge sim <kind>` takes: where its devices listen (each --tcp or
 *  --pty is one device), and --verbose. A kind spreads these and adds its own. */
export const SIM_DEVICE_OPTIONS: SimulatorCommand['options'] = {
  tcp: { type: 'string', multiple: true },
  pty: { type: 'string', multiple: true },
  verbose: { type: 'boolean' },
};
