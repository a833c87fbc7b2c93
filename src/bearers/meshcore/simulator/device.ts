import { EventEmitter } from 'node:events';
import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../../../lib/clock.ts';
import {
  ADV_TYPE, type CmdName, type Command, type Contact, decodeCommand, encodeFrame, encodeRadioMessage, ERR_CODE, FIRMWARE_VER_CODE,
  FrameDecoder, hex, MAX_FRAME_SIZE, NAME_FIELD_SIZE, MAX_PATH_SIZE, MAX_TEXT_LEN, OUT_PATH_UNKNOWN, PUB_KEY_PREFIX_SIZE, type RadioMessage, sameBytes,
  TXT_TYPE, utf8, V3_MESSAGES_FROM_VERSION, DATA_TYPE, MAX_CHANNEL_DATA_LENGTH, MAX_GROUP_DATA_LENGTH, pathBytes, type FloodScope,
} from '../codec/index.ts';
import { SimFloodScope } from './scope.ts';
import { type Advert, type ChannelData, type ChannelText, DEFAULT_SITE, type DirectText, type MeshCoreMember, MeshCoreMesh } from './mesh.ts';
import { cutText, estimateAirtimeMs, floodTimeoutMs, directTimeoutMs, PUBLIC_CHANNEL, type SimChannel } from './state.ts';

// A MeshCore companion radio as its host sees it: the firmware side of the companion protocol
// (docs/protocols/meshcore.md 6.3-6.6), without a radio. Transport-free: a transport
// (serve.ts: TCP or a pty; link.ts: in-process) feeds host bytes to fromHost() and writes what
// the device sends. Behaviour follows examples/companion_radio/MyMesh.cpp: one answer per
// command, in order; received messages wait in an offline queue of 16 (the oldest channel
// message makes room, else the new one is lost) until SYNC_NEXT_MESSAGE takes them, with a
// MSG_WAITING push when a host is attached; the message format is chosen when the message is
// queued, from the version of the last DEVICE_QUERY, which outlives the connection; direct
// texts are answered with SENT and confirmed by SEND_CONFIRMED when the destination's ack
// matches the 8-entry expected-ack table. Its flood scope (scope.ts) is kept as the firmware
// version it plays (`firmwareVerCode`) keeps it, and its floods carry it (docs 6.12).

/** MyMesh.h: EXPECTED_ACK_TABLE_SIZE and OFFLINE_QUEUE_SIZE. */
const EXPECTED_ACK_TABLE_SIZE = 8;
export const OFFLINE_QUEUE_SIZE = 16;

export interface MeshCoreFaults {
  /** Host frames are ignored: nothing is answered (the air still works). */
  silent: boolean;
  /** These commands are taken but never answered ("a command never answered"). */
  neverAnswer: CmdName[];
  /** The next this many acks on their way to this node are lost. */
  lostAcks: number;
}

export interface MeshCoreDeviceOptions {
  /** The advert name; also what the default public key is derived from. */
  name?: string;
  /** 32 bytes; default the SHA-256 of the name (stable across runs; not a real Ed25519 key). */
  publicKey?: Uint8Array;
  mesh?: MeshCoreMesh;
  clock?: Clock;
  /** The radio's clock at start, seconds (default the clock's time). */
  rtcTime?: number;
  firmwareVersion?: string;
  /** FIRMWARE_VER_CODE it reports and behaves as (default 13): which flood-scope commands it
   *  has (docs 6.12). */
  firmwareVerCode?: number;
  /** The default flood scope in its preferences at start (v11+; the firmware's
   *  DEFAULT_FLOOD_SCOPE_NAME build flag, or one set before). */
  defaultFloodScope?: FloodScope;
  /** Its site on the simulated mesh (mesh.ts); default DEFAULT_SITE. */
  site?: string;
  model?: string;
  maxContacts?: number;
  /** MAX_GROUP_CHANNELS: 1, 8 or 40 depending on the board (docs 6.3). */
  maxChannels?: number;
  /** Channel slots from 0; default slot 0 is the public channel, the rest empty. */
  channels?: SimChannel[];
  /** Adverts of unknown nodes are pushed as NEW_ADVERT and not added (manual-add mode). */
  manualAddContacts?: boolean;
  faults?: Partial<MeshCoreFaults>;
}

export interface MeshCoreDeviceCounters {
  framesFromHost: number;
  malformed: number;
  unknownCommands: number;
  unanswered: number;
  ignoredWhileSilent: number;
  commands: Record<string, number>;
  directSent: number;
  channelSent: number;
  directReceived: number;
  channelReceived: number;
  droppedUnknownSender: number;
  queueDropped: number;
  confirmed: number;
  acksLost: number;
  unmatchedAcks: number;
}

interface ExpectedAck {
  ack: number;
  sentAt: number;
}

/** The first 4 bytes of SHA-256(timestamp, flags, text, sender key), read little-endian: the
 *  ack code both ends compute (BaseChatMesh composeMsgPacket / onPeerDataRecv; docs 6.5). */
export function ackCode(timestamp: number, flags: number, text: Uint8Array, senderKey: Uint8Array): number {
  const head = new Uint8Array(5);
  new DataView(head.buffer).setUint32(0, timestamp >>> 0, true);
  head[4] = flags;
  const digest = createHash('sha256').update(head).update(text).update(senderKey).digest();
  return digest.readUInt32LE(0);
}

export class MeshCoreDevice extends EventEmitter implements MeshCoreMember {
  readonly name: string;
  readonly publicKey: Uint8Array;
  readonly mesh: MeshCoreMesh;
  readonly faults: MeshCoreFaults;
  readonly counters: MeshCoreDeviceCounters = {
    framesFromHost: 0, malformed: 0, unknownCommands: 0, unanswered: 0, ignoredWhileSilent: 0, commands: {}, directSent: 0, channelSent: 0,
    directReceived: 0, channelReceived: 0, droppedUnknownSender: 0, queueDropped: 0, confirmed: 0, acksLost: 0, unmatchedAcks: 0,
  };
  readonly channels: SimChannel[];
  readonly site: string;
  /** Its flood scope (simulator/scope.ts): the default, this run's scope, unscoped. */
  readonly scope: SimFloodScope;
  readonly #clock: Clock;
  readonly #options: { firmwareVersion: string; model: string; maxContacts: number; maxChannels: number; manualAddContacts: boolean };
  readonly #decoder = new FrameDecoder('to-radio');
  readonly #contacts = new Map<string, Contact>();
  readonly #queue: RadioMessage[] = [];
  readonly #expectedAcks: (ExpectedAck | null)[] = Array(EXPECTED_ACK_TABLE_SIZE).fill(null);
  #nextAck = 0;
  #host: ((bytes: Uint8Array) => void) | null = null;
  /** Seconds added to the clock's time to make the radio's clock. */
  #rtcOffset: number;
  /** The protocol version of the last DEVICE_QUERY (0 before any): kept across connections. */
  #appTargetVersion = 0;

  constructor(options: MeshCoreDeviceOptions = {}) {
    super();
    // The firmware keeps 31 bytes of name (a 32-byte field with its NUL).
    this.name = cutText(options.name ?? 'meshcore-sim', NAME_FIELD_SIZE - 1);
    this.publicKey = options.publicKey?.slice() ?? new Uint8Array(createHash('sha256').update(`meshcore:${this.name}`).digest());
    this.#clock = options.clock ?? options.mesh?.clock ?? systemClock;
    this.mesh = options.mesh ?? new MeshCoreMesh({ clock: this.#clock });
    this.#options = {
      firmwareVersion: options.firmwareVersion ?? 'v1.12.0-sim',
      model: options.model ?? 'fieldbridge simulator',
      maxContacts: options.maxContacts ?? 100,
      maxChannels: options.maxChannels ?? 8,
      manualAddContacts: options.manualAddContacts ?? false,
    };
    this.faults = { silent: false, neverAnswer: [], lostAcks: 0, ...options.faults };
    this.channels = Array.from({ length: this.#options.maxChannels }, (_, i) => {
      const c = options.channels ? options.channels[i] : i === 0 ? PUBLIC_CHANNEL : undefined;
      return c ? { name: c.name, secret: c.secret.slice() } : { name: '', secret: new Uint8Array(16) };
    });
    this.site = options.site ?? DEFAULT_SITE;
    this.scope = new SimFloodScope(options.firmwareVerCode ?? FIRMWARE_VER_CODE, options.defaultFloodScope);
    this.#rtcOffset = options.rtcTime === undefined ? 0 : options.rtcTime - Math.floor(this.#clock.now() / 1000);
    this.powerOn();
  }

  // ---- what tests and transports see ----------------------------------------------------

  get hostAttached(): boolean {
    return this.#host !== null;
  }

  get appTargetVersion(): number {
    return this.#appTargetVersion;
  }

  /** The radio's clock, seconds. */
  get time(): number {
    return Math.floor(this.#clock.now() / 1000) + this.#rtcOffset;
  }

  get contacts(): Contact[] {
    return [...this.#contacts.values()].map((c) => ({ ...c }));
  }

  contact(publicKeyOrPrefix: Uint8Array): Contact | undefined {
    for (const c of this.#contacts.values()) if (sameBytes(c.publicKey.subarray(0, publicKeyOrPrefix.length), publicKeyOrPrefix)) return c;
    return undefined;
  }

  /** Messages waiting for SYNC_NEXT_MESSAGE. */
  get waiting(): number {
    return this.#queue.length;
  }

  attachHost(write: (bytes: Uint8Array) => void): void {
    this.#host = write;
    this.#decoder.reset();
  }

  detachHost(): void {
    this.#host = null;
    this.#decoder.reset();
  }

  fromHost(chunk: Uint8Array): void {
    if (this.faults.silent) {
      this.counters.ignoredWhileSilent++;
      return;
    }
    for (const event of this.#decoder.push(chunk)) {
      if (event.type !== 'frame') continue; // oversize and empty headers are counted by the decoder
      this.counters.framesFromHost++;
      this.#command(decodeCommand(event.body));
    }
  }

  /** Fault: the link goes away (transports act on the 'drop-link' event). */
  dropLink(): void {
    this.emit('drop-link');
  }

  /** Fault: bytes that are no frame, and a '>' header announcing more than MAX_FRAME_SIZE.
   *  Never a header with a valid length, which would swallow the next real frame. */
  sendGarbage(bytes?: Uint8Array): void {
    if (!this.#host) return;
    const noise = Array.from({ length: 40 }, (_, i) => (i * 73 + 11) & 0xff).map((b) => (b === 0x3e ? 0x3f : b));
    this.#host(bytes ?? Uint8Array.from([...noise, 0x3e, 0xff, 0x7f, ...noise.slice(0, 8)]));
  }

  /** Fault: the next `n` acks on their way to this node are lost. */
  loseAcks(n = 1): void {
    this.faults.lostAcks += n;
  }

  /** Sends an advert now (as CMD_SEND_SELF_ADVERT does). */
  advertise(): void {
    this.mesh.advertise(this);
  }

  powerOn(): void {
    this.mesh.join(this);
  }

  /** Off the mesh; contacts, channels and waiting messages are kept. */
  powerOff(): void {
    this.mesh.leave(this);
  }

  close(): void {
    this.detachHost();
    this.powerOff();
  }

  // ---- MeshCoreMember -----------------------------------------------------------------------

  floodScope(): Uint8Array | null {
    return this.scope.key;
  }

  advert(): Advert {
    return { publicKey: this.publicKey, name: this.name, type: ADV_TYPE.CHAT, timestamp: this.time, latitude: 0, longitude: 0 };
  }

  hearAdvert(a: Advert): void {
    const key = hex(a.publicKey);
    const known = this.#contacts.get(key);
    if (!known && (this.#options.manualAddContacts || this.#contacts.size >= this.#options.maxContacts)) {
      // BaseChatMesh onAdvertRecv: not added, the host is told with the whole contact.
      this.#send({ type: 'NEW_ADVERT', contact: this.#contactOf(a) });
      return;
    }
    const contact = known ?? this.#contactOf(a);
    Object.assign(contact, { name: a.name, type: a.type, lastAdvert: a.timestamp, latitude: a.latitude, longitude: a.longitude, lastmod: this.time });
    this.#contacts.set(key, contact);
    this.#send({ type: 'ADVERT', publicKey: a.publicKey });
  }

  hearDirect(t: DirectText, snr: number, hops = 0): number | null {
    const from = this.#contacts.get(hex(t.from));
    if (!from) {
      this.counters.droppedUnknownSender++; // no shared secret: the firmware cannot decrypt it
      return null;
    }
    this.counters.directReceived++;
    from.lastmod = this.time;
    const fields = { pubKeyPrefix: t.from.slice(0, PUB_KEY_PREFIX_SIZE), pathLen: t.flood ? hops : 0xff, txtType: t.txtType, timestamp: t.timestamp };
    const room = MAX_FRAME_SIZE - (this.#v3 ? 16 : 13);
    const text = cutText(t.text, room);
    this.#enqueue(this.#v3 ? { type: 'CONTACT_MSG_RECV_V3', snr, ...fields, text } : { type: 'CONTACT_MSG_RECV', ...fields, text });
    this.emit('received', { from: from.name, text: t.text });
    if (t.txtType !== TXT_TYPE.PLAIN) return null; // CLI data is not acknowledged
    return ackCode(t.timestamp, (t.txtType << 2) | (t.attempt & 3), utf8(t.text), t.from);
  }

  hearChannel(t: ChannelText, snr: number, hops = 0): void {
    const index = this.channels.findIndex((c) => !isEmpty(c) && sameBytes(c.secret, t.secret));
    if (index < 0) return;
    this.counters.channelReceived++;
    const fields = { channelIndex: index, pathLen: hops, txtType: TXT_TYPE.PLAIN, timestamp: t.timestamp };
    const text = cutText(t.text, MAX_FRAME_SIZE - (this.#v3 ? 11 : 8));
    this.#enqueue(this.#v3 ? { type: 'CHANNEL_MSG_RECV_V3', snr, ...fields, text } : { type: 'CHANNEL_MSG_RECV', ...fields, text });
    this.emit('received-channel', { channel: index, text: t.text });
  }

  hearChannelData(d: ChannelData, snr: number, hops = 0): void {
    const index = this.channels.findIndex((c) => !isEmpty(c) && sameBytes(c.secret, d.secret));
    if (index < 0) return;
    this.counters.channelReceived++;
    // MyMesh.cpp onChannelDataRecv: path length FF when it came by a direct route.
    this.#enqueue({ type: 'CHANNEL_DATA_RECV', snr, channelIndex: index, pathLen: d.flood ? hops : 0xff, dataType: d.dataType, payload: d.payload.slice() });
    this.emit('received-channel-data', { channel: index, bytes: d.payload.length });
  }

  hearAck(code: number, from: Uint8Array, pathReturned: boolean): void {
    const contact = this.#contacts.get(hex(from));
    if (pathReturned && contact) {
      // The path came back with the ack (createPathReturn): the next text goes direct.
      contact.outPathLen = 0;
      contact.outPath = new Uint8Array(MAX_PATH_SIZE);
      contact.lastmod = this.time;
      this.#send({ type: 'PATH_UPDATED', publicKey: contact.publicKey });
    }
    const i = this.#expectedAcks.findIndex((e) => e !== null && e.ack === code);
    if (i < 0) {
      this.counters.unmatchedAcks++; // the same ack can come twice (MyMesh.cpp processAck)
      return;
    }
    const entry = this.#expectedAcks[i]!;
    this.#expectedAcks[i] = null;
    this.counters.confirmed++;
    this.#send({ type: 'SEND_CONFIRMED', ackCode: code, roundTripMs: Math.max(0, this.#clock.now() - entry.sentAt) });
    this.emit('confirmed', code);
  }

  // ---- host commands ------------------------------------------------------------------------

  get #v3(): boolean {
    return this.#appTargetVersion >= V3_MESSAGES_FROM_VERSION;
  }

  #send(m: RadioMessage): void {
    this.#host?.(encodeFrame('from-radio', encodeRadioMessage(m)));
  }

  #enqueue(m: RadioMessage): void {
    if (this.#queue.length >= OFFLINE_QUEUE_SIZE) {
      // MyMesh.cpp addToOfflineQueue: the oldest channel message makes room; without one the
      // new message is lost.
      const channel = this.#queue.findIndex((q) => q.type === 'CHANNEL_MSG_RECV' || q.type === 'CHANNEL_MSG_RECV_V3' || q.type === 'CHANNEL_DATA_RECV');
      if (channel < 0) {
        this.counters.queueDropped++;
        return;
      }
      this.#queue.splice(channel, 1);
      this.counters.queueDropped++;
    }
    this.#queue.push(m);
    this.#send({ type: 'MSG_WAITING' });
  }

  #contactOf(a: Advert): Contact {
    return {
      publicKey: a.publicKey.slice(), type: a.type, flags: 0, outPathLen: OUT_PATH_UNKNOWN, outPath: new Uint8Array(MAX_PATH_SIZE), name: a.name,
      lastAdvert: a.timestamp, latitude: a.latitude, longitude: a.longitude, lastmod: this.time,
    };
  }

  #command(c: Command): void {
    this.counters.commands[c.type] = (this.counters.commands[c.type] ?? 0) + 1;
    this.emit('host-command', c);
    if (c.type === 'unknown' || c.type === 'malformed') {
      if (c.type === 'unknown') this.counters.unknownCommands++;
      else this.counters.malformed++;
      // handleCmdFrame's last branch: anything it does not take is "unsupported".
      return this.#send({ type: 'ERR', code: ERR_CODE.UNSUPPORTED_CMD });
    }
    if (this.faults.neverAnswer.includes(c.type)) {
      this.counters.unanswered++;
      return;
    }
    const scoped = this.scope.command(c);
    if (scoped) {
      if (scoped.type === 'OK') this.emit('flood-scope', { default: this.scope.default, session: this.scope.session, unscoped: this.scope.unscoped });
      return this.#send(scoped);
    }
    switch (c.type) {
      case 'APP_START':
        return this.#send({
          type: 'SELF_INFO', advType: ADV_TYPE.CHAT, txPower: 22, maxTxPower: 22, publicKey: this.publicKey, latitude: 0, longitude: 0, multiAcks: 0,
          advertLocPolicy: 0, telemetryModes: 0, manualAddContacts: this.#options.manualAddContacts ? 1 : 0, radioFreq: 869_525, radioBw: 250_000,
          radioSf: 11, radioCr: 5, name: this.name,
        });
      case 'DEVICE_QUERY':
        this.#appTargetVersion = c.appTargetVersion;
        return this.#send({
          type: 'DEVICE_INFO', firmwareVersion: this.scope.version, maxContacts: this.#options.maxContacts, maxChannels: this.#options.maxChannels,
          blePin: 0, buildDate: '24 Nov 2026', model: this.#options.model, version: this.#options.firmwareVersion, clientRepeat: 0, pathHashMode: 0,
        });
      case 'GET_DEVICE_TIME':
        return this.#send({ type: 'CURR_TIME', time: this.time });
      case 'SET_DEVICE_TIME':
        // MyMesh.cpp: the radio's clock never goes back.
        if (c.time < this.time) return this.#send({ type: 'ERR', code: ERR_CODE.ILLEGAL_ARG });
        this.#rtcOffset += c.time - this.time;
        return this.#send({ type: 'OK' });
      case 'GET_CONTACTS':
        return this.#getContacts(c.since ?? 0);
      case 'GET_CHANNEL': {
        const ch = this.channels[c.index];
        if (!ch) return this.#send({ type: 'ERR', code: ERR_CODE.NOT_FOUND });
        return this.#send({ type: 'CHANNEL_INFO', index: c.index, name: ch.name, secret: ch.secret });
      }
      case 'SEND_TXT_MSG':
        return this.#sendText(c);
      case 'SEND_CHANNEL_TXT_MSG':
        return this.#sendChannel(c);
      case 'SYNC_NEXT_MESSAGE':
        return this.#send(this.#queue.shift() ?? { type: 'NO_MORE_MESSAGES' });
      case 'RESET_PATH': {
        const contact = this.#contacts.get(hex(c.publicKey));
        if (!contact) return this.#send({ type: 'ERR', code: ERR_CODE.NOT_FOUND });
        contact.outPathLen = OUT_PATH_UNKNOWN;
        return this.#send({ type: 'OK' });
      }
      case 'SEND_CHANNEL_DATA':
        return this.#sendChannelData(c);
      case 'SEND_SELF_ADVERT':
        this.mesh.advertise(this);
        return this.#send({ type: 'OK' });
    }
  }

  #getContacts(since: number): void {
    const all = [...this.#contacts.values()];
    this.#send({ type: 'CONTACTS_START', count: all.length }); // the total, not the filtered count
    let mostRecent = 0;
    for (const contact of all) {
      if (contact.lastmod <= since) continue;
      this.#send({ type: 'CONTACT', contact });
      mostRecent = Math.max(mostRecent, contact.lastmod);
    }
    this.#send({ type: 'END_OF_CONTACTS', mostRecentLastmod: mostRecent });
  }

  #sendText(c: Extract<Command, { type: 'SEND_TXT_MSG' }>): void {
    const contact = this.contact(c.pubKeyPrefix);
    if (!contact) return this.#send({ type: 'ERR', code: ERR_CODE.NOT_FOUND });
    if (c.txtType !== TXT_TYPE.PLAIN && c.txtType !== TXT_TYPE.CLI_DATA) return this.#send({ type: 'ERR', code: ERR_CODE.UNSUPPORTED_CMD });
    const text = utf8(c.text);
    // composeMsgPacket: longer texts (and, from attempt 4, two bytes less) cannot be sent; the
    // host sees "table full" (docs 6.5).
    if (text.length > MAX_TEXT_LEN || (c.attempt > 3 && text.length > MAX_TEXT_LEN - 2)) {
      return this.#send({ type: 'ERR', code: ERR_CODE.TABLE_FULL });
    }
    const flood = contact.outPathLen === OUT_PATH_UNKNOWN;
    const airtime = estimateAirtimeMs(text.length);
    const suggestedTimeoutMs = flood ? floodTimeoutMs(airtime) : directTimeoutMs(airtime, contact.outPathLen);
    let expectedAck = 0;
    if (c.txtType === TXT_TYPE.PLAIN) {
      expectedAck = ackCode(c.timestamp, c.attempt & 3, text, this.publicKey);
      this.#expectedAcks[this.#nextAck] = { ack: expectedAck, sentAt: this.#clock.now() };
      this.#nextAck = (this.#nextAck + 1) % EXPECTED_ACK_TABLE_SIZE;
    }
    this.counters.directSent++;
    this.#send({ type: 'SENT', flood, expectedAck, suggestedTimeoutMs });
    this.emit('sent', { to: contact.name, text: c.text, expectedAck, flood });
    this.mesh.sendDirect(this, contact.publicKey, { from: this.publicKey, timestamp: c.timestamp, attempt: c.attempt, txtType: c.txtType, text: c.text, flood, scope: this.floodScope() }, () => {
      if (this.faults.lostAcks <= 0) return false;
      this.faults.lostAcks--;
      this.counters.acksLost++;
      return true;
    });
  }

  #sendChannel(c: Extract<Command, { type: 'SEND_CHANNEL_TXT_MSG' }>): void {
    if (c.txtType !== TXT_TYPE.PLAIN) return this.#send({ type: 'ERR', code: ERR_CODE.UNSUPPORTED_CMD });
    const channel = this.channels[c.channelIndex];
    if (!channel || isEmpty(channel)) return this.#send({ type: 'ERR', code: ERR_CODE.NOT_FOUND });
    // sendGroupMessage puts "<name>: " before the text and cuts the whole to MAX_TEXT_LEN.
    const text = cutText(`${this.name}: ${c.text}`, MAX_TEXT_LEN);
    this.counters.channelSent++;
    this.mesh.sendChannel(this, { from: this.publicKey, secret: channel.secret, timestamp: c.timestamp, text, scope: this.floodScope() });
    this.emit('sent-channel', { channel: c.channelIndex, text: c.text });
    this.#send({ type: 'OK' });
  }

  #sendChannelData(c: Extract<Command, { type: 'SEND_CHANNEL_DATA' }>): void {
    // MyMesh.cpp CMD_SEND_CHANNEL_DATA, in its order of checks (docs 6.6).
    if (c.pathLen !== OUT_PATH_UNKNOWN && (c.pathLen >> 6 === 3 || pathBytes(c.pathLen) > MAX_PATH_SIZE)) {
      return this.#send({ type: 'ERR', code: ERR_CODE.ILLEGAL_ARG });
    }
    const channel = this.channels[c.channelIndex];
    if (!channel || isEmpty(channel)) return this.#send({ type: 'ERR', code: ERR_CODE.NOT_FOUND });
    if (c.dataType === DATA_TYPE.RESERVED || c.payload.length > MAX_CHANNEL_DATA_LENGTH) return this.#send({ type: 'ERR', code: ERR_CODE.ILLEGAL_ARG });
    if (c.payload.length > MAX_GROUP_DATA_LENGTH) return this.#send({ type: 'ERR', code: ERR_CODE.TABLE_FULL });
    this.counters.channelSent++;
    this.mesh.sendChannelData(this, { secret: channel.secret, dataType: c.dataType, payload: c.payload.slice(), flood: c.pathLen === OUT_PATH_UNKNOWN, scope: this.floodScope() });
    this.emit('sent-channel-data', { channel: c.channelIndex, bytes: c.payload.length });
    this.#send({ type: 'OK' });
  }
}

const isEmpty = (c: SimChannel) => c.name === '' && c.secret.every((b) => b === 0);
