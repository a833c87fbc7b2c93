import { realpathSync } from 'node:fs';

// Which interface holds which device, so two interfaces never share one radio and `auto`
// skips a board another interface already uses. Serial devices are keyed by their real path,
// so /dev/serial/by-id/X and the /dev/ttyUSB0 it points at are one device.

export class PortClaims {
  readonly #owners = new Map<string, string>();
  readonly #names = new Map<string, string>();

  /** Takes the device for `owner` (named `name` in messages); false when another owner holds
   *  it. Claiming twice is fine. */
  claim(key: string, owner: string, name?: string): boolean {
    const holder = this.#owners.get(key);
    if (holder !== undefined && holder !== owner) return false;
    this.#owners.set(key, owner);
    if (name !== undefined && name !== owner) this.#names.set(key, name);
    return true;
  }

  release(key: string, owner: string): void {
    if (this.#owners.get(key) !== owner) return;
    this.#owners.delete(key);
    this.#names.delete(key);
  }

  /** The holder as people read it: its name with its id, `mesh-a (ifc_...)`; null when free. */
  describeHolder(key: string): string | null {
    const holder = this.#owners.get(key);
    if (holder === undefined) return null;
    const name = this.#names.get(key);
    return name === undefined ? holder : `${name} (${holder})`;
  }

  holder(key: string): string | null {
    return this.#owners.get(key) ?? null;
  }
}

/** The claims of this process: every interface's supervisor shares it unless a test passes its own. */
export const processPortClaims = new PortClaims();

/** The claim key of a serial path: its target when it is a link that exists, else the path. */
export function serialClaimKey(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
