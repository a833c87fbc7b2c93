import { EventEmitter } from 'node:events';
import { systemClock, type Clock } from '../../../lib/clock.ts';
import { hex, PUB_KEY_PREFIX_SIZE, sameBytes } from '../codec/index.ts';

// The simulated air that simulated MeshCore companion radios share, in-process. A flat mesh:
// every node hears every other directly (a flood arrives after 0 hops), after `airDelayMs`,
// at the SNR of `snr`. What crosses it is what the firmware's BaseChatMesh sends, reduced to
// what a host can observe (docs/protocols/meshcore.md 6.5, 6.6): adverts, direct texts with
// the destination's ack (and the path it returns after a flood), and channel texts, which
// every node holding the channel's secret hears. There is no encryption: a node that does
// not know the sender as a contact drops a direct text, as the firmware cannot decrypt it.
// Deliveries and acks always go through the clock, never re-entrantly.

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
}

export interface ChannelText {
  from: Uint8Array;
  secret: Uint8Array;
  timestamp: number;
  /** "<sender name>: <text>", as BaseChatMesh::sendGroupMessage builds it. */
  text: string;
}

/** A channel datagram (PAYLOAD_TYPE_GRP_DATA): no sender identity, no timestamp (6.6). */
export interface ChannelData {
  secret: Uint8Array;
  dataType: number;
  payload: Uint8Array;
  flood: boolean;
}

/** What the mesh needs from a node on it. */
export interface MeshCoreMember {
  readonly publicKey: Uint8Array;
  advert(): Advert;
  hearAdvert(advert: Advert, snr: number): void;
  /** Returns the ack code the node sends back, or null when it drops the text (unknown
   *  sender, switched off, or a text type that is not acknowledged). */
  hearDirect(text: DirectText, snr: number): number | null;
  hearChannel(text: ChannelText, snr: number): void;
  hearChannelData(data: ChannelData, snr: number): void;
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
  /** Counters for tests. */
  readonly counters = { adverts: 0, directTexts: 0, undeliveredTexts: 0, channelTexts: 0, channelData: 0, acks: 0 };

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
      const ack = dest && dest !== from ? dest.hearDirect(text, this.snr) : null;
      if (ack === null) {
        this.counters.undeliveredTexts++;
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
      for (const m of this.#members) if (m !== from) m.hearChannel(text, this.snr);
    }, this.airDelayMs);
  }

  sendChannelData(from: MeshCoreMember, data: ChannelData): void {
    this.counters.channelData++;
    this.emit('channel-data', data);
    this.#later(() => {
      for (const m of this.#members) if (m !== from) m.hearChannelData(data, this.snr);
    }, this.airDelayMs);
  }
}
