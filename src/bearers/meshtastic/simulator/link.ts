import type { Link } from '../../shared/links/link.ts';
import { inProcessLink } from '../../shared/simulators/in-process-link.ts';
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

const meshes = new Map<string, MeshtasticMesh>();
const unplugged = new Map<string, MeshtasticDevice[]>();

export function meshtasticSimMesh(name: string): MeshtasticMesh {
  let mesh = meshes.get(name);
  if (!mesh) {
    mesh = new MeshtasticMesh();
    meshes.set(name, mesh);
  }
  return mesh;
}

export interface MeshtasticSimLink extends Link {
  /** The radio behind the link (tests inspect its state and counters or inject faults). */
  readonly device: MeshtasticDevice;
}

let opened = 0;

export async function openMeshtasticSimLink(channelName: string, options: Omit<MeshtasticDeviceOptions, 'mesh'> = {}): Promise<MeshtasticSimLink> {
  const mesh = meshtasticSimMesh(channelName);
  const pool = unplugged.get(channelName) ?? [];
  unplugged.set(channelName, pool);
  const again = pool.findIndex((d) => options.name === undefined || d.name === options.name);
  let device: MeshtasticDevice;
  if (again >= 0) {
    device = pool.splice(again, 1)[0];
    device.powerOn();
  } else {
    device = new MeshtasticDevice({ name: `${channelName}-${++opened}`, ...options, mesh });
  }
  // A closed or dropped link is the radio unplugged: it keeps its settings for the next open.
  const { link, shut } = inProcessLink(device, `sim://${channelName}`, () => {
    device.off('drop-link', onDrop);
    device.close();
    pool.push(device);
  });
  const onDrop = () => shut('dropped by the simulator');
  device.on('drop-link', onDrop);
  return Object.assign(link, { device });
}
