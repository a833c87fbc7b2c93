import type { Clock, TimerHandle } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/log.ts';
import { equalBytes, toHex } from '../../shared/codec/bytes.ts';
import { CONTEXT, MTU, PACKET_TYPE } from '../reticulum/constants.ts';
import type { Packet } from '../reticulum/packet.ts';
import {
  type Advertisement, assembleResource, decodeAdvertisement, decodeRequest, decodeResourceProof, encodeAdvertisement, encodeRequest,
  HASHMAP_MAX_LEN, mapHash, MAPHASH_LENGTH, prepareResource, RESOURCE_FLAG, resourceProof, resourceSdu, transferSize,
} from '../reticulum/resource.ts';
import type { ResourceSender } from './direct.ts';
import type { LinkSession, LinkTable } from './links.ts';

// Resource transfers over our links (docs/reticulum.md, "Large messages"; timing after
// RNS/Resource.py): one state machine per resource each way, on the injected clock. We send
// uncompressed (our announce claims no compression, so LXMF sends to us uncompressed too) and
// only resources that one hashmap describes (74 parts); anything else is refused with a reason.

/** Seconds of airtime one resource may take on the radio (docs/reticulum.md, "Large messages"). */
export const RESOURCE_AIRTIME_BUDGET_S = 120;

/** The largest resource data at this bit rate: what fits RESOURCE_AIRTIME_BUDGET_S of airtime in
 *  parts of 483 bytes on the air, and never more than one hashmap of parts (74 x 464 bytes of
 *  token, less its framing: 34,267 bytes). */
export function resourceBudgetBytes(bitrateBps: number): number {
  const sdu = resourceSdu(MTU);
  const partsByAirtime = Math.floor((RESOURCE_AIRTIME_BUDGET_S * bitrateBps) / 8 / (sdu + 19));
  const parts = Math.max(1, Math.min(HASHMAP_MAX_LEN, partsByAirtime));
  // The largest data whose token fills `parts` parts: 48 bytes of IV and HMAC, PKCS#7 padding
  // (at least one byte), and the 4 random bytes in front.
  return Math.floor((parts * sdu - 48) / 16) * 16 - 1 - 4;
}

export interface TransfersOptions {
  interfaceName: string;
  clock: Clock;
  log: Logger;
  links: LinkTable;
  bitrateBps: number;
  /** Largest data one resource may carry (the airtime budget, docs/reticulum.md). */
  maxBytes: number;
  /** An assembled resource: `prove` sends its proof (once the caller has stored it). */
  received(link: LinkSession, data: Uint8Array, prove: () => void): void;
  /** Whether a request of ours with this id waits for its answer on the link: only then is a
   *  resource flagged "is response" taken. */
  expectsResponse?(link: LinkSession, requestId: Uint8Array): boolean;
  /** An assembled response resource (msgpack [request id, response]); proven at once. */
  response?(link: LinkSession, data: Uint8Array): void;
  counters: { resources_out: number; resources_in: number; resources_failed: number; resource_parts_resent: number };
}

// Resource.py constants.
const WINDOW = 4;
const WINDOW_MAX = 10;
const MAX_RETRIES = 16;
const MAX_ADV_RETRIES = 4;
const PROOF_RETRIES = 3;
const SENDER_GRACE_MS = 10_000;
const PROCESSING_GRACE_MS = 1_000;
const PER_RETRY_DELAY_MS = 500;
const RETRY_GRACE_MS = 250;
const TRAFFIC_TIMEOUT_FACTOR = 6;
const PART_TIMEOUT_FACTOR = 4;

interface Outgoing {
  link: LinkSession;
  adv: Advertisement;
  parts: Uint8Array[];
  hashes: Uint8Array[];
  sent: boolean[];
  expectedProof: Uint8Array;
  state: 'advertised' | 'transferring' | 'awaiting_proof';
  retries: number;
  timer: TimerHandle | null;
  done(r: { ok: true } | { ok: false; error: string }): void;
}

interface Incoming {
  link: LinkSession;
  adv: Advertisement;
  parts: (Uint8Array | null)[];
  hashes: Uint8Array[];
  received: number;
  window: number;
  outstanding: number;
  retries: number;
  timer: TimerHandle | null;
  onClose(): void;
}

export class Transfers implements ResourceSender {
  readonly #o: TransfersOptions;
  readonly #out = new Map<string, Outgoing>();
  readonly #in = new Map<string, Incoming>();

  constructor(options: TransfersOptions) {
    this.#o = options;
  }

  get maxBytes(): number {
    return this.#o.maxBytes;
  }

  get active(): number {
    return this.#out.size + this.#in.size;
  }

  #partAirtimeMs(link: LinkSession): number {
    return (((resourceSdu(link.mtu) + 19) * 8) / this.#o.bitrateBps) * 1000;
  }

  #rttMs(link: LinkSession): number {
    return Math.max(link.rttMs ?? 0, this.#partAirtimeMs(link));
  }

  // ---- sending ----------------------------------------------------------------------------------

  send(link: LinkSession, data: Uint8Array): Promise<{ ok: true } | { ok: false; error: string }> {
    if (!link.key) return Promise.resolve({ ok: false, error: 'the link has no key' });
    const sdu = resourceSdu(link.mtu);
    if (data.length > this.#o.maxBytes || Math.ceil(transferSize(data.length) / sdu) > HASHMAP_MAX_LEN) {
      return Promise.resolve({ ok: false, error: `${data.length} bytes is more than one resource of ours carries (${this.#o.maxBytes})` });
    }
    const r = prepareResource(data, link.key, sdu);
    const key = toHex(r.advertisement.h);
    this.#o.counters.resources_out++;
    return new Promise((resolve) => {
      const t: Outgoing = {
        link, adv: r.advertisement, parts: r.parts, hashes: r.parts.map((p) => mapHash(p, r.advertisement.r)), sent: r.parts.map(() => false),
        expectedProof: r.expectedProof, state: 'advertised', retries: MAX_ADV_RETRIES, timer: null,
        done: (result) => {
          if (t.timer) this.#o.clock.clearTimeout(t.timer);
          link.closed.delete(onClose);
          this.#out.delete(key);
          if (!result.ok) this.#o.counters.resources_failed++;
          resolve(result);
        },
      };
      const onClose = (reason: string) => t.done({ ok: false, error: `the link closed mid-resource (${reason})` });
      link.closed.add(onClose);
      this.#out.set(key, t);
      void this.#advertise(t);
    });
  }

  async #advertise(t: Outgoing): Promise<void> {
    const sent = await this.#o.links.send(t.link, CONTEXT.RESOURCE_ADV, encodeAdvertisement(t.adv));
    if (!sent.ok) return t.done({ ok: false, error: `the advertisement could not be sent: ${sent.error}` });
    this.#arm(t, () => this.#rttMs(t.link) * TRAFFIC_TIMEOUT_FACTOR + PROCESSING_GRACE_MS, () => {
      if (t.state !== 'advertised') return;
      if (t.retries-- <= 0) return this.#cancelOut(t, 'the receiver never asked for a part');
      void this.#advertise(t);
    });
  }

  #arm(t: { timer: TimerHandle | null }, ms: () => number, fire: () => void): void {
    if (t.timer) this.#o.clock.clearTimeout(t.timer);
    t.timer = this.#o.clock.setTimeout(fire, Math.max(1, ms()));
  }

  async #onRequest(t: Outgoing, plaintext: Uint8Array): Promise<void> {
    const r = decodeRequest(plaintext);
    if (!r.ok || !equalBytes(r.request.resourceHash, t.adv.h)) return;
    if (r.request.exhausted) return this.#cancelOut(t, 'the receiver asked for a hashmap update, which a one-segment resource never needs');
    t.state = 'transferring';
    t.retries = MAX_RETRIES;
    for (const wanted of r.request.mapHashes) {
      const i = t.hashes.findIndex((h) => equalBytes(h, wanted));
      if (i < 0) continue;
      if (t.sent[i]) this.#o.counters.resource_parts_resent++;
      const sent = await this.#o.links.send(t.link, CONTEXT.RESOURCE, t.parts[i]);
      if (!sent.ok) return this.#cancelOut(t, `a part could not be sent: ${sent.error}`);
      t.sent[i] = true;
    }
    if (t.sent.every(Boolean)) {
      t.state = 'awaiting_proof';
      t.retries = PROOF_RETRIES;
      this.#armProofWait(t);
    } else {
      // The receiver re-asks for what it misses; a sender that hears nothing gives up after
      // every retry the receiver could have made (Resource.__watchdog_job, sender side).
      const extra = Array.from({ length: MAX_RETRIES }, (_, k) => (k + 1) * PER_RETRY_DELAY_MS).reduce((a, b) => a + b, 0);
      this.#arm(t, () => this.#rttMs(t.link) * TRAFFIC_TIMEOUT_FACTOR * MAX_RETRIES + SENDER_GRACE_MS + extra, () => this.#cancelOut(t, 'the receiver went silent'));
    }
  }

  #armProofWait(t: Outgoing): void {
    this.#arm(t, () => this.#rttMs(t.link) * 3 + SENDER_GRACE_MS, () => {
      if (t.retries-- <= 0) return this.#cancelOut(t, 'no proof of the assembled resource');
      this.#armProofWait(t);
    });
  }

  #onProof(t: Outgoing, data: Uint8Array): void {
    const p = decodeResourceProof(data);
    if (!p.ok || !equalBytes(p.proof, t.expectedProof)) return;
    this.#o.log.info('lxmf.resource_sent', { interface: this.#o.interfaceName, link: t.link.idHex, bytes: t.adv.d, parts: t.parts.length });
    t.done({ ok: true });
  }

  #cancelOut(t: Outgoing, why: string): void {
    if (t.link.state === 'active') void this.#o.links.send(t.link, CONTEXT.RESOURCE_ICL, t.adv.h);
    this.#o.log.warn('lxmf.resource_failed', { interface: this.#o.interfaceName, link: t.link.idHex, direction: 'out', reason: why });
    t.done({ ok: false, error: why });
  }

  // ---- receiving ----------------------------------------------------------------------------------

  /** A resource packet on one of our links (LinkTable hands them over). */
  onPacket(link: LinkSession, p: Packet, plaintext: Uint8Array | null): void {
    if (p.packetType === PACKET_TYPE.PROOF && p.context === CONTEXT.RESOURCE_PRF) {
      const t = this.#out.get(toHex(p.data.subarray(0, 32)));
      if (t && t.link === link) this.#onProof(t, p.data);
      return;
    }
    if (p.context === CONTEXT.RESOURCE) {
      for (const r of this.#in.values()) if (r.link === link && this.#onPart(r, p.data)) return;
      return;
    }
    if (!plaintext) return;
    const hash = plaintext.subarray(0, 32);
    switch (p.context) {
      case CONTEXT.RESOURCE_ADV: this.#onAdvertisement(link, plaintext); break;
      case CONTEXT.RESOURCE_REQ: {
        const r = decodeRequest(plaintext);
        const t = r.ok ? this.#out.get(toHex(r.request.resourceHash)) : undefined;
        if (t && t.link === link) void this.#onRequest(t, plaintext);
        break;
      }
      case CONTEXT.RESOURCE_ICL: { // the sender cancelled
        const r = this.#in.get(toHex(hash));
        if (r && r.link === link) this.#dropIn(r, 'the sender cancelled it', false);
        break;
      }
      case CONTEXT.RESOURCE_RCL: { // the receiver refused or cancelled
        const t = this.#out.get(toHex(hash));
        if (t && t.link === link) t.done({ ok: false, error: 'the receiver refused or cancelled the resource' });
        break;
      }
      default: break; // hashmap updates: never needed for one-segment resources
    }
  }

  #onAdvertisement(link: LinkSession, plaintext: Uint8Array): void {
    const d = decodeAdvertisement(plaintext);
    if (!d.ok) {
      this.#o.log.debug('lxmf.resource_adv_dropped', { interface: this.#o.interfaceName, code: d.code, reason: d.reason });
      return;
    }
    const a = d.advertisement;
    const key = toHex(a.h);
    const known = this.#in.get(key);
    if (known) return this.#requestNext(known); // the sender advertised again: our request was lost
    const answer = Boolean(a.f & RESOURCE_FLAG.IS_RESPONSE) && a.q !== null && (this.#o.expectsResponse?.(link, a.q) ?? false);
    const why = refusal(a, this.#o.maxBytes, resourceSdu(link.mtu), answer);
    if (why) {
      this.#o.log.warn('lxmf.resource_refused', { interface: this.#o.interfaceName, link: link.idHex, reason: why });
      void this.#o.links.send(link, CONTEXT.RESOURCE_RCL, a.h);
      return;
    }
    const hashes: Uint8Array[] = [];
    for (let i = 0; i < a.m.length; i += MAPHASH_LENGTH) hashes.push(a.m.subarray(i, i + MAPHASH_LENGTH));
    const r: Incoming = {
      link, adv: a, parts: new Array(a.n).fill(null), hashes, received: 0, window: WINDOW, outstanding: 0, retries: MAX_RETRIES, timer: null,
      onClose: () => this.#dropIn(r, 'the link closed', false),
    };
    this.#in.set(key, r);
    link.closed.add(r.onClose);
    this.#o.counters.resources_in++;
    this.#requestNext(r);
  }

  /** Asks for the next window of missing parts (Resource.request_next). */
  #requestNext(r: Incoming): void {
    const wanted: Uint8Array[] = [];
    for (let i = 0; i < r.parts.length && wanted.length < r.window; i++) if (!r.parts[i]) wanted.push(r.hashes[i]);
    r.outstanding = wanted.length;
    void this.#o.links.send(r.link, CONTEXT.RESOURCE_REQ, encodeRequest({ exhausted: false, lastMapHash: null, resourceHash: r.adv.h, mapHashes: wanted }));
    // Parts not heard in time are asked for again, up to MAX_RETRIES, each wait a little longer.
    const used = MAX_RETRIES - r.retries;
    this.#arm(r, () => PART_TIMEOUT_FACTOR * r.outstanding * this.#partAirtimeMs(r.link) + this.#rttMs(r.link) * 2 + RETRY_GRACE_MS + used * PER_RETRY_DELAY_MS, () => {
      if (r.retries-- <= 0) return this.#dropIn(r, 'parts stopped coming', true);
      r.window = Math.max(2, r.window - 1);
      this.#requestNext(r);
    });
  }

  #onPart(r: Incoming, part: Uint8Array): boolean {
    const h = mapHash(part, r.adv.r);
    const i = r.hashes.findIndex((x, k) => !r.parts[k] && equalBytes(x, h));
    if (i < 0) return false;
    r.parts[i] = part.slice();
    r.received++;
    r.outstanding--;
    r.retries = MAX_RETRIES;
    if (r.received === r.parts.length) this.#assemble(r);
    else if (r.outstanding <= 0) {
      if (r.window < WINDOW_MAX) r.window++;
      this.#requestNext(r);
    }
    return true;
  }

  #assemble(r: Incoming): void {
    if (r.timer) this.#o.clock.clearTimeout(r.timer);
    const data = r.link.key ? assembleResource(r.parts as Uint8Array[], r.link.key, r.adv) : null;
    if (!data) return this.#dropIn(r, 'the assembled resource does not check out', true);
    this.#in.delete(toHex(r.adv.h));
    r.link.closed.delete(r.onClose);
    this.#o.log.info('lxmf.resource_received', { interface: this.#o.interfaceName, link: r.link.idHex, bytes: data.length, parts: r.parts.length });
    const prove = () => void this.#o.links.send(r.link, CONTEXT.RESOURCE_PRF, resourceProof(data, r.adv.h), PACKET_TYPE.PROOF);
    if (r.adv.f & RESOURCE_FLAG.IS_RESPONSE) {
      prove();
      this.#o.response?.(r.link, data);
      return;
    }
    this.#o.received(r.link, data, prove);
  }

  #dropIn(r: Incoming, why: string, tell: boolean): void {
    const key = toHex(r.adv.h);
    if (this.#in.get(key) !== r) return;
    this.#in.delete(key);
    r.link.closed.delete(r.onClose);
    if (r.timer) this.#o.clock.clearTimeout(r.timer);
    this.#o.counters.resources_failed++;
    if (tell && r.link.state === 'active') void this.#o.links.send(r.link, CONTEXT.RESOURCE_RCL, r.adv.h);
    this.#o.log.warn('lxmf.resource_failed', { interface: this.#o.interfaceName, link: r.link.idHex, direction: 'in', reason: why });
  }
}

/** Why an advertised resource is refused, or null to take it. */
function refusal(a: Advertisement, maxBytes: number, sdu: number, expectedResponse: boolean): string | null {
  if (!(a.f & RESOURCE_FLAG.ENCRYPTED)) return 'not encrypted';
  if (a.f & RESOURCE_FLAG.COMPRESSED) return 'compressed (bz2), which this bridge cannot decompress; our announce asks for uncompressed resources';
  if (!expectedResponse && (a.f & (RESOURCE_FLAG.IS_REQUEST | RESOURCE_FLAG.IS_RESPONSE | RESOURCE_FLAG.METADATA) || a.q)) return 'a request, metadata resource, or a response to no request of ours: LXMF delivery uses none';
  if (a.f & (RESOURCE_FLAG.IS_REQUEST | RESOURCE_FLAG.METADATA)) return 'a request or metadata resource';
  if (a.l !== 1 || a.i !== 1 || a.f & RESOURCE_FLAG.SPLIT) return 'split into segments';
  if (a.n > HASHMAP_MAX_LEN || a.m.length !== a.n * MAPHASH_LENGTH) return `${a.n} parts: more than one hashmap (${HASHMAP_MAX_LEN})`;
  if (a.d > maxBytes) return `${a.d} bytes is more than the ${maxBytes} bytes we take`;
  if (a.n !== Math.ceil(a.t / sdu)) return `${a.n} parts do not match a transfer size of ${a.t}`;
  return null;
}
