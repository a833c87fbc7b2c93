import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { systemClock, type Clock, type TimerHandle } from '../../../lib/clock.ts';
import {
  BITFIELD, BROADCAST, CHANNEL_ROLE, DATA_PAYLOAD_LEN, decodeToRadio, type DeviceMetadata, encodeFrame, encodeFromRadio, formatNodeId, type FromRadio,
  type LoRaConfig, type MeshPacket, type NodeInfo, PORT_NUM, PRIORITY, type QueueStatus, ROUTING_ERROR, StreamDecoder, type ToRadio,
  toRadioVariant, type ToRadioVariant,
} from '../codec/messages.ts';
import { type AdminHost, handleAdmin } from './admin.ts';
import { keysFromSeed, type NodeKeys, nodeNumFromKey } from './identity.ts';
import {
  ERRNO_DISABLED, HW_MODEL_PORTDUINO, STREAM_GARBAGE, type MeshtasticDeviceCounters, type MeshtasticDeviceOptions, type MeshtasticFaults, NONCE_NO_NODES, NONCE_ONLY_NODES,
  RECENT_IDS,
} from './device-options.ts';
import { clampUtf8, type FirmwareProfile, firmwareProfile } from './firmware.ts';
import { SimNodeDb } from './node-db.ts';
import { regionPresetMap } from './presets.ts';
import { DEFAULT_HOP_LIMIT, HOP_MAX, type MeshMember, MeshtasticMesh, type RoutingErrorName } from './mesh.ts';
import {
  CHANNEL_SLOTS, type DeviceState, defaultState, HANDSHAKE_CONFIG_KEYS, loraOf, MODULE_KEYS, nodeNumFromName,
} from './state.ts';

// A Meshtastic radio as its host sees it: the firmware side of the stream API
// (docs/protocols/meshtastic.md 2.1-2.7), without a radio. Transport-free: a transport
// (serve.ts: TCP or a pty; link.ts: in-process) feeds host bytes to fromHost() and writes
// what the device sends. Behaviour follows the firmware (MF: StreamAPI, PhoneAPI,
// ReliableRouter, AdminModule): silent until the host's first valid frame; want_config_id
// answered with the node's state and config_complete_id; every ToRadio packet answered with
// a QueueStatus; packets for the host held until the handshake is complete; admin
// messages to the own node applied, with reboots where the firmware reboots.

export * from './device-options.ts';

export class MeshtasticDevice extends EventEmitter implements MeshMember {
  readonly name: string;
  readonly keys: NodeKeys;
  #num: number;
  readonly mesh: MeshtasticMesh;
  readonly faults: MeshtasticFaults;
  /** The firmware line it behaves as; tests may change its fields while it runs. */
  readonly firmware: FirmwareProfile;
  /** What it knows of other nodes, kept across reboots (firmware NodeDB). */
  readonly nodeDb = new SimNodeDb();
  readonly counters: MeshtasticDeviceCounters = {
    framesFromHost: 0, badFrames: 0, unknownToRadio: 0, handshakes: 0, heartbeats: 0, disconnects: 0, packetsFromHost: 0, duplicateIds: 0,
    tooLarge: 0, txDisabled: 0, transmitted: 0, received: 0, droppedNoChannel: 0, toPhoneDropped: 0, ignoredWhileSilent: 0, reboots: 0,
    admin: {}, adminIgnored: 0,
  };

  readonly #clock: Clock;
  /** See MeshtasticDeviceOptions.hasTime; tests may set it while running. */
  hasTime: boolean;
  readonly #options: { firmwareVersion: string; hwModel: number; queueMaxlen: number; retransmitTimeoutMs: number; rebootDelayMs: number; toPhoneQueue: number };
  readonly #decoder = new StreamDecoder();
  readonly #state: DeviceState;
  #host: ((bytes: Uint8Array) => void) | null = null;
  /** The host's first valid frame has come since attach or reboot: the device may write. */
  #connected = false;
  /** config_complete_id was sent: live packets flow to the host. */
  #configured = false;
  readonly #toPhone: MeshPacket[] = [];
  #recentIds: number[] = [];
  #lastReceived: MeshPacket | null = null;
  #fromRadioId = 0;
  #editing = false;
  /** Bumped by every reboot and power-off, so late timers of an earlier boot do nothing. */
  #boot = 0;
  #bootedAt: number;
  #rebootTimer: TimerHandle | null = null;
  #sessionPasskey: Uint8Array = randomBytes(8);
  #onMesh = false;

  constructor(options: MeshtasticDeviceOptions = {}) {
    super();
    this.name = options.name ?? 'meshtastic-sim';
    this.keys = options.keys ?? keysFromSeed(this.name);
    this.#clock = options.clock ?? options.mesh?.clock ?? systemClock;
    this.hasTime = options.hasTime ?? true;
    this.mesh = options.mesh ?? new MeshtasticMesh({ clock: this.#clock });
    this.firmware = firmwareProfile(options.firmware);
    const byKey = options.numberFromKey ?? this.firmware.numbersByKey;
    this.#num = options.num ?? (byKey ? nodeNumFromKey(this.keys.publicKey) : nodeNumFromName(this.name));
    this.#options = {
      firmwareVersion: options.firmwareVersion ?? this.firmware.version,
      hwModel: options.hwModel ?? HW_MODEL_PORTDUINO,
      queueMaxlen: options.queueMaxlen ?? 16,
      retransmitTimeoutMs: options.retransmitTimeoutMs ?? this.mesh.defaultRetransmitTimeoutMs,
      rebootDelayMs: options.rebootDelayMs ?? 500,
      toPhoneQueue: options.toPhoneQueue ?? 32,
    };
    this.faults = { neverCompleteHandshake: false, refuseAcks: null, ackDelayMs: this.mesh.defaultAckDelayMs, silent: false, dropAutomationMark: false, ...options.faults };
    this.#state = defaultState(this.num, {
      longName: options.longName, shortName: options.shortName, hwModel: this.#options.hwModel, lora: options.lora, positionPrecision: this.firmware.positionPrecision,
    });
    if (options.keys || byKey) this.#state.owner.public_key = this.keys.publicKey;
    this.#bootedAt = this.#clock.now();
    this.powerOn();
  }

  // ---- what tests and transports see ----------------------------------------------------

  get num(): number {
    return this.#num;
  }

  /** A firmware upgrade to 2.8 on demand: back after a reboot numbered by its key's CRC-32 (key, names,
   *  settings kept; the host sees `rebooted` and a new my_node_num); its NodeInfo tells the mesh. */
  upgrade(): number {
    const num = nodeNumFromKey(this.keys.publicKey);
    if (num === this.#num) return num;
    this.mesh.renumber(this, () => {
      this.#num = num;
      this.#state.owner = { ...this.#state.owner, id: formatNodeId(num), public_key: this.keys.publicKey };
    });
    this.#reboot('firmware upgrade');
    if (this.#onMesh) this.mesh.announce(this);
    return num;
  }

  get hostAttached(): boolean {
    return this.#host !== null;
  }

  /** The host has completed a handshake in this session. */
  get configured(): boolean {
    return this.#configured;
  }

  get editing(): boolean {
    return this.#editing;
  }

  get owner() {
    return { ...this.#state.owner };
  }

  get lora(): LoRaConfig {
    return { ...loraOf(this.#state) };
  }

  get state(): Readonly<DeviceState> {
    return this.#state;
  }

  get onMesh(): boolean {
    return this.#onMesh;
  }

  /** A host connected: bytes the device sends go to write(). One host at a time. */
  attachHost(write: (bytes: Uint8Array) => void): void {
    this.#host = write;
    this.#resetSession();
  }

  detachHost(): void {
    this.#host = null;
    this.#resetSession();
  }

  /** Bytes from the host, in any chunking. */
  fromHost(chunk: Uint8Array): void {
    if (this.faults.silent) {
      this.counters.ignoredWhileSilent++;
      return;
    }
    for (const event of this.#decoder.push(chunk)) {
      if (event.type !== 'frame') continue; // text from a host is noise; oversize is counted by the decoder
      this.counters.framesFromHost++;
      const decoded = decodeToRadio(event.payload);
      if (!decoded.ok) {
        this.counters.badFrames++;
        continue;
      }
      // StreamAPI: the device writes nothing until the host's first valid frame (docs 2.1).
      this.#connected = true;
      this.emit('host-frame', decoded.value);
      const variant = toRadioVariant(decoded.value);
      const handler = variant ? (TO_RADIO[variant] as ToRadioHandler | undefined) : undefined;
      if (handler) handler(this, decoded.value);
      else this.counters.unknownToRadio++;
    }
  }

  /** Fault: the link goes away (transports act on the 'drop-link' event). */
  dropLink(): void {
    this.emit('drop-link');
  }

  /** Fault: debug text and bytes that are no frame, written between frames (docs 2.1: bytes
   *  outside frames are the device's log). Never a 94 C3 header with a valid length, which
   *  would swallow the next real frame on hardware too. */
  sendGarbage(bytes?: Uint8Array): void {
    if (!this.#host || this.faults.silent) return;
    this.#host(bytes ?? STREAM_GARBAGE);
  }

  /** Delivers the last packet heard again, same from and id (radios do this). */
  repeatLast(): boolean {
    if (!this.#lastReceived) return false;
    this.#toHost({ ...this.#lastReceived, rx_time: this.#now() });
    return true;
  }

  /** Reboots now, as after commit_edit_settings. */
  reboot(reason = 'requested'): void {
    this.#reboot(reason);
  }

  /** Switches the radio off: off the mesh, session and held packets lost, state kept. */
  powerOff(): void {
    this.#endBoot();
    if (this.#onMesh) this.mesh.leave(this);
    this.#onMesh = false;
  }

  powerOn(): void {
    if (this.#onMesh) return;
    this.mesh.join(this);
    this.#onMesh = true;
    this.#bootedAt = this.#clock.now();
  }

  close(): void {
    this.detachHost();
    this.powerOff();
  }

  // ---- MeshMember ---------------------------------------------------------------------------

  nodeInfo(): NodeInfo {
    return { num: this.num, user: { ...this.#state.owner }, last_heard: this.#now(), snr: 6.25 };
  }

  hear(packet: MeshPacket): void {
    if (this.faults.silent) {
      this.counters.ignoredWhileSilent++;
      return;
    }
    if (packet.to !== BROADCAST && packet.to !== this.num) return; // not ours; a flat mesh needs no relay
    const channel = this.#state.channels[packet.channel ?? 0];
    if (!channel || (channel.role ?? CHANNEL_ROLE.DISABLED) === CHANNEL_ROLE.DISABLED) {
      this.counters.droppedNoChannel++;
      return;
    }
    this.counters.received++;
    // The receiving board stamps the arrival with its own clock, or 0 without a valid time.
    const heard = { ...packet, rx_time: this.hasTime ? this.#now() : 0 };
    if (this.faults.dropAutomationMark && heard.decoded) heard.decoded = { ...heard.decoded, bitfield: (heard.decoded.bitfield ?? 0) & ~BITFIELD.IS_AUTOMATION };
    this.#lastReceived = heard;
    this.nodeDb.heard(heard);
    this.emit('received', heard);
    this.#toHost(heard);
  }

  ackReason(): number | null {
    return this.faults.silent ? null : ROUTING_ERROR.NONE;
  }

  // ---- host messages ----------------------------------------------------------------------

  /** Handlers call these through TO_RADIO; kept as methods so the table stays plain data. */
  readonly ops = {
    handshake: (nonce: number) => this.#handshake(nonce),
    heartbeat: () => {
      this.counters.heartbeats++;
      this.#send({ queueStatus: this.#queueStatus(0, 0) });
    },
    disconnect: () => {
      this.counters.disconnects++;
      this.#resetSession();
      this.emit('disconnect');
    },
    packet: (p: MeshPacket) => this.#packetFromHost(p),
  };

  #handshake(nonce: number): void {
    this.counters.handshakes++;
    this.#configured = false;
    this.emit('handshake', nonce);
    const s = this.#state;
    const others = this.mesh.nodeInfos(this.num);
    // PhoneAPI order (docs 2.2): my_info, own node, metadata, channels, config, modules, other
    // nodes, config_complete_id. 69421 sends node infos only (?).
    this.#send({
      my_info: {
        my_node_num: this.num,
        reboot_count: s.rebootCount,
        min_app_version: 30200,
        device_id: Uint8Array.from({ length: 16 }, (_, i) => (this.num >>> ((i % 4) * 8)) & 0xff),
        pio_env: 'native',
        nodedb_count: others.length + 1,
      },
    });
    this.#send({ node_info: this.#ownNodeInfo() });
    if (nonce !== NONCE_ONLY_NODES) {
      this.#send({ metadata: this.metadata() });
      if (this.firmware.regionPresets) this.#send({ region_presets: regionPresetMap() });
      for (let i = 0; i < CHANNEL_SLOTS; i++) this.#send({ channel: s.channels[i] });
      for (const key of HANDSHAKE_CONFIG_KEYS) this.#send({ config: s.config.get(key)! });
      for (const key of MODULE_KEYS.slice(0, this.firmware.handshakeModules)) this.#send({ moduleConfig: s.modules.get(key)! });
    }
    const nodes = this.firmware.replaysNodeDb ? this.nodeDb.thinNodeInfos(others, this.num) : others;
    if (nonce !== NONCE_NO_NODES) for (const n of nodes) this.#send({ node_info: n });
    if (this.faults.neverCompleteHandshake) return;
    this.#send({ config_complete_id: nonce });
    this.#configured = true;
    for (const p of this.#toPhone.splice(0)) this.#send({ packet: p });
    // 2.8: the node database's history follows as packets, except for the config-only nonce.
    if (this.firmware.replaysNodeDb && nonce !== NONCE_NO_NODES) {
      const replay = this.nodeDb.replay(this.num, loraOf(s).hop_limit ?? DEFAULT_HOP_LIMIT);
      for (const p of replay) this.#send({ packet: p });
      this.emit('replayed', replay.length);
    }
  }

  #packetFromHost(p: MeshPacket): void {
    this.counters.packetsFromHost++;
    const id = p.id ?? 0;
    // PhoneAPI drops a packet whose id it saw recently on this connection, with no
    // QueueStatus (docs 2.7). Id 0 is the host's business: the simulator assigns nothing.
    if (id !== 0) {
      if (this.#recentIds.includes(id)) {
        this.counters.duplicateIds++;
        return;
      }
      this.#recentIds.push(id);
      if (this.#recentIds.length > RECENT_IDS) this.#recentIds.shift();
    }
    // A payload over DATA_PAYLOAD_LEN makes the ToRadio invalid: no QueueStatus (docs 2.7).
    if ((p.decoded?.payload?.length ?? 0) > DATA_PAYLOAD_LEN) {
      this.counters.tooLarge++;
      return;
    }
    const to = p.to ?? 0;
    if (to === this.num) {
      this.#send({ queueStatus: this.#queueStatus(0, id) });
      this.#local(p);
      return;
    }
    const lora = loraOf(this.#state);
    if (!lora.tx_enabled || !lora.region) {
      // Router::send refuses while transmit is off or the region UNSET; the error comes back
      // as QueueStatus.res and no routing answer follows (?).
      this.counters.txDisabled++;
      this.#send({ queueStatus: this.#queueStatus(ERRNO_DISABLED, id) });
      return;
    }
    this.#send({ queueStatus: this.#queueStatus(0, id) });
    // hop_limit 0 reaches direct neighbours only; above 7 falls back to the default (docs 2.5).
    const given = p.hop_limit ?? 0;
    const hop = given > HOP_MAX ? (lora.hop_limit ?? DEFAULT_HOP_LIMIT) : given;
    const air: MeshPacket = { ...p, from: this.num, channel: p.channel ?? 0, hop_limit: hop, hop_start: hop };
    for (const k of ['rx_time', 'rx_snr', 'rx_rssi'] as const) delete air[k];
    this.counters.transmitted++;
    this.emit('transmitted', air);
    const boot = this.#boot;
    this.mesh.transmit(this, air, {
      ackDelayMs: this.faults.ackDelayMs,
      retransmitTimeoutMs: this.#options.retransmitTimeoutMs,
      refuseAcks: this.faults.refuseAcks === null ? null : ROUTING_ERROR[this.faults.refuseAcks],
      deliver: (routing) => {
        if (boot === this.#boot) this.#toHost(routing);
      },
    });
  }

  /** A packet to the own node: admin, or anything else (taken and forgotten). A want_ack
   *  one is acknowledged by the own node to the own node, as ReliableRouter does for a
   *  packet addressed to it. */
  #local(p: MeshPacket): void {
    if (p.want_ack) this.#toHost(this.mesh.routingPacket(this.num, this.num, p.id ?? 0, ROUTING_ERROR.NONE, false));
    if (p.decoded?.portnum === PORT_NUM.ADMIN_APP) handleAdmin(this.#adminHost, p);
  }

  readonly #adminHost: AdminHost = {
    state: () => this.#state,
    counters: this.counters,
    emit: (event, value) => this.emit(event, value),
    metadata: () => this.metadata(),
    clampLongName: (name) => clampUtf8(name, this.firmware.longNameStoredBytes),
    passkey: () => this.#sessionPasskey,
    reply: (request, payload) => {
      this.#toHost({
        from: this.num,
        to: this.num,
        id: this.mesh.nextPacketId(),
        channel: request.channel ?? 0,
        decoded: { portnum: PORT_NUM.ADMIN_APP, payload, request_id: request.id ?? 0 },
        priority: PRIORITY.RELIABLE,
        rx_time: this.#now(),
      });
    },
    editing: () => this.#editing,
    setEditing: (on) => {
      this.#editing = on;
    },
    scheduleReboot: (delayMs, reason) => this.#scheduleReboot(delayMs ?? this.#options.rebootDelayMs, reason),
    cancelReboot: () => {
      if (this.#rebootTimer) this.#clock.clearTimeout(this.#rebootTimer);
      this.#rebootTimer = null;
    },
  };

  metadata(): DeviceMetadata {
    return {
      firmware_version: this.#options.firmwareVersion,
      device_state_version: 24,
      canShutdown: true,
      hasWifi: true,
      role: this.#state.owner.role ?? 0,
      hw_model: this.#options.hwModel,
      ...(this.firmware.excludedModules ? { excluded_modules: this.firmware.excludedModules } : {}),
    };
  }

  #ownNodeInfo(): NodeInfo {
    return {
      ...this.nodeInfo(),
      snr: undefined,
      // 101 % = powered by USB, as the firmware reports it.
      device_metrics: { battery_level: 101, voltage: 5, channel_utilization: 0, air_util_tx: 0, uptime_seconds: Math.floor((this.#clock.now() - this.#bootedAt) / 1000) },
    };
  }

  #queueStatus(res: number, id: number): QueueStatus {
    return { res, free: this.#options.queueMaxlen, maxlen: this.#options.queueMaxlen, mesh_packet_id: id };
  }

  #scheduleReboot(delayMs: number, reason: string): void {
    if (this.#rebootTimer) this.#clock.clearTimeout(this.#rebootTimer);
    const boot = this.#boot;
    this.#rebootTimer = this.#clock.setTimeout(() => {
      this.#rebootTimer = null;
      if (boot === this.#boot) this.#reboot(reason);
    }, delayMs);
  }

  /** What a reboot and a power-off share: the running boot ends (its timers stale), a pending
   *  reboot is dropped, and the session, its held packets and an open settings edit are lost. */
  #endBoot(): void {
    this.#boot++;
    if (this.#rebootTimer) this.#clock.clearTimeout(this.#rebootTimer);
    this.#rebootTimer = null;
    this.#toPhone.length = 0;
    this.#editing = false;
    this.#resetSession();
  }

  /** What a reboot does to the host: a last FromRadio.rebooted, then a fresh StreamAPI that
   *  waits for a frame and a new handshake. Transports drop TCP clients on 'rebooted'. */
  #reboot(reason: string): void {
    this.counters.reboots++;
    this.#state.rebootCount++;
    this.#send({ rebooted: true });
    this.#endBoot();
    this.#sessionPasskey = randomBytes(8);
    this.#bootedAt = this.#clock.now();
    this.emit('rebooted', reason);
  }

  #resetSession(): void {
    this.#connected = false;
    this.#configured = false;
    this.#recentIds = [];
    this.#decoder.reset();
  }

  /** A packet for the host: now when a handshake is complete, else held (oldest dropped). */
  #toHost(packet: MeshPacket): void {
    if (this.#configured && this.#host) {
      this.#send({ packet });
      return;
    }
    this.#toPhone.push(packet);
    if (this.#toPhone.length > this.#options.toPhoneQueue) {
      this.#toPhone.shift();
      this.counters.toPhoneDropped++;
    }
  }

  #send(message: FromRadio): void {
    if (!this.#host || !this.#connected || this.faults.silent) return;
    this.#host(encodeFrame(encodeFromRadio({ id: ++this.#fromRadioId, ...message })));
  }

  #now(): number {
    return Math.floor(this.#clock.now() / 1000);
  }
}

type ToRadioHandler = (device: MeshtasticDevice, message: ToRadio) => void;

/** ToRadio variants the device acts on (mesh.proto ToRadio); xmodemPacket and
 *  mqttClientProxyMessage are counted in counters.unknownToRadio. */
const TO_RADIO: Partial<Record<ToRadioVariant, ToRadioHandler>> = {
  packet: (d, m) => d.ops.packet(m.packet!),
  want_config_id: (d, m) => d.ops.handshake(m.want_config_id!),
  heartbeat: (d) => d.ops.heartbeat(),
  disconnect: (d) => d.ops.disconnect(),
};
