import { regionKey, transportCode } from '../codec/index.ts';

// A simulated MeshCore repeater's region filter (docs/protocols/meshcore.md 6.12), as
// examples/simple_repeater/MyMesh.cpp applies it to every packet it hears: a flood with
// transport codes is forwarded when its first code matches the code of a region the repeater
// allows floods for (RegionMap::findMatch recomputes TransportKey::calcTransportCode per
// region); a flood without codes when the wildcard region `*` allows floods (`region denyf *`
// forbids it); direct-routed packets always (REGION_DENY_DIRECT is reserved, unused). The
// repeater joins sites of the simulated mesh: nodes of one site hear each other directly,
// nodes of two sites only through a repeater that forwards the packet.

/** What a repeater sees of a packet on the air. */
export interface AirPacket {
  flood: boolean;
  /** Transport code 1 (the sender's scope), or null for a packet without transport codes. */
  code: number | null;
  /** PAYLOAD_TYPE_* (Packet.h) and the payload the code was computed over. */
  payloadType: number;
  payload: Uint8Array;
}

export interface SimRepeaterOptions {
  name?: string;
  /** Sites it hears and repeats into (at least two to join anything). */
  sites: string[];
  /** Public regions it forwards floods for (`region put NAME` + `region allowf NAME`). */
  allow?: string[];
  /** `region denyf *`: floods without a scope are dropped. Default false (the firmware's
   *  default: the wildcard allows floods). */
  denyUnscoped?: boolean;
}

export class SimRepeater {
  readonly name: string;
  readonly sites: readonly string[];
  readonly denyUnscoped: boolean;
  readonly #regions: { name: string; key: Uint8Array }[];
  readonly counters = { forwarded: 0, droppedUnscoped: 0, droppedUnknownScope: 0 };

  constructor(options: SimRepeaterOptions) {
    this.name = options.name ?? 'repeater';
    this.sites = [...options.sites];
    this.denyUnscoped = options.denyUnscoped ?? false;
    this.#regions = (options.allow ?? []).map((name) => ({ name, key: regionKey(name) }));
  }

  /** Whether it forwards `p` (and counts why not). */
  forwards(p: AirPacket): boolean {
    if (!p.flood) return this.#forward();
    if (p.code === null) {
      if (this.denyUnscoped) return this.#drop('droppedUnscoped');
      return this.#forward();
    }
    if (this.#regions.some((r) => transportCode(r.key, p.payloadType, p.payload) === p.code)) return this.#forward();
    return this.#drop('droppedUnknownScope');
  }

  #forward(): boolean {
    this.counters.forwarded++;
    return true;
  }

  #drop(why: 'droppedUnscoped' | 'droppedUnknownScope'): boolean {
    this.counters[why]++;
    return false;
  }
}
