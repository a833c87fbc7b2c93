import { EventEmitter } from 'node:events';
import { decodeUi, encodeUi, formatTnc2, parseAddress, type UiFrame, uiToTnc2 } from '../codec/ax25.ts';
import { decodeInfo } from '../codec/info.ts';
import { encodeAck, encodeMessage } from '../codec/message.ts';
import { encodeFrame, KissDecoder, kissPort } from '../../shared/codec/kiss.ts';
import type { HostedDevice } from '../../shared/simulators/pty.ts';

// A simulated APRS radio channel (docs/aprs.md, "Try it without hardware"): KISS TNCs (what the
// bridge opens, in process or over TCP) and simulated stations share it. A frame one TNC
// sends is heard by every other TNC and every station. Stations acknowledge messages addressed
// to them (an operator may make them lose the next acks), answer with a scripted reply, and a
// station with `digipeater` repeats, once, frames whose next path hop is WIDE1-1 or its own
// call, putting its call there marked used, as a fill-in digipeater does. Byte-level: the TNCs speak KISS, the air carries AX.25.

export interface SimStationOptions {
  callsign: string;
  /** Acknowledges messages to it (default true). */
  acks?: boolean;
  /** Repeats WIDEn-N frames (fill-in digipeater). */
  digipeater?: boolean;
  /** A reply to each new message it takes (null: none). */
  reply?: ((text: string, from: string) => string | null) | null;
}

export class SimStation {
  readonly callsign: string;
  readonly options: SimStationOptions;
  /** Acks still to lose: each message taken while this is above 0 goes unacknowledged. */
  loseAcks = 0;
  /** Messages it took, once each (sender, id). */
  readonly inbox: Array<{ from: string; text: string; id: string | null }> = [];
  readonly acksHeard: Array<{ from: string; id: string }> = [];
  /** Packets a digipeater repeated (source and information), each once. */
  readonly repeated = new Set<string>();
  #nextId = 1;
  readonly #seen = new Set<string>();

  constructor(options: SimStationOptions) {
    this.callsign = options.callsign.toUpperCase();
    this.options = options;
  }

  /** The id the station gives its next message. */
  nextId(): string {
    return `S${this.#nextId++}`;
  }

  /** Whether a (sender, id) is new to it; remembers it. */
  firstTime(from: string, id: string | null): boolean {
    if (id === null) return true;
    const key = `${from}|${id}`;
    if (this.#seen.has(key)) return false;
    this.#seen.add(key);
    return true;
  }
}

export class AprsChannel extends EventEmitter {
  readonly stations = new Map<string, SimStation>();
  readonly #tncs = new Set<SimTnc>();
  /** Every frame on the air, as TNC2 text, in order. */
  readonly air: string[] = [];

  addStation(options: SimStationOptions): SimStation {
    const s = new SimStation(options);
    this.stations.set(s.callsign, s);
    return s;
  }

  station(callsign: string): SimStation | undefined {
    return this.stations.get(callsign.toUpperCase());
  }

  attach(tnc: SimTnc): void {
    this.#tncs.add(tnc);
  }

  detach(tnc: SimTnc): void {
    this.#tncs.delete(tnc);
  }

  /** A station transmits `info` (to every TNC, and the other stations). */
  say(callsign: string, info: string, path: string[] = ['WIDE1-1']): void {
    const source = parseAddress(callsign.toUpperCase());
    if (!source) throw new RangeError(`not a callsign: ${callsign}`);
    this.transmit(encodeUi({ destination: { call: 'APZSIM', ssid: 0 }, source, path: path.map((p) => parseAddress(p)!), info: new TextEncoder().encode(info) }), null);
  }

  /** A station sends a message with an id (once; the test or operator repeats it). */
  message(from: string, to: string, text: string): string {
    const s = this.station(from);
    const id = s ? s.nextId() : '1';
    this.say(from, encodeMessage(to, text, id));
    return id;
  }

  /** One AX.25 frame on the air, from a TNC (or a station, when `from` is null). */
  transmit(frame: Uint8Array, from: SimTnc | null): void {
    const d = decodeUi(frame);
    if (!d.ok) return;
    const line = formatTnc2(uiToTnc2(d.frame));
    this.air.push(line);
    this.emit('frame', line);
    for (const tnc of this.#tncs) if (tnc !== from) tnc.hear(frame);
    setImmediate(() => {
      for (const s of this.stations.values()) this.#stationHears(s, d.frame);
    });
  }

  #stationHears(s: SimStation, frame: UiFrame): void {
    const source = uiToTnc2(frame).source;
    if (source === s.callsign) return;
    if (s.options.digipeater) this.#digipeat(s, frame);
    const info = decodeInfo(frame.destination.call, new TextDecoder().decode(frame.info));
    // A third-party frame from an iGate carries the message of an internet station.
    const inner = info.type === 'third-party' ? { from: info.packet.source, info: decodeInfo(info.packet.destination, info.packet.info) } : { from: source, info };
    const m = inner.info;
    if ((m.type === 'ack' || m.type === 'rej') && m.addressee.toUpperCase() === s.callsign) s.acksHeard.push({ from: inner.from, id: m.id });
    if (m.type !== 'message' || m.addressee.toUpperCase() !== s.callsign) return;
    const first = s.firstTime(inner.from, m.id);
    if (m.id !== null && s.options.acks !== false) {
      if (s.loseAcks > 0) s.loseAcks--;
      else this.say(s.callsign, encodeAck('ack', inner.from, m.id));
    }
    if (!first) return;
    s.inbox.push({ from: inner.from, text: m.text, id: m.id });
    this.emit('message', { station: s.callsign, from: inner.from, text: m.text });
    const reply = s.options.reply?.(m.text, inner.from);
    if (reply) this.say(s.callsign, encodeMessage(inner.from, reply, s.nextId()));
  }

  #digipeat(s: SimStation, frame: UiFrame): void {
    const at = frame.path.findIndex((a) => !a.flag);
    if (at < 0) return;
    const hop = frame.path[at];
    const me = parseAddress(s.callsign)!;
    // A fill-in digipeater answers WIDE1-1 and its own call, and repeats a packet once.
    const mine = hop.call === me.call && hop.ssid === me.ssid;
    if (!mine && !(hop.call === 'WIDE1' && hop.ssid === 1)) return;
    const key = `${formatTnc2({ ...uiToTnc2(frame), path: [] })}`;
    if (s.repeated.has(key)) return;
    s.repeated.add(key);
    const path = frame.path.map((a) => ({ ...a }));
    path[at] = { ...me, flag: true };
    const bytes = encodeUi({ destination: frame.destination, source: frame.source, path, info: frame.info });
    setImmediate(() => this.transmit(bytes, null));
  }
}

/** A KISS TNC on the channel: what the bridge's link reaches. */
export class SimTnc extends EventEmitter implements HostedDevice {
  readonly channel: AprsChannel;
  readonly name: string;
  #write: ((bytes: Uint8Array) => void) | null = null;
  readonly #decoder = new KissDecoder();
  framesFromHost = 0;

  constructor(channel: AprsChannel, name: string) {
    super();
    this.channel = channel;
    this.name = name;
    channel.attach(this);
  }

  attachHost(write: (bytes: Uint8Array) => void): void {
    this.#write = write;
  }

  detachHost(): void {
    this.#write = null;
  }

  fromHost(bytes: Uint8Array): void {
    for (const f of this.#decoder.push(bytes)) {
      if (kissPort(f.command).command !== 0) continue;
      this.framesFromHost++;
      this.channel.transmit(f.payload, this);
    }
  }

  /** A frame heard on the air, handed to the host. */
  hear(frame: Uint8Array): void {
    this.#write?.(encodeFrame(0, frame));
  }

  sendGarbage(): void {
    this.#write?.(new Uint8Array([0xc0, 0x00, 0x01, 0x02, 0xc0, 0xdb, 0x55]));
  }

  close(): void {
    this.channel.detach(this);
    this.#write = null;
  }
}
