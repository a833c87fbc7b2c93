import type { Link } from '../../shared/links/link.ts';
import { type SimLink, SimWorlds } from '../../shared/simulators/sim-worlds.ts';
import { MeshCoreDevice, type MeshCoreDeviceOptions } from './device.ts';
import { MeshCoreMesh } from './mesh.ts';

// sim://<channel> for MeshCore interfaces (docs/design.md section 6): each open attaches one
// simulated companion radio, in this process, to the mesh the channel names, and returns a
// Link to it. Two interfaces bound to sim://lab are each other's contacts and can exchange
// direct and channel messages; tests reach the mesh with meshcoreSimMesh('lab') to add nodes
// without a host. No socket or pty. Bytes cross asynchronously (setImmediate), never
// re-entrantly.
//
// A closed link is the radio's host going away, not the radio: it stays on the mesh, keeps
// its contacts, and queues what it hears until the next open of the same channel (with the
// same name, or none) plugs the host back in. That is how messages wait while a bridge is
// stopped.

const worlds = new SimWorlds<MeshCoreMesh, MeshCoreDevice>(() => new MeshCoreMesh());

/** The mesh of a sim:// channel, made on first use. */
export const meshcoreSimMesh = (name: string): MeshCoreMesh => worlds.world(name);

/** A link to a simulated radio, and the radio behind it (tests inspect its state and counters or inject faults). */
export type MeshCoreSimLink = SimLink<'device', MeshCoreDevice>;

export async function openMeshCoreSimLink(channelName: string, options: Omit<MeshCoreDeviceOptions, 'mesh'> = {}): Promise<MeshCoreSimLink> {
  const mesh = worlds.world(channelName);
  const device = worlds.replug(channelName, (d) => options.name === undefined || d.name === options.name) ?? new MeshCoreDevice({ name: worlds.nextName(channelName), ...options, mesh });
  return Object.assign(worlds.plug(device, channelName, () => device.detachHost()), { device });
}
