import type { SimulatorCommand } from '../../driver-module.ts';
import type { Link } from '../links/link.ts';

// A driver module names its simulators without loading them: the bridge and
// the hub never run a byte-level simulator unless an interface is bound to sim:// or someone
// runs `fieldbridge sim <kind>`, so each kind's index.ts imports them from here, through a
// dynamic import() made when the device is opened or the command runs. Opening a device is
// not the message path: no frame waits for an import.

/** `fieldbridge sim <kind>`: usage and options at once (the argument parser needs them), the
 *  simulator's code when it runs. */
export function lazySimulator(spec: { usage: string; options: SimulatorCommand['options'] }, load: () => Promise<SimulatorCommand>): SimulatorCommand {
  return { usage: spec.usage, options: spec.options, run: async (values, options) => (await load()).run(values, options) };
}

/** A driver module's openSim, importing the simulator's link on the first sim:// open. */
export function lazyOpenSim(load: () => Promise<(channel: string) => Promise<Link>>): (channel: string) => Promise<Link> {
  return async (channel) => (await load())(channel);
}
