import type { Link } from '../../shared/links/link.ts';
import { inProcessLink } from '../../shared/simulators/in-process-link.ts';
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

const meshes = new Map<string, MeshCoreMesh>();
const idle = new Map<string, MeshCoreDevice[]>();

export function meshcoreSimMesh(name: string): MeshCoreMesh {
  let mesh = meshes.get(name);
  if (!mesh) {
    mesh = new MeshCoreMesh();
    meshes.set(name, mesh);
  }
  return mesh;
}

export interface MeshCoreSimLink extends Link {
  /** The radio behind the link (tests inspect its state and counters or inject faults). */
  readonly device: MeshCoreDevice;
}

let opened = 0;

export async function openMeshCoreSimLink(channelName: string, options: Omit<MeshCoreDeviceOptions, 'mesh'> = {}): Promise<MeshCoreSimLink> {
  const mesh = meshcoreSimMesh(channelName);
  const pool = idle.get(channelName) ?? [];
  idle.set(channelName, pool);
  const again = pool.findIndex((d) => options.name === undefined || d.name === options.name);
  const device = again >= 0 ? pool.splice(again, 1)[0] : new MeshCoreDevice({ name: `${channelName}-${++opened}`, ...options, mesh });
  const { link, shut } = inProcessLink(device, `sim://${channelName}`, () => {
    device.off('drop-link', onDrop);
    device.detachHost();
    pool.push(device);
  });
  const onDrop = () => shut('dropped by the simulator');
  device.on('drop-link', onDrop);
  return Object.assign(link, { device });
}
