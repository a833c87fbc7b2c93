import { EventEmitter } from 'node:events';
import { systemClock, type Clock } from '../../../lib/clock.ts';
import { keysFromSeed, nodeNumFromKey } from './identity.ts';
import {
  BROADCAST, DEVICE_ROLE, encodeRouting, encodeUser, formatNodeId, type MeshPacket, type NodeInfo, PORT_NUM, PRIORITY, ROUTING_ERROR, type User,
} from '../codec/messages.ts';

// The simulated air that simulated Meshtastic nodes share, in-process. Every node hears every
// other one directly (a flat mesh: no relaying, hops taken 0), after `airDelayMs`, with the
// link figures of linkQuality(). The mesh also answers want_ack the way the firmware's
// ReliableRouter does (docs/protocols/meshtastic.md 2.5, 2.7): the destination's ack or
// NAK for a direct message, MAX_RETRANSMIT when nobody answers, and the implicit ack of a
// broadcast that a neighbour was heard repeating. Deliveries and acks always go through the
// clock, never re-entrantly inside transmit().
//
// Members are the devices attached to hosts (device.ts) and virtual remote nodes with no host
// (addRemoteNode), which tests use to inject traffic "from the network".

export type RoutingErrorName = keyof typeof ROUTING_ERROR;

export interface MeshReception {
  rx_snr: number;
  rx_rssi: number;
}

export type MeshLinkQuality = (from: number, to: number) => MeshReception;

/** What the mesh needs from a node on it. */
export interface MeshMember {
  readonly num: number;
  /** How other nodes' databases describe this node (user, last_heard...). */
  nodeInfo(): NodeInfo;
  /** A packet was heard on air (a copy with rx_snr, rx_rssi, rx_time, hop fields set). */
  hear(packet: MeshPacket): void;
  /** The error_reason this node answers a direct want_ack packet with (NONE = delivered), or
   *  null when it does not answer at all (the sender then gives up with MAX_RETRANSMIT). */
  ackReason(packet: MeshPacket): number | null;
}

export interface MeshtasticMeshOptions {
  clock?: Clock;
  /** Figures of every reception unless linkQuality is given: 6.25 dB, -80 dBm. */
  snr?: number;
  rssi?: number;
  linkQuality?: MeshLinkQuality;
  /** From transmit() to reception (0 = the next timer turn). */
  airDelayMs?: number;
  /** Defaults for senders that give none (remote nodes): the destination's ack, and the
   *  firmware giving up on a packet nobody acknowledged. */
  ackDelayMs?: number;
  retransmitTimeoutMs?: number;
  /** Seed of the packet ids the mesh makes up (acks, remote nodes' packets). */
  seed?: number;
}

/** How a sender wants its want_ack answered. */
export interface AckPlan {
  ackDelayMs: number;
  retransmitTimeoutMs: number;
  /** Fault: replace the destination's NONE by this error (direct messages only). */
  refuseAcks: number | null;
  /** Gets the ROUTING_APP packet, as the sender's radio would hand it to its host. */
  deliver(routing: MeshPacket): void;
}

// Errors a sender's own radio produces (it gave up, or refused to send); any other error is
// the destination's answer and comes from the destination (mesh.proto Routing.Error).
const LOCAL_ERRORS = new Set<number>([
  ROUTING_ERROR.NO_ROUTE, ROUTING_ERROR.TIMEOUT, ROUTING_ERROR.NO_INTERFACE, ROUTING_ERROR.MAX_RETRANSMIT, ROUTING_ERROR.TOO_LARGE,
  ROUTING_ERROR.DUTY_CYCLE_LIMIT, ROUTING_ERROR.RATE_LIMIT_EXCEEDED, ROUTING_ERROR.PKI_SEND_FAIL_PUBLIC_KEY,
]);

/** The firmware's default hop limit (config.proto LoRaConfig.hop_limit; docs 2.5). */
export const DEFAULT_HOP_LIMIT = 3;
/** Largest hop limit; a larger one falls back to the configured default (docs 2.5). */
export const HOP_MAX = 7;

export class MeshtasticMesh extends EventEmitter {
  readonly clock: Clock;
  readonly #members = new Map<number, MeshMember>();
  readonly #quality: MeshLinkQuality;
  readonly #airDelayMs: number;
  readonly defaultAckDelayMs: number;
  readonly defaultRetransmitTimeoutMs: number;
  #idState: number;
  /** Transmissions so far, and receptions they made. */
  transmissions = 0;
  receptions = 0;

  constructor(options: MeshtasticMeshOptions = {}) {
    super();
    this.clock = options.clock ?? systemClock;
    const fixed = { rx_snr: options.snr ?? 6.25, rx_rssi: options.rssi ?? -80 };
    this.#quality = options.linkQuality ?? (() => fixed);
    this.#airDelayMs = options.airDelayMs ?? 0;
    this.defaultAckDelayMs = options.ackDelayMs ?? 200;
    this.defaultRetransmitTimeoutMs = options.retransmitTimeoutMs ?? 2000;
    this.#idState = (options.seed ?? 0x5eed) >>> 0 || 1;
  }

  join(member: MeshMember): void {
    const other = this.#members.get(member.num);
    if (other && other !== member) throw new Error(`node ${formatNodeId(member.num)} is already on this mesh`);
    this.#members.set(member.num, member);
  }

  leave(member: MeshMember): void {
    if (this.#members.get(member.num) === member) this.#members.delete(member.num);
  }

  has(num: number): boolean {
    return this.#members.has(num);
  }

  /** The node on the air under `num`, if any. */
  member(num: number): MeshMember | undefined {
    return this.#members.get(num);
  }

  get size(): number {
    return this.#members.size;
  }

  /** NodeInfo of every node on the mesh but `except`: what a node's database holds after
   *  everyone's NODEINFO_APP broadcasts (a simplification: nodes know each other at once). */
  nodeInfos(except: number): NodeInfo[] {
    return [...this.#members.values()].filter((m) => m.num !== except).map((m) => ({ ...m.nodeInfo(), hops_away: 0 }));
  }

  /** A fresh non-zero packet id: low 10 bits a counter, high 22 bits seeded noise, like the
   *  clients (docs 2.5). */
  nextPacketId(): number {
    let s = this.#idState;
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    this.#idState = s >>> 0;
    const id = ((this.#idState & 0xfffffc00) | (++this.transmissions & 0x3ff)) >>> 0;
    return id === 0 ? 1 : id;
  }

  /** Sends `packet` (from = the sender's number, hop fields set) to every other node. When it
   *  wants an ack, `ack` says how the answer reaches the sender. */
  transmit(sender: MeshMember, packet: MeshPacket, ack?: AckPlan): void {
    this.transmissions++;
    const listeners = [...this.#members.values()].filter((m) => m !== sender);
    const destination = packet.to === undefined || packet.to === BROADCAST ? undefined : this.#members.get(packet.to);
    this.clock.setTimeout(() => {
      for (const m of listeners) {
        if (this.#members.get(m.num) !== m) continue; // left meanwhile
        this.receptions++;
        m.hear(this.received(packet, sender.num, m.num));
      }
    }, this.#airDelayMs);
    if (!packet.want_ack || !ack) return;
    const id = packet.id ?? 0;
    const answer = (from: number, reason: number, delayMs: number, viaAir: boolean) =>
      this.clock.setTimeout(() => ack.deliver(this.routingPacket(from, sender.num, id, reason, viaAir)), this.#airDelayMs + delayMs);
    if (packet.to === BROADCAST) {
      // Implicit ack: a neighbour was heard repeating it (ReliableRouter; docs 2.7). Nobody
      // there: the firmware retransmits, then gives up.
      if (listeners.length > 0) answer(sender.num, ROUTING_ERROR.NONE, ack.ackDelayMs, false);
      else answer(sender.num, ROUTING_ERROR.MAX_RETRANSMIT, ack.retransmitTimeoutMs, false);
      return;
    }
    const reason = destination ? destination.ackReason(packet) : null;
    if (!destination || reason === null) {
      answer(sender.num, ROUTING_ERROR.MAX_RETRANSMIT, ack.retransmitTimeoutMs, false);
      return;
    }
    const final = ack.refuseAcks ?? reason;
    if (LOCAL_ERRORS.has(final)) answer(sender.num, final, final === ROUTING_ERROR.MAX_RETRANSMIT ? ack.retransmitTimeoutMs : ack.ackDelayMs, false);
    else answer(destination.num, final, ack.ackDelayMs, true);
  }

  /** The copy a node hears: rx figures, the receive time, hop_limit as sent (a direct
   *  neighbour, so hop_start - hop_limit = 0 hops taken). */
  received(packet: MeshPacket, from: number, to: number): MeshPacket {
    const q = this.#quality(from, to);
    return {
      ...packet,
      decoded: packet.decoded ? { ...packet.decoded } : undefined,
      rx_time: Math.floor(this.clock.now() / 1000),
      rx_snr: q.rx_snr,
      rx_rssi: q.rx_rssi,
    };
  }

  /** A ROUTING_APP answer to packet `requestId` (mesh.proto Routing; Data.request_id). An
   *  answer that crossed the air carries rx figures; the sender's own verdict does not. */
  routingPacket(from: number, to: number, requestId: number, reason: number, viaAir: boolean): MeshPacket {
    const p: MeshPacket = {
      from,
      to,
      id: this.nextPacketId(),
      decoded: { portnum: PORT_NUM.ROUTING_APP, payload: encodeRouting({ error_reason: reason }), request_id: requestId },
      priority: PRIORITY.ACK,
      rx_time: Math.floor(this.clock.now() / 1000),
    };
    if (!viaAir) return p;
    const q = this.#quality(from, to);
    return { ...p, hop_limit: DEFAULT_HOP_LIMIT, hop_start: DEFAULT_HOP_LIMIT, rx_snr: q.rx_snr, rx_rssi: q.rx_rssi };
  }

  /** A node tells the mesh who it is: a NODEINFO_APP broadcast of its User, as the firmware
   *  sends one after it boots (NodeInfoModule). */
  announce(member: MeshMember): void {
    const user = member.nodeInfo().user;
    if (!user) return;
    const decoded = { portnum: PORT_NUM.NODEINFO_APP, payload: encodeUser(user) };
    this.transmit(member, { from: member.num, to: BROADCAST, id: this.nextPacketId(), channel: 0, decoded, hop_limit: DEFAULT_HOP_LIMIT, hop_start: DEFAULT_HOP_LIMIT });
  }

  /** A node on this mesh takes another number (a firmware upgrade): off the air under the old
   *  one, on it under the new one. */
  renumber(member: MeshMember, apply: () => void): void {
    const on = this.#members.get(member.num) === member;
    if (on) this.leave(member);
    apply();
    if (on) this.join(member);
  }

  /** A node with no host: tests send "from the network" with it and read what it got. */
  addRemoteNode(options: RemoteNodeOptions): RemoteNode {
    const node = new RemoteNode(this, options);
    this.join(node);
    return node;
  }
}

export interface RemoteNodeOptions {
  /** Default: the CRC-32 of its public key, as firmware 2.8 numbers a node. */
  num?: number;
  /** User.public_key (32 bytes); default made from `seed` or the number, and carried in its
   *  User when given, when the number comes from it, or after upgrade(). */
  public_key?: Uint8Array;
  /** What the default key is made from (identity.ts keysFromSeed). */
  seed?: string;
  long_name?: string;
  short_name?: string;
  /** mesh.proto HardwareModel; default 0 (UNSET). */
  hw_model?: number;
  /** Answer direct want_ack packets with this error instead of NONE; 'silent' answers none. */
  refuseAcks?: RoutingErrorName | 'silent' | null;
}

export interface RemoteSendOptions {
  wantAck?: boolean;
  /** Channel index (default 0, the primary). */
  channel?: number;
  hopLimit?: number;
  /** Default: a fresh id from the mesh. */
  id?: number;
}

/** A virtual node on the mesh. Events: 'received' (MeshPacket), 'ack' (MeshPacket: the
 *  ROUTING_APP answer to one of its want_ack packets). */
export class RemoteNode extends EventEmitter implements MeshMember {
  #num: number;
  user: User;
  readonly publicKey: Uint8Array;
  /** Packets to this node or to everyone, oldest first. */
  readonly received: MeshPacket[] = [];
  /** ROUTING_APP answers to its own want_ack packets. */
  readonly acks: MeshPacket[] = [];
  refuseAcks: RoutingErrorName | 'silent' | null;
  readonly #mesh: MeshtasticMesh;

  constructor(mesh: MeshtasticMesh, options: RemoteNodeOptions) {
    super();
    const publicKey = options.public_key ?? keysFromSeed(options.seed ?? `remote ${options.num ?? ''}`).publicKey;
    const num = options.num ?? nodeNumFromKey(publicKey);
    if (!Number.isInteger(num) || num <= 0 || num >= BROADCAST) throw new RangeError(`a remote node number is 1..0xfffffffe, got ${num}`);
    this.#mesh = mesh;
    this.#num = num;
    this.publicKey = publicKey;
    const id = formatNodeId(num);
    this.user = {
      id,
      long_name: options.long_name ?? `Meshtastic ${id.slice(-4)}`,
      short_name: options.short_name ?? id.slice(-4),
      hw_model: options.hw_model ?? 0,
      role: DEVICE_ROLE.CLIENT,
      ...(options.public_key || options.seed !== undefined || options.num === undefined ? { public_key: publicKey } : {}),
    };
    this.refuseAcks = options.refuseAcks ?? null;
  }

  get num(): number {
    return this.#num;
  }

  /** A firmware upgrade to 2.8 on demand: the node takes the number its key's CRC-32 gives,
   *  keeps its key and names, and announces itself. Returns the number. */
  upgrade(): number {
    const num = nodeNumFromKey(this.publicKey);
    if (num === this.#num) return num;
    this.#mesh.renumber(this, () => {
      this.#num = num;
      this.user = { ...this.user, id: formatNodeId(num), public_key: this.publicKey };
    });
    this.#mesh.announce(this);
    return num;
  }

  nodeInfo(): NodeInfo {
    return { num: this.num, user: { ...this.user }, last_heard: Math.floor(this.#mesh.clock.now() / 1000), snr: 6.25 };
  }

  hear(packet: MeshPacket): void {
    if (packet.to !== BROADCAST && packet.to !== this.num) return;
    this.received.push(packet);
    this.emit('received', packet);
  }

  ackReason(): number | null {
    if (this.refuseAcks === 'silent') return null;
    return this.refuseAcks === null ? ROUTING_ERROR.NONE : ROUTING_ERROR[this.refuseAcks];
  }

  /** Sends a text (TEXT_MESSAGE_APP, UTF-8) to a node number or BROADCAST; returns the packet. */
  sendText(to: number, text: string, options: RemoteSendOptions = {}): MeshPacket {
    return this.send(to, { portnum: PORT_NUM.TEXT_MESSAGE_APP, payload: new TextEncoder().encode(text) }, options);
  }

  /** Sends any Data; returns the packet as transmitted. */
  send(to: number, decoded: NonNullable<MeshPacket['decoded']>, options: RemoteSendOptions = {}): MeshPacket {
    const hop = options.hopLimit ?? DEFAULT_HOP_LIMIT;
    const packet: MeshPacket = {
      from: this.num,
      to,
      channel: options.channel ?? 0,
      decoded,
      id: options.id ?? this.#mesh.nextPacketId(),
      hop_limit: hop,
      hop_start: hop,
      want_ack: options.wantAck === true,
    };
    this.#mesh.transmit(this, packet, {
      ackDelayMs: this.#mesh.defaultAckDelayMs,
      retransmitTimeoutMs: this.#mesh.defaultRetransmitTimeoutMs,
      refuseAcks: null,
      deliver: (routing) => {
        this.acks.push(routing);
        this.emit('ack', routing);
      },
    });
    return packet;
  }

  /** Leaves the mesh: packets to it then end in MAX_RETRANSMIT. */
  remove(): void {
    this.#mesh.leave(this);
  }
}
