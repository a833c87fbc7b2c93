import type { Clock, TimerHandle } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/log.ts';
import type { SendResult } from '../../bearer.ts';
import { equalBytes, toHex } from '../../shared/codec/bytes.ts';
import { createAnnounce } from '../reticulum/announce.ts';
import { LXMF_DELIVERY_NAME } from '../reticulum/constants.ts';
import type { Identity } from '../reticulum/identity.ts';
import { encodeLxmfAppData } from '../reticulum/lxmf-announce.ts';
import type { Packet } from '../reticulum/packet.ts';
import { createPathRequest, decodePathRequest, pathRequestKey } from '../reticulum/path.ts';

// Our announces and path requests (docs/reticulum.md, "Announces" and "Path requests"): the
// lxmf.delivery announce at start and every announce_interval_s, the same announce in context
// PATH_RESPONSE when someone asks for our path, and path requests of our own for peers whose key
// we lack. Every announce (a path response too) stays within 2 % of the interface's bit rate.

/** Reticulum keeps announces to 2 % of an interface's bit rate (docs/reticulum.md, "Announces"). */
export const ANNOUNCE_CAP = 0.02;
/** An announce that could not go out (the transmit queue refused it) is tried again after this. */
const ANNOUNCE_RETRY_MS = 60_000;
/** Least time between two path requests of ours for one destination (Transport.PATH_REQUEST_MI). */
export const PATH_REQUEST_MIN_INTERVAL_MS = 20_000;
/** Path request tags remembered, so copies of one request are answered once (Transport.discovery_pr_tags). */
const TAGS_KEPT = 1000;

export interface AnnouncerOptions {
  interfaceName: string;
  clock: Clock;
  log: Logger;
  identity: Identity;
  address: Uint8Array;
  displayName: string;
  announceIntervalS: number;
  bitrateBps: number;
  transmit(packet: Uint8Array): Promise<SendResult>;
  counters: { announces_sent: number; packets_out: number; path_requests_heard: number; path_responses_sent: number; path_requests_sent: number };
}

export class Announcer {
  readonly #o: AnnouncerOptions;
  #online = false;
  #timer: TimerHandle | null = null;
  #lastMs: number | null = null;
  /** A path response waiting for the cap to allow it. */
  #pendingResponse = false;
  readonly #tags = new Set<string>();
  /** When we last asked for each destination's path (hex → ms). */
  readonly #asked = new Map<string, number>();
  /** Sends waiting for a destination's announce (hex → wakers). */
  readonly #waiters = new Map<string, Set<() => void>>();

  constructor(options: AnnouncerOptions) {
    this.#o = options;
  }

  online(): void {
    this.#online = true;
    this.#schedule(0);
  }

  offline(): void {
    this.#online = false;
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#pendingResponse = false;
    for (const wakers of this.#waiters.values()) for (const w of wakers) w();
    this.#waiters.clear();
  }

  get lastAnnounceAt(): string | null {
    return this.#lastMs === null ? null : new Date(this.#lastMs).toISOString();
  }

  /** The shortest gap between two announces that keeps them within the cap. */
  gapMs(announceBytes: number): number {
    const airtimeMs = ((announceBytes * 8) / this.#o.bitrateBps) * 1000;
    return Math.ceil(airtimeMs / ANNOUNCE_CAP);
  }

  #schedule(delayMs: number): void {
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = null;
      const pathResponse = this.#pendingResponse;
      void this.announce(pathResponse).then((outcome) => {
        // A deferred announce has its own timer already; a failed one is tried again soon.
        if (!this.#online || outcome === 'deferred') return;
        if (outcome === 'sent' && pathResponse) this.#pendingResponse = false;
        this.#schedule(outcome === 'sent' ? this.#o.announceIntervalS * 1000 : Math.min(ANNOUNCE_RETRY_MS, this.#o.announceIntervalS * 1000));
      });
    }, delayMs);
  }

  /** Sends our announce (in context PATH_RESPONSE when `pathResponse`), unless that would go
   *  over the cap: then it goes when allowed ('deferred', with its own timer). Only an announce
   *  that went on the air counts. */
  async announce(pathResponse = false): Promise<'sent' | 'deferred' | 'failed' | 'offline'> {
    if (!this.#online) return 'offline';
    const o = this.#o;
    const packet = createAnnounce({ identity: o.identity, name: LXMF_DELIVERY_NAME, now: o.clock.now() / 1000, appData: encodeLxmfAppData(o.displayName), pathResponse });
    const now = o.clock.now();
    const gap = this.gapMs(packet.length);
    if (this.#lastMs !== null && now - this.#lastMs < gap) {
      this.#schedule(this.#lastMs + gap - now);
      return 'deferred';
    }
    const r = await o.transmit(packet);
    if (!r.ok) {
      o.log.warn('lxmf.announce_failed', { interface: o.interfaceName, error: r.error });
      return 'failed';
    }
    this.#lastMs = now;
    o.counters.announces_sent++;
    o.counters.packets_out++;
    if (pathResponse) o.counters.path_responses_sent++;
    o.log.info(pathResponse ? 'lxmf.path_response' : 'lxmf.announced', { interface: o.interfaceName, address: toHex(o.address), display_name: o.displayName });
    return 'sent';
  }

  // ---- path requests ---------------------------------------------------------------------------

  /** A DATA packet to the path request destination. We are a leaf node: only requests for our
   *  own address are answered (Transport.path_request, "destination is local"), each tag once.
   *  The answer is our announce in context PATH_RESPONSE, now or as soon as the cap allows; it
   *  also counts as the next periodic announce. Returns false when the packet is not a request. */
  onPathRequest(p: Packet): boolean {
    const r = decodePathRequest(p);
    if (!r.ok) return false;
    this.#o.counters.path_requests_heard++;
    if (!equalBytes(r.request.destinationHash, this.#o.address) || !this.#online) return true;
    const key = pathRequestKey(r.request);
    if (this.#tags.has(key)) return true;
    this.#tags.add(key);
    if (this.#tags.size > TAGS_KEPT) this.#tags.delete(this.#tags.values().next().value!);
    if (this.#pendingResponse) return true; // one answer on its way serves every asker
    this.#pendingResponse = true;
    this.#schedule(0);
    return true;
  }

  /** Asks the network for a destination's path (and so its key), at most once per
   *  PATH_REQUEST_MIN_INTERVAL_MS for one destination. True when a request went out. */
  async requestPath(destination: Uint8Array): Promise<boolean> {
    const hex = toHex(destination);
    const now = this.#o.clock.now();
    const last = this.#asked.get(hex);
    if (last !== undefined && now - last < PATH_REQUEST_MIN_INTERVAL_MS) return false;
    this.#asked.set(hex, now);
    if (this.#asked.size > TAGS_KEPT) this.#asked.delete(this.#asked.keys().next().value!);
    const r = await this.#o.transmit(createPathRequest(destination));
    if (!r.ok) return false;
    this.#o.counters.path_requests_sent++;
    this.#o.counters.packets_out++;
    this.#o.log.info('lxmf.path_request', { interface: this.#o.interfaceName, destination: hex });
    return true;
  }

  /** Resolves when an announce from `address` was heard (see heard()) or after `ms`. */
  waitForAnnounce(address: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let wakers = this.#waiters.get(address);
      if (!wakers) this.#waiters.set(address, (wakers = new Set()));
      const done = () => {
        this.#o.clock.clearTimeout(timer);
        wakers.delete(done);
        if (wakers.size === 0 && this.#waiters.get(address) === wakers) this.#waiters.delete(address);
        resolve();
      };
      const timer = this.#o.clock.setTimeout(done, ms);
      wakers.add(done);
    });
  }

  /** A valid announce from `address` arrived: sends waiting for it go on. */
  heard(address: string): void {
    const wakers = this.#waiters.get(address);
    if (wakers) for (const w of [...wakers]) w();
  }
}
