import type { Link } from '../links/link.ts';
import { inProcessLink } from './in-process-link.ts';
import type { HostedDevice } from './pty.ts';

// What sim://<channel> keeps for one kind: the world each channel names (a mesh, an SMS
// network, an Iridium gateway, a radio channel), made on first use, and the devices unplugged
// from it. A closed link is a device unplugged, not destroyed: it keeps its identity and
// stored state, and the next open of the same channel that matches it plugs it back in, as
// with hardware. Each kind's simulator/link.ts says what its world and devices keep.

/** A Link to a simulated device, with the device behind it under `key` (tests inspect it). */
export type SimLink<K extends string, D> = Link & { readonly [P in K]: D };

/** A device that can end its link from its side (the simulator drops it). */
interface Dropping {
  on(event: 'drop-link', listener: () => void): unknown;
  off(event: 'drop-link', listener: () => void): unknown;
}

export class SimWorlds<World, Device extends HostedDevice, Options = never> {
  readonly #make: (options?: Options) => World;
  readonly #worlds = new Map<string, World>();
  readonly #unplugged = new Map<string, Device[]>();
  #opened = 0;

  constructor(make: (options?: Options) => World) {
    this.#make = make;
  }

  /** The world of a channel, made on first use; `options` apply only then. */
  world(channel: string, options?: Options): World {
    let world = this.#worlds.get(channel);
    if (!world) {
      world = this.#make(options);
      this.#worlds.set(channel, world);
    }
    return world;
  }

  /** A name for a new device on the channel: `<channel>-<n>`, n counting every open. */
  nextName(channel: string): string {
    return `${channel}-${++this.#opened}`;
  }

  /** The first device unplugged from the channel that `matches`, taken back, or undefined. */
  replug(channel: string, matches: (device: Device) => boolean): Device | undefined {
    const pool = this.#unplugged.get(channel) ?? [];
    const at = pool.findIndex(matches);
    return at >= 0 ? pool.splice(at, 1)[0] : undefined;
  }

  /** A Link to `device` on `channel`. When it closes (or the device drops it), `unplug` runs
   *  and the device waits for the next open of the channel. */
  plug(device: Device & Partial<Dropping>, channel: string, unplug: () => void): Link {
    const { link, shut } = inProcessLink(device, `sim://${channel}`, () => {
      device.off?.('drop-link', onDrop);
      unplug();
      const pool = this.#unplugged.get(channel) ?? [];
      this.#unplugged.set(channel, pool);
      pool.push(device);
    });
    const onDrop = () => shut('dropped by the simulator');
    device.on?.('drop-link', onDrop);
    return link;
  }
}
