import type { Link } from '../../shared/links/link.ts';
import { SimWorlds } from '../../shared/simulators/sim-worlds.ts';
import { AprsChannel, SimTnc } from './channel.ts';

// sim://<channel> for aprs interfaces: each open attaches one simulated KISS TNC, in this
// process, to the radio channel the name picks. Tests reach the channel with
// aprsSimChannel('lab') to add stations and read the air.

const worlds = new SimWorlds<AprsChannel, SimTnc>(() => new AprsChannel());

export function aprsSimChannel(channel: string): AprsChannel {
  return worlds.world(channel);
}

export async function openAprsSimLink(channel: string): Promise<Link> {
  const world = worlds.world(channel);
  const tnc = worlds.replug(channel, () => true) ?? new SimTnc(world, worlds.nextName(channel));
  world.attach(tnc);
  return worlds.plug(tnc, channel, () => {
    tnc.detachHost();
    world.detach(tnc);
  });
}
