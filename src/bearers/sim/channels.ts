import type { InboundFrame } from '../bearer.ts';
import type { SimBearer } from './sim-bearer.ts';

// The process-wide registry of the `sim` bearer (sim-bearer.ts): which bearers listen on which
// sim://<channel>, and which bearer runs for which interface (the link route, routes.ts, finds
// an interface's bearer here). Tests give a bearer its own registry, or reset this one.

export interface SimListener {
  readonly interfaceId: string;
  hear(frame: InboundFrame): void;
}

/** Which sim bearers are on which channel, and which run for which interface, in this process. */
export class SimChannels {
  readonly #channels = new Map<string, Set<SimListener>>();
  readonly #running = new Map<string, SimBearer>();

  join(channel: string, listener: SimListener): void {
    let members = this.#channels.get(channel);
    if (!members) this.#channels.set(channel, (members = new Set()));
    members.add(listener);
  }

  leave(channel: string, listener: SimListener): void {
    const members = this.#channels.get(channel);
    if (!members) return;
    members.delete(listener);
    if (members.size === 0) this.#channels.delete(channel);
  }

  /** Hands the frame to every member but the sender; returns how many heard it. */
  broadcast(channel: string, sender: SimListener, frame: InboundFrame): number {
    let heard = 0;
    for (const member of [...(this.#channels.get(channel) ?? [])]) {
      if (member === sender) continue;
      member.hear({ ...frame, payload: frame.payload && frame.payload.slice(), meta: { ...frame.meta } });
      heard++;
    }
    return heard;
  }

  members(channel: string): number {
    return this.#channels.get(channel)?.size ?? 0;
  }

  /** The started sim bearer of an interface (the link route finds it here), if one runs. */
  running(interfaceId: string): SimBearer | undefined {
    return this.#running.get(interfaceId);
  }

  /** Kept by SimBearer.start and stop: a bearer that replaced another (a restart) keeps its
   *  entry when the old one stops late. */
  started(bearer: SimBearer, interfaceId: string): void {
    this.#running.set(interfaceId, bearer);
  }

  stopped(bearer: SimBearer, interfaceId: string): void {
    if (this.#running.get(interfaceId) === bearer) this.#running.delete(interfaceId);
  }

  /** Forgets every channel and running bearer (tests: a clean slate between cases). */
  reset(): void {
    this.#channels.clear();
    this.#running.clear();
  }
}

/** The registry sim bearers use unless given another. */
export const simChannels = new SimChannels();

export function resetSimChannels(): void {
  simChannels.reset();
}
