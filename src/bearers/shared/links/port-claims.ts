import { realpathSync } from 'node:fs';

// Which interface holds which device, so two interfaces never share one radio and `auto`
// skips a board another interface already uses. Serial devices are keyed by their real path,
// so /dev/serial/by-id/X and the /dev/ttyUSB0 it points at are one device.

export class PortClaims {
  readonly #owners = new Map<string, string>();

  /** Takes the device for `owner`; false when another owner holds it. Claiming twice is fine. */
  claim(key: string, owner: string): boolean {
    const holder = this.#owners.get(key);
    if (holder !== undefined && holder !== owner) return false;
    this.#owners.set(key, owner);
    return true;
  }

  release(key: string, owner: string): void {
    if (this.#owners.get(key) === owner) this.#owners.delete(key);
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
