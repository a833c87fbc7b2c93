import type { Link } from '../../shared/links/link.ts';
import { type SimLink, SimWorlds } from '../../shared/simulators/sim-worlds.ts';
import { MeshtasticDevice, type MeshtasticDeviceOptions } from './device.ts';
import { MeshtasticMesh } from './mesh.ts';

// sim://<channel> for Meshtastic interfaces (docs/design.md section 6): each open attaches one
// simulated device, in this process, to the named mesh, and returns a Link to it. Two
// interfaces bound to sim://lab hear each other; tests reach the mesh with
// meshtasticSimMesh('lab') to add remote nodes. No socket or pty. Bytes cross asynchronously
// (setImmediate), as from a real stream, never re-entrantly.
//
// A closed link is a radio unplugged: it leaves the mesh (others' packets to it then fail)
// but keeps its node number and stored settings, and the next open of the same channel plugs
// it back in. So a bearer that reconnects finds the same node, as with hardware.

const worlds = new SimWorlds<MeshtasticMesh, MeshtasticDevice>(() => new MeshtasticMesh());

/** The mesh of a sim:// channel, made on first use. */
export const meshtasticSimMesh = (name: string): MeshtasticMesh => worlds.world(name);

/** A link to a simulated radio, and the radio behind it (tests inspect its state and counters or inject faults). */
export type MeshtasticSimLink = SimLink<'device', MeshtasticDevice>;

export async function openMeshtasticSimLink(channelName: string, options: Omit<MeshtasticDeviceOptions, 'mesh'> = {}): Promise<MeshtasticSimLink> {
  const mesh = worlds.world(channelName);
  let device = worlds.replug(channelName, (d) => options.name === undefined || d.name === options.name);
  if (device) device.powerOn();
  else device = new MeshtasticDevice({ name: worlds.nextName(channelName), ...options, mesh });
  const plugged = device;
  return Object.assign(worlds.plug(plugged, channelName, () => plugged.close()), { device: plugged });
}
