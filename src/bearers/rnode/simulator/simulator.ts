import { EventEmitter } from 'node:events';
import { systemClock, type Clock, type TimerHandle } from '../../../lib/clock.ts';
import { encodeFrame, KISS_MAX_PAYLOAD, KissDecoder, type KissFrame } from '../../shared/codec/kiss.ts';
import { CMD, commandName, DETECT_REQ, DETECT_RESP, encodeChannelStats, readU16be, readU32be, rssiByte, snrByte, u16be, u32be } from '../protocol.ts';
import { rnodeAirtimeMs } from '../radio.ts';
import { AirtimeBins, firmwareBitrate, firmwareFrames, firmwareFrameCostMs, GUARD_THRESHOLD_BPS, reportedPercent } from '../firmware.ts';
import { AirtimeLedger } from './airtime.ts';
import type { AirReception, AirTuning, ChannelMember, RNodeChannel } from './channel.ts';
import type { EchoType } from '../verify.ts';

// An RNode as the host sees it: the device side of the KISS protocol (docs/protocols/rnode.md 1.3–1.6),
// without a radio. Transport-free: a transport (rnode-serve.ts: TCP or a pty) feeds host
// bytes to fromHost() and writes what the simulator sends. Behaviour follows the firmware
// (RF:RNode_Firmware.ino serial_callback): commands act on their payload bytes, settings are
// clamped and echoed, READY answers a query, STAT_CHTM comes about once a second and after
// each transmission, and the transmit queue is held while an airtime limit is exceeded.
// The packet queue and the airtime limits follow docs/protocols/rnode.md 1.10: a frame's bytes
// are stored while there is room, a frame that does not fit is cut and not committed (its
// stored bytes stay and lead the next packet), airtime is charged into 7.5 s bins by the
// firmware's own formula, the lock is decided on the figures of the last update, and at
// 14 kbps and below the whole queue goes out once the channel is taken. Not modelled: CSMA
// waits, and the firmware not reading the host while it transmits.

/** A field the simulator can echo wrongly (fault injection): any echoed value. */
export type EchoField = EchoType;

export interface RNodeSimFaults {
  /** Never answer a READY query (flow control must then hold every DATA frame). */
  withholdReady: boolean;
  /** Echo a value other than the one set for this field (the stored value stays right). */
  wrongEcho: EchoField | null;
  /** Answer nothing at all, as a board that is not an RNode. */
  mute: boolean;
}

export interface RNodeSimOptions {
  name?: string;
  clock?: Clock;
  channel?: RNodeChannel;
  firmware?: { major: number; minor: number };
  /** CMD_PLATFORM / CMD_MCU / CMD_BOARD answers (docs/protocols/rnode.md 1.3, docs/protocols/usb-ids.md 5); default an ESP32 board. */
  platform?: number;
  mcu?: number;
  board?: number;
  /** Highest TX power the modem takes; higher requests are clamped (SX1262: 22 dBm). */
  maxTxPowerDbm?: number;
  /** Transmit queue size (RF:Boards.h CONFIG_QUEUE_*: 200 packets / 6144 bytes on most). */
  queuePackets?: number;
  queueBytes?: number;
  statsIntervalMs?: number;
  faults?: Partial<RNodeSimFaults>;
}

/** What the host configured, as the simulated radio holds it. */
export interface RNodeSimConfig {
  frequency_hz: number;
  bandwidth_hz: number;
  sf: number;
  cr: number;
  tx_power_dbm: number;
  radio_on: boolean;
  /** Percent, as received (u16 / 100); 0 = no limit. */
  st_alock: number;
  lt_alock: number;
}

export interface RNodeSimCounters {
  framesFromHost: number;
  dataFromHost: number;
  readyQueries: number;
  detects: number;
  leaves: number;
  unknownCommands: number;
  transmitted: number;
  received: number;
  droppedQueueFull: number;
  droppedRadioOff: number;
  heldForAirtime: number;
  /** Packets committed longer than 508 bytes (an earlier cut frame's bytes leading them):
   *  taken off the queue without being sent, as the firmware does. */
  droppedTooLong: number;
}

const NOISE_FLOOR_DBM = -117;

export class RNodeSimulator extends EventEmitter implements ChannelMember {
  readonly name: string;
  readonly faults: RNodeSimFaults;
  readonly counters: RNodeSimCounters = {
    framesFromHost: 0, dataFromHost: 0, readyQueries: 0, detects: 0, leaves: 0, unknownCommands: 0,
    transmitted: 0, received: 0, droppedQueueFull: 0, droppedRadioOff: 0, heldForAirtime: 0, droppedTooLong: 0,
  };
  /** Commands the host sent, oldest first (the last 1000), for tests and the CLI's log. */
  readonly hostLog: { at: number; command: string; payload: Uint8Array }[] = [];

  readonly #clock: Clock;
  readonly #channel: RNodeChannel | undefined;
  readonly #options: Required<Omit<RNodeSimOptions, 'name' | 'clock' | 'channel' | 'faults'>>;
  readonly #decoder = new KissDecoder();
  readonly #airtime: AirtimeLedger;
  #config: RNodeSimConfig = { frequency_hz: 0, bandwidth_hz: 0, sf: 0, cr: 5, tx_power_dbm: 0, radio_on: false, st_alock: 0, lt_alock: 0 };
  #host: ((bytes: Uint8Array) => void) | null = null;
  #queue: Uint8Array[] = [];
  #queuedBytes = 0;
  /** Bytes stored for a frame that was not committed; they lead the next committed packet. */
  #orphan: Uint8Array = new Uint8Array(0);
  /** Packets left in the flush under way: the queue as it was when the channel was taken. The
   *  firmware reads nothing from the host until a flush ends and then finds its counts at zero;
   *  the simulator reads on, so it takes each sent packet off the counts as it goes, which
   *  leaves the same counts for what comes after. */
  #flush: { packets: number } | null = null;
  readonly #bins = new AirtimeBins();
  /** The airtime figures of the last update (fractions); the lock is decided on these. */
  #figures = { short: 0, long: 0 };
  #transmitting: TimerHandle | null = null;
  #statsTimer: TimerHandle | null = null;
  #lastRssi: number | null = null;
  #closed = false;

  constructor(options: RNodeSimOptions = {}) {
    super();
    this.name = options.name ?? 'rnode-sim';
    this.#clock = options.clock ?? systemClock;
    this.#channel = options.channel;
    this.#options = {
      firmware: options.firmware ?? { major: 1, minor: 86 },
      platform: options.platform ?? 0x80,
      mcu: options.mcu ?? 0x81,
      board: options.board ?? 0x35,
      maxTxPowerDbm: options.maxTxPowerDbm ?? 22,
      queuePackets: options.queuePackets ?? 200,
      queueBytes: options.queueBytes ?? 6144,
      statsIntervalMs: options.statsIntervalMs ?? 1000,
    };
    this.faults = { withholdReady: false, wrongEcho: null, mute: false, ...options.faults };
    this.#airtime = new AirtimeLedger(this.#clock);
    this.#channel?.join(this);
  }

  /** What the host configured (not what a wrong-echo fault reports). */
  get config(): Readonly<RNodeSimConfig> {
    return { ...this.#config };
  }

  get hostAttached(): boolean {
    return this.#host !== null;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** A host connected: bytes the device sends go to write(). One host at a time. */
  attachHost(write: (bytes: Uint8Array) => void): void {
    this.#host = write;
    this.#decoder.reset();
    this.#armStats();
  }

  detachHost(): void {
    this.#host = null;
    this.#decoder.reset();
    if (this.#statsTimer) this.#clock.clearTimeout(this.#statsTimer);
    this.#statsTimer = null;
  }

  /** Bytes from the host, in any chunking. */
  fromHost(chunk: Uint8Array): void {
    for (const frame of this.#decoder.push(chunk)) this.#handle(frame);
  }

  /** Fault: send bytes that are not KISS (default: random bytes with stray FENDs and FESCs). */
  sendGarbage(bytes?: Uint8Array): void {
    const junk = bytes ?? Uint8Array.from({ length: 48 }, (_, i) => (i % 7 === 3 ? 0xc0 : i % 11 === 5 ? 0xdb : (i * 73 + 11) & 0xff));
    this.#host?.(junk);
  }

  /** Sends a frame to the host as the firmware would (also used for unsolicited frames). */
  sendFrame(command: number, payload: Uint8Array = new Uint8Array(0)): void {
    if (this.faults.mute || !this.#host) return;
    this.#host(encodeFrame(command, payload));
  }

  /** Stops timers and leaves the channel. */
  close(): void {
    this.#closed = true;
    this.detachHost();
    if (this.#transmitting) this.#clock.clearTimeout(this.#transmitting);
    this.#transmitting = null;
    this.#channel?.leave(this);
  }

  // ---- ChannelMember ----------------------------------------------------------------------

  tuning(): AirTuning | null {
    const c = this.#config;
    return c.radio_on ? { frequency_hz: c.frequency_hz, bandwidth_hz: c.bandwidth_hz, sf: c.sf } : null;
  }

  hear(payload: Uint8Array | null, airtimeMs: number, reception: AirReception): void {
    this.#airtime.heard(airtimeMs);
    this.#lastRssi = reception.rssi_dbm;
    if (!payload) return;
    this.counters.received++;
    // STAT_RSSI and STAT_SNR go just before the packet (docs/protocols/rnode.md 1.3, DATA row).
    this.sendFrame(CMD.CMD_STAT_RSSI, Uint8Array.of(rssiByte(reception.rssi_dbm)));
    this.sendFrame(CMD.CMD_STAT_SNR, Uint8Array.of(snrByte(reception.snr_db)));
    this.sendFrame(CMD.CMD_DATA, payload);
    this.emit('received', payload, reception);
  }

  // ---- host commands --------------------------------------------------------------------

  #handle(frame: KissFrame): void {
    this.counters.framesFromHost++;
    this.hostLog.push({ at: this.#clock.now(), command: commandName(frame.command), payload: frame.payload });
    if (this.hostLog.length > 1000) this.hostLog.shift();
    this.emit('host-frame', frame);
    const handler = HOST_COMMANDS[frame.command] as HostHandler | undefined;
    // The firmware acts on a command only when a payload byte follows it.
    if (!handler || (frame.payload.length === 0 && frame.command !== CMD.CMD_DATA)) {
      this.counters.unknownCommands += handler ? 0 : 1;
      return;
    }
    if (this.faults.mute && frame.command !== CMD.CMD_DATA) return;
    handler(this, frame.payload);
  }

  /** Handlers call these; kept as methods so HOST_COMMANDS stays a plain table. */
  readonly ops = {
    data: (p: Uint8Array) => this.#enqueue(p),
    frequency: (p: Uint8Array) => {
      if (p.length < 4) return;
      const hz = readU32be(p);
      if (hz !== 0) this.#config.frequency_hz = hz;
      this.#echo('frequency', CMD.CMD_FREQUENCY, u32be(this.#config.frequency_hz), u32be(this.#config.frequency_hz + 5_000));
    },
    bandwidth: (p: Uint8Array) => {
      if (p.length < 4) return;
      const hz = readU32be(p);
      if (hz !== 0) this.#config.bandwidth_hz = hz;
      this.#echo('bandwidth', CMD.CMD_BANDWIDTH, u32be(this.#config.bandwidth_hz), u32be(this.#config.bandwidth_hz * 2));
    },
    txpower: (p: Uint8Array) => {
      if (p[0] !== 0xff) this.#config.tx_power_dbm = Math.min(p[0], this.#options.maxTxPowerDbm);
      this.#echo('txpower', CMD.CMD_TXPOWER, Uint8Array.of(this.#config.tx_power_dbm), Uint8Array.of(Math.max(0, this.#config.tx_power_dbm - 3)));
    },
    sf: (p: Uint8Array) => {
      if (p[0] !== 0xff) this.#config.sf = Math.max(5, Math.min(12, p[0]));
      this.#echo('sf', CMD.CMD_SF, Uint8Array.of(this.#config.sf), Uint8Array.of(this.#config.sf === 12 ? 11 : this.#config.sf + 1));
    },
    cr: (p: Uint8Array) => {
      if (p[0] !== 0xff) this.#config.cr = Math.max(5, Math.min(8, p[0]));
      this.#echo('cr', CMD.CMD_CR, Uint8Array.of(this.#config.cr), Uint8Array.of(this.#config.cr === 8 ? 7 : this.#config.cr + 1));
    },
    radioState: (p: Uint8Array) => {
      if (p[0] === 0x01) this.#radioOn();
      else if (p[0] === 0x00) this.#config.radio_on = false;
      const on = this.#config.radio_on ? 1 : 0;
      this.#echo('radio_state', CMD.CMD_RADIO_STATE, Uint8Array.of(on), Uint8Array.of(on ^ 1));
      this.emit('config', this.config);
    },
    alock: (which: 'st_alock' | 'lt_alock', p: Uint8Array) => {
      if (p.length < 2) return;
      this.#config[which] = readU16be(p) / 100;
      const value = Math.round(this.#config[which] * 100);
      this.#echo(which, which === 'st_alock' ? CMD.CMD_ST_ALOCK : CMD.CMD_LT_ALOCK, u16be(value), u16be(value + 100));
    },
    detect: (p: Uint8Array) => {
      if (p[0] !== DETECT_REQ) return;
      this.counters.detects++;
      this.sendFrame(CMD.CMD_DETECT, Uint8Array.of(DETECT_RESP));
    },
    leave: () => {
      this.counters.leaves++;
      this.emit('leave');
    },
    ready: () => {
      this.counters.readyQueries++;
      if (this.faults.withholdReady) return;
      this.sendFrame(CMD.CMD_READY, Uint8Array.of(this.#queueHasRoom(1) ? 0x01 : 0x00));
    },
    identity: (command: number) => {
      const o = this.#options;
      const payload: Record<number, Uint8Array> = {
        [CMD.CMD_FW_VERSION]: Uint8Array.of(o.firmware.major, o.firmware.minor),
        [CMD.CMD_PLATFORM]: Uint8Array.of(o.platform),
        [CMD.CMD_MCU]: Uint8Array.of(o.mcu),
        [CMD.CMD_BOARD]: Uint8Array.of(o.board),
        [CMD.CMD_STAT_RX]: u32be(this.counters.received),
        [CMD.CMD_STAT_TX]: u32be(this.counters.transmitted),
        [CMD.CMD_RANDOM]: Uint8Array.of(Math.floor(Math.random() * 256)),
      };
      this.sendFrame(command, payload[command]);
    },
  };

  #echo(field: EchoField, command: number, right: Uint8Array, wrong: Uint8Array): void {
    this.sendFrame(command, this.faults.wrongEcho === field ? wrong : right);
    if (field !== 'radio_state') this.emit('config', this.config);
  }

  #radioOn(): void {
    const c = this.#config;
    if (c.frequency_hz === 0 || c.bandwidth_hz === 0 || c.sf === 0) {
      // The firmware cannot start a modem it has no settings for (ERROR_INITRADIO).
      this.sendFrame(CMD.CMD_ERROR, Uint8Array.of(0x01));
      return;
    }
    c.radio_on = true;
    this.#armStats();
    this.#pump();
  }

  /** READY's test: room for one more byte and one more packet, not for a whole frame. */
  #queueHasRoom(bytes: number): boolean {
    return this.#queue.length < this.#options.queuePackets && this.#queuedBytes + bytes <= this.#options.queueBytes;
  }

  /** The queue's byte count, packets, and uncommitted bytes (tests and the bench). */
  get queueState(): { packets: number; bytes: number; orphanBytes: number } {
    return { packets: this.#queue.length, bytes: this.#queuedBytes, orphanBytes: this.#orphan.length };
  }

  #enqueue(payload: Uint8Array): void {
    this.counters.dataFromHost++;
    if (payload.length === 0 || payload.length > KISS_MAX_PAYLOAD) return;
    if (!this.#config.radio_on) {
      this.counters.droppedRadioOff++;
      return;
    }
    // Byte by byte while fewer than the queue's packets are queued and its bytes are not all
    // used; committed at the closing FEND only if the byte count is still below the size.
    // Otherwise nothing is said to the host (docs/protocols/rnode.md 1.10).
    const o = this.#options;
    const stored = this.#queue.length < o.queuePackets ? Math.max(0, Math.min(payload.length, o.queueBytes - this.#queuedBytes)) : 0;
    this.#queuedBytes += stored;
    const bytes = new Uint8Array(this.#orphan.length + stored);
    bytes.set(this.#orphan, 0);
    bytes.set(payload.subarray(0, stored), this.#orphan.length);
    if (this.#queue.length < o.queuePackets && this.#queuedBytes < o.queueBytes && bytes.length > 0) {
      this.#queue.push(bytes);
      this.#orphan = new Uint8Array(0);
    } else {
      this.#orphan = bytes;
      this.counters.droppedQueueFull++;
      return;
    }
    this.#pump();
  }

  #overAirtimeLimit(): boolean {
    // The limit is the u16 / 10000 as a fraction; 0 or >= 1 is no limit (docs/protocols/rnode.md 1.6).
    const over = (limitPct: number, used: number) => limitPct > 0 && limitPct < 100 && used >= limitPct / 100;
    return over(this.#config.st_alock, this.#figures.short) || over(this.#config.lt_alock, this.#figures.long);
  }

  /** The firmware's update: figures recomputed from the bins (the lock then uses them). */
  #updateFigures(): void {
    this.#figures = this.#bins.figures(this.#clock.now());
    this.emit('airtime', { short: this.#figures.short, long: this.#figures.long, at: this.#clock.now() });
  }

  #pump(): void {
    if (this.#closed || this.#transmitting || !this.#config.radio_on) return;
    if (this.#flush && this.#flush.packets === 0) this.#flush = null;
    if (this.#queue.length === 0) return;
    // The lock is looked at before a channel access, not between the packets of one flush.
    if (!this.#flush && this.#overAirtimeLimit()) {
      // Held; the next stats tick tries again.
      this.counters.heldForAirtime++;
      return;
    }
    const c = this.#config;
    const radio = { sf: c.sf, bandwidthHz: c.bandwidth_hz, cr: c.cr };
    if (!this.#flush && firmwareBitrate(radio) <= GUARD_THRESHOLD_BPS) {
      this.#flush = { packets: this.#queue.length };
    }
    const payload = this.#queue.shift()!;
    if (this.#flush) this.#flush.packets--;
    this.#queuedBytes -= payload.length;
    if (payload.length > KISS_MAX_PAYLOAD) {
      this.counters.droppedTooLong++;
      if (!this.#flush) this.#updateFigures();
      this.#pump();
      return;
    }
    const tuning = { frequency_hz: c.frequency_hz, bandwidth_hz: c.bandwidth_hz, sf: c.sf };
    const ms = rnodeAirtimeMs(payload.length, radio);
    this.#airtime.transmitted(ms);
    this.#transmitting = this.#clock.setTimeout(() => {
      this.#transmitting = null;
      this.counters.transmitted++;
      for (const written of firmwareFrames(payload.length)) this.#bins.charge(this.#clock.now(), firmwareFrameCostMs(written, radio));
      this.#channel?.transmitted(this, tuning, payload, ms);
      this.emit('transmitted', payload, ms);
      // One popped packet, or the last of a flush, ends with an update and STAT_CHTM.
      if (!this.#flush || this.#flush.packets === 0) {
        this.#updateFigures();
        this.#sendChannelStats();
      }
      this.#pump();
    }, ms);
  }

  #armStats(): void {
    if (this.#statsTimer || !this.#host || this.#closed) return;
    this.#statsTimer = this.#clock.setTimeout(() => {
      this.#statsTimer = null;
      if (this.#config.radio_on) {
        this.#updateFigures();
        this.#sendChannelStats();
      }
      this.#pump();
      this.#armStats();
    }, this.#options.statsIntervalMs);
  }

  #sendChannelStats(): void {
    const a = this.#airtime.percent();
    const airtime = { airtime_short_pct: reportedPercent(this.#figures.short), airtime_long_pct: reportedPercent(this.#figures.long) };
    this.sendFrame(
      CMD.CMD_STAT_CHTM,
      encodeChannelStats({ ...a, ...airtime, current_rssi_dbm: this.#lastRssi ?? NOISE_FLOOR_DBM, noise_floor_dbm: NOISE_FLOOR_DBM, interference_dbm: null }),
    );
  }
}

type HostHandler = (sim: RNodeSimulator, payload: Uint8Array) => void;

/** Host -> device commands the simulator answers, keyed by command byte; anything else is
 *  counted in counters.unknownCommands (the firmware ignores it too). */
const HOST_COMMANDS: Record<number, HostHandler> = {
  [CMD.CMD_DATA]: (s, p) => s.ops.data(p),
  [CMD.CMD_FREQUENCY]: (s, p) => s.ops.frequency(p),
  [CMD.CMD_BANDWIDTH]: (s, p) => s.ops.bandwidth(p),
  [CMD.CMD_TXPOWER]: (s, p) => s.ops.txpower(p),
  [CMD.CMD_SF]: (s, p) => s.ops.sf(p),
  [CMD.CMD_CR]: (s, p) => s.ops.cr(p),
  [CMD.CMD_RADIO_STATE]: (s, p) => s.ops.radioState(p),
  [CMD.CMD_DETECT]: (s, p) => s.ops.detect(p),
  [CMD.CMD_LEAVE]: (s) => s.ops.leave(),
  [CMD.CMD_ST_ALOCK]: (s, p) => s.ops.alock('st_alock', p),
  [CMD.CMD_LT_ALOCK]: (s, p) => s.ops.alock('lt_alock', p),
  [CMD.CMD_READY]: (s) => s.ops.ready(),
  [CMD.CMD_FW_VERSION]: (s) => s.ops.identity(CMD.CMD_FW_VERSION),
  [CMD.CMD_PLATFORM]: (s) => s.ops.identity(CMD.CMD_PLATFORM),
  [CMD.CMD_MCU]: (s) => s.ops.identity(CMD.CMD_MCU),
  [CMD.CMD_BOARD]: (s) => s.ops.identity(CMD.CMD_BOARD),
  [CMD.CMD_STAT_RX]: (s) => s.ops.identity(CMD.CMD_STAT_RX),
  [CMD.CMD_STAT_TX]: (s) => s.ops.identity(CMD.CMD_STAT_TX),
  [CMD.CMD_RANDOM]: (s) => s.ops.identity(CMD.CMD_RANDOM),
};
