import type { Link } from '../../shared/links/link.ts';
import { inProcessLink } from '../../shared/simulators/in-process-link.ts';
import { SimWorlds } from '../../shared/simulators/sim-worlds.ts';
import { RNodeChannel } from './channel.ts';
import { RNodeSimulator, type RNodeSimOptions } from './simulator.ts';

// sim://<channel> for RNode interfaces (docs/design.md section 6): each open makes one simulated
// RNode, in this process, on the named channel, and returns a Link to it. Two interfaces
// bound to sim://lab hear each other. No socket or pty: for demos and whole-bridge tests.
// Bytes cross asynchronously (setImmediate), as from a real stream, never re-entrantly.

const worlds = new SimWorlds<RNodeChannel, RNodeSimulator>(() => new RNodeChannel());

/** The radio channel of a sim:// channel, made on first use. */
export const rnodeSimChannel = (name: string): RNodeChannel => worlds.world(name);

export interface RNodeSimLink extends Link {
  /** The radio behind the link (tests inspect its config and counters or inject faults). */
  readonly sim: RNodeSimulator;
}

/** Each open is a new radio: an RNode keeps nothing a reconnecting bridge would look for. */
export async function openRNodeSimLink(channelName: string, options: Omit<RNodeSimOptions, 'channel'> = {}): Promise<RNodeSimLink> {
  const sim = new RNodeSimulator({ name: worlds.nextName(channelName), ...options, channel: worlds.world(channelName) });
  const { link } = inProcessLink(sim, `sim://${channelName}`, () => sim.close());
  return Object.assign(link, { sim });
}
