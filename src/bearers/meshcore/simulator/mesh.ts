import { EventEmitter } from 'node:events';
import { systemClock, type Clock } from '../../../lib/clock.ts';
import { hex, PUB_KEY_PREFIX_SIZE, sameBytes, transportCode, utf8 } from '../codec/index.ts';
import type { AirPacket, SimRepeater } from './repeater.ts';

// The simulated air that simulated MeshCore companion radios share, in-process. A flat mesh:
// every node hears every other directly (a flood arrives after 0 hops), after `airDelayMs`,
// at the SNR of `snr`. What crosses it is what the firmware's BaseChatMesh sends, reduced to
// what a host can observe (docs/protocols/meshcore.md 6.5, 6.6): adverts, direct texts with
// the destination's ack (and the path it returns after a flood), and channel texts, which
// every node holding the channel's secret hears. There is no encryption: a node that does
// not know the sender as a contact drops a direct text, as the firmware cannot decrypt it.
// Deliveries and acks always go through the clock, never re-entrantly.
//
// Sites and repeaters (docs/protocols/meshcore.md 6.12): every node is on a site (all on one
// unless told otherwise). Nodes of one site hear each other directly; a packet reaches
// another site only through repeaters joining the sites that forward it (repeater.ts: the
// region filter), one hop per repeater. Floods carry the sender's flood scope as a transport
// code, computed over a stand-in for the encrypted payload (the simulator encrypts nothing);
// the destination's ack of a flooded text floods back in the destination's own scope.

/** PAYLOAD_TYPE_* of the packets the simulated air carries (src/Packet.h). */
const PAYLOAD_TYPE = { TXT_MSG: 0x02, GRP_TXT: 0x05, GRP_DATA: 0x06, PATH: 0x08 } as const;
export const DEFAULT_SITE = 'local';

export interface Advert {
  publicKey: Uint8Array;
  name: string;
  /** ADV_TYPE_*. */
  type: number;
  /** The sender's clock, seconds. */
  timestamp: number;
  latitude: number;
  longitude: number;
}

/** A direct text on air (PAYLOAD_TYPE_TXT_MSG, decrypted). */
export interface DirectText {
  from: Uint8Array;
  timestamp: number;
  attempt: number;
  txtType: number;
  text: string;
  /** Sent by flood (the sender knew no path) or along a known path. */
  flood: boolean;
  /** The transport key of the sender's flood scope; null: unscoped. */
  scope?: Uint8Array | null;
}

export interface ChannelText {
  from: Uint8Array;
  secret: Uint8Array;
  timestamp: number;
  /** "<sender name>: <text>", as BaseChatMesh::sendGroupMessage builds it. */
  text: string;
  scope?: Uint8Array | null;
}

/** A channel datagram (PAYLOAD_TYPE_GRP_DATA): no sender identity, no timestamp (6.6). */
export interface ChannelData {
  secret: Uint8Array;
  dataType: number;
  payload: Uint8Array;
  flood: boolean;
  scope?: Uint8Array | null;
}

/** What the mesh needs from a node on it. */
export interface MeshCoreMember {
  readonly publicKey: Uint8Array;
  /** The site it is on (default DEFAULT_SITE). */
  readonly site?: string;
  /** The transport key its floods carry, or null (unscoped). */
  floodScope?(): Uint8Array | null;
  advert(): Advert;
  hearAdvert(advert: Advert, snr: number): void;
  /** Returns the ack code the node sends back, or null when it drops the text (unknown
   *  sender, switched off, or a text type that is not acknowledged). `hops`: repeaters it
   *  came through. */
  hearDirect(text: DirectText, snr: number, hops?: number): number | null;
  hearChannel(text: ChannelText, snr: number, hops?: number): void;
  hearChannelData(data: ChannelData, snr: number, hops?: number): void;
  /** The destination's ack arrived; `pathReturned`: it came with a path (after a flood). */
  hearAck(ackCode: number, from: Uint8Array, pathReturned: boolean): void;
}

export interface MeshCoreMeshOptions {
  clock?: Clock;
  /** From transmission to reception (default 20 ms). */
  airDelayMs?: number;
  /** From reception of a direct text to the ack's arrival at the sender (default 30 ms). */
  ackDelayMs?: number;
  /** SNR of every reception, dB (default 6.25). */
  snr?: number;
  /** Nodes joining the mesh hear each other's adverts at once (default true), so two radios
   *  are contacts without a SEND_SELF_ADVERT. */
  advertOnJoin?: boolean;
}

export class MeshCoreMesh extends EventEmitter {
  readonly clock: Clock;
  readonly airDelayMs: number;
  readonly ackDelayMs: number;
  readonly snr: number;
  readonly #advertOnJoin: boolean;
  readonly #members = new Set<MeshCoreMember>();
  readonly #repeaters: SimRepeater[] = [];
  /** Counters for tests. */
  readonly counters = { adverts: 0, directTexts: 0, undeliveredTexts: 0, channelTexts: 0, channelData: 0, acks: 0, acksUnheard: 0 };

  constructor(options: MeshCoreMeshOptions = {}) {
    super();
    this.clock = options.clock ?? systemClock;
    this.airDelayMs = options.airDelayMs ?? 20;
    this.ackDelayMs = options.ackDelayMs ?? 30;
    this.snr = options.snr ?? 6.25;
    this.#advertOnJoin = options.advertOnJoin ?? true;
  }

  get members(): MeshCoreMember[] {
    return [...this.#members];
  }

  join(member: MeshCoreMember): void {
    if (this.#members.has(member)) return;
    const others = [...this.#members];
    this.#members.add(member);
    if (!this.#advertOnJoin) return;
    for (const other of others) {
      other.hearAdvert(member.advert(), this.snr);
      member.hearAdvert(other.advert(), this.snr);
    }
  }

  leave(member: MeshCoreMember): void {
    this.#members.delete(member);
  }

  has(member: MeshCoreMember): boolean {
    return this.#members.has(member);
  }

  /** Joins sites (repeater.ts). */
  addRepeater(repeater: SimRepeater): void {
    if (!this.#repeaters.includes(repeater)) this.#repeaters.push(repeater);
  }

  get repeaters(): SimRepeater[] {
    return [...this.#repeaters];
  }

  /** The sites a packet from `from` reaches, with the repeaters it took to get there: each
   *  repeater hears it once (from the first site that carries it to it) and forwards it or not. */
  #reach(from: MeshCoreMember, packet: { flood: boolean; scope: Uint8Array | null; payloadType: number; payload: Uint8Array }): Map<string, number> {
    const air: AirPacket = {
      flood: packet.flood, code: packet.flood && packet.scope ? transportCode(packet.scope, packet.payloadType, packet.payload) : null,
      payloadType: packet.payloadType, payload: packet.payload,
    };
    const start = siteOf(from);
    const hops = new Map([[start, 0]]);
    const heard = new Set<SimRepeater>();
    let frontier = [start];
    for (let hop = 1; frontier.length > 0; hop++) {
      const next: string[] = [];
      for (const r of this.#repeaters) {
        if (heard.has(r) || !r.sites.some((s) => frontier.includes(s))) continue;
        heard.add(r);
        if (!r.forwards(air)) continue;
        for (const s of r.sites) {
          if (hops.has(s)) continue;
          hops.set(s, hop);
          next.push(s);
        }
      }
      frontier = next;
    }
    return hops;
  }

  /** The member whose public key starts with `prefix` (6 bytes or the whole key). */
  find(prefix: Uint8Array): MeshCoreMember | undefined {
    for (const m of this.#members) if (sameBytes(m.publicKey.subarray(0, prefix.length), prefix)) return m;
    return undefined;
  }

  #later(fn: () => void, ms: number): void {
    this.clock.setTimeout(fn, ms);
  }

  advertise(from: MeshCoreMember): void {
    this.counters.adverts++;
    const advert = from.advert();
    this.emit('advert', advert);
    this.#later(() => {
      for (const m of this.#members) if (m !== from) m.hearAdvert(advert, this.snr);
    }, this.airDelayMs);
  }

  /** A direct text to the node whose key starts with `to`. The ack (if any) comes back to
   *  `from` after ackDelayMs unless `loseAck` says otherwise when it is due. */
  sendDirect(from: MeshCoreMember, to: Uint8Array, text: DirectText, loseAck: () => boolean): void {
    this.counters.directTexts++;
    this.emit('direct', { to: hex(to.subarray(0, PUB_KEY_PREFIX_SIZE)), text });
    this.#later(() => {
      const dest = this.find(to);
      const reach = this.#reach(from, { flood: text.flood, scope: text.scope ?? null, payloadType: PAYLOAD_TYPE.TXT_MSG, payload: textPayload(text.timestamp, text.text) });
      const hops = dest ? reach.get(siteOf(dest)) : undefined;
      const ack = dest && dest !== from && hops !== undefined ? dest.hearDirect(text, this.snr, hops) : null;
      if (ack === null) {
        this.counters.undeliveredTexts++;
        return;
      }
      // A flooded text is answered by a flood in the destination's scope (the path comes back
      // with the ack: BaseChatMesh onPeerDataRecv, sendFloodScoped); a direct one by the way back.
      const back = this.#reach(dest!, { flood: text.flood, scope: dest!.floodScope?.() ?? null, payloadType: PAYLOAD_TYPE.PATH, payload: ackPayload(ack) });
      if (!back.has(siteOf(from))) {
        this.counters.acksUnheard++;
        return;
      }
      this.#later(() => {
        if (!this.#members.has(from) || loseAck()) return;
        this.counters.acks++;
        from.hearAck(ack, dest!.publicKey, text.flood);
      }, this.ackDelayMs);
    }, this.airDelayMs);
  }

  sendChannel(from: MeshCoreMember, text: ChannelText): void {
    this.counters.channelTexts++;
    this.emit('channel', text);
    this.#later(() => {
      const reach = this.#reach(from, { flood: true, scope: text.scope ?? null, payloadType: PAYLOAD_TYPE.GRP_TXT, payload: textPayload(text.timestamp, text.text) });
      for (const m of this.#members) {
        const hops = reach.get(siteOf(m));
        if (m !== from && hops !== undefined) m.hearChannel(text, this.snr, hops);
      }
    }, this.airDelayMs);
  }

  sendChannelData(from: MeshCoreMember, data: ChannelData): void {
    this.counters.channelData++;
    this.emit('channel-data', data);
    this.#later(() => {
      const reach = this.#reach(from, { flood: data.flood, scope: data.scope ?? null, payloadType: PAYLOAD_TYPE.GRP_DATA, payload: data.payload });
      for (const m of this.#members) {
        const hops = reach.get(siteOf(m));
        if (m !== from && hops !== undefined) m.hearChannelData(data, this.snr, hops);
      }
    }, this.airDelayMs);
  }
}

const siteOf = (m: MeshCoreMember): string => m.site ?? DEFAULT_SITE;

/** Stand-ins for the encrypted payloads the transport code is computed over. */
function textPayload(timestamp: number, text: string): Uint8Array {
  const t = utf8(text);
  const out = new Uint8Array(4 + t.length);
  new DataView(out.buffer).setUint32(0, timestamp >>> 0, true);
  out.set(t, 4);
  return out;
}

function ackPayload(ack: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, ack >>> 0, true);
  return out;
}
