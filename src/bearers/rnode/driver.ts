import type { Bearer, BearerContext, OutboundFrame, SendResult } from '../bearer.ts';
import { settlesWithin, type TimerHandle } from '../../lib/clock.ts';
import { concat, utf8OrNull } from '../shared/codec/bytes.ts';
import { DeviceError } from '../device-error.ts';
import { clearTimers, type DriverLifecycle } from '../shared/links/driver-lifecycle.ts';
import { SupervisedDriver, type SupervisedDriverOptions } from '../shared/links/supervised-driver.ts';
import type { Link } from '../shared/links/link.ts';
import { TxQueue } from './flow.ts';
import { keepsAirtime, queueCapacity } from './firmware.ts';
import { encodeFrame, KISS_MAX_PAYLOAD, KissDecoder } from '../shared/codec/kiss.ts';
import {
  CMD, decodeDeviceFrame, DETECT_BURST, DETECT_REQUEST, encodeConfiguration, firmwareAtLeast, formatFirmware,
  LEAVE, RADIO_OFF, READY_QUERY, REQUIRED_FW_VERSION, type DeviceMessage,
} from './protocol.ts';
import { LxmfEndpoint } from './lxmf/endpoint.ts';
import { bitrateBps, parseRnodeSettings, type RnodeSettings } from './radio.ts';
import { ReplyBook } from './replies.ts';
import { reportedStats, type Reported } from './stats.ts';
import { checkEchoes, describeMismatches, expectedEchoes, type Echoes } from './verify.ts';
import { sleep } from '../shared/links/open-link.ts';

// The RNode bearer (interface kind `rnode`; docs/api.md 2.7, docs/protocols/rnode.md 1). The device supervisor
// (shared/links/device-supervisor.ts) opens the link and owns the opening/online/backoff cycle;
// this driver runs the bring-up on each fresh link (detecting -> configuring -> verifying,
// docs/protocols/rnode.md 1.4) and, once online, carries DATA frames both ways with READY flow control,
// channel statistics, the TCP keep-alive and the callsign beacon. In `reticulum` mode the
// frames are Reticulum packets and an LXMF endpoint (bearers/rnode/lxmf/endpoint.ts) sits between
// the radio and the bridge: it announces, proves, encrypts and signs; the driver moves bytes.

export type RNodePhase = 'closed' | 'opening' | 'detecting' | 'configuring' | 'verifying' | 'online' | 'backoff';

export interface RNodeTiming {
  /** Reticulum polls up to 5 s for the detect response (docs/protocols/rnode.md 1.4 step 3). */
  detectTimeoutMs: number;
  /** How long every configuration echo may take (Reticulum waits 1.5 s on TCP). */
  verifyTimeoutMs: number;
  /** Detect request after this long without writing, on TCP (docs/protocols/rnode.md 1.1). */
  keepaliveMs: number;
  readyRetryMs: number;
  sendTimeoutMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
}

export const DEFAULT_RNODE_TIMING: RNodeTiming = {
  detectTimeoutMs: 5_000,
  verifyTimeoutMs: 3_000,
  keepaliveMs: 3_500,
  readyRetryMs: 1_000,
  sendTimeoutMs: 30_000,
  backoffInitialMs: 1_000,
  backoffMaxMs: 60_000,
};

/** Silence after which a half-received frame is thrown away (docs/protocols/rnode.md 1.2). */
const HALF_FRAME_MS = { serial: 100, ble: 1_250, tcp: 1_500 } as const;

export interface RNodeDriverOptions extends SupervisedDriverOptions<RNodeTiming> {
  /** reticulum mode: how long a message waits for its delivery proof (default 60 s). */
  proofTimeoutMs?: number;
}

/** reticulum mode: what a send over a link may take beyond one packet's proof: establishing the
 *  link, then a resource within its airtime budget, with the receiver's retries. */
const LINK_DELIVERY_ALLOWANCE_MS = 5 * 60_000;
/** How long a stop waits for the LINKCLOSE packets of open LXMF links to go on the air. */
const LINKCLOSE_WAIT_MS = 5_000;

export function createRNodeBearer(ctx: BearerContext, options: RNodeDriverOptions): Bearer {
  return new RNodeBearer(ctx, options);
}

export class RNodeBearer extends SupervisedDriver<RNodePhase, RnodeSettings, RNodeTiming, RNodeDriverOptions> implements Bearer {
  readonly kind = 'rnode';
  readonly mtu: number;
  /** reticulum mode: sends wait for their proofs, several at once; raw mode: one at a time. */
  readonly concurrency: number;
  readonly maxSendMs?: number;
  /** The LXMF endpoint in reticulum mode; null in raw mode. */
  readonly lxmf: LxmfEndpoint | null;
  readonly #tx: TxQueue;
  protected readonly lifecycle: DriverLifecycle<RNodePhase>;
  #link: Link | null = null;
  #decoder = new KissDecoder();
  readonly #replies: ReplyBook;
  #pendingRssi: number | null = null;
  #pendingSnr: number | null = null;
  #reported: Reported = {};
  /** MCU id from the detect answers: it decides the radio's queue size. */
  #mcuId: number | undefined;
  #timers: { halfFrame?: TimerHandle; keepalive?: TimerHandle; beacon?: TimerHandle } = {};
  #transmittedSinceBeacon = false;
  readonly #counters = { rx_frames: 0, tx_frames: 0, beacons_sent: 0, unknown_frames: 0, malformed_frames: 0, device_errors: 0 };
  #kissErrors = { oversize: 0, badEscape: 0, unframedBytes: 0, discardedPartial: 0 };

  constructor(ctx: BearerContext, options: RNodeDriverOptions) {
    super(ctx, options, { timing: DEFAULT_RNODE_TIMING, settings: { parse: parseRnodeSettings } });
    this.#tx = new TxQueue(ctx.clock, this.timing, this.settings.flow_control);
    this.#replies = new ReplyBook(ctx.clock);
    const s = this.settings;
    this.lxmf = s.mode === 'reticulum'
      ? new LxmfEndpoint({
        interfaceName: ctx.interfaceName, clock: ctx.clock, log: ctx.log, events: ctx.events, state: ctx.state,
        transmit: (packet) => this.#transmit(packet), displayName: s.display_name, announceIntervalS: s.announce_interval_s,
        bitrateBps: bitrateBps(s.sf, s.bandwidth_hz, s.cr), proofTimeoutMs: options.proofTimeoutMs,
        propagation: s.propagation_node ? { node: s.propagation_node, syncIntervalS: s.propagation_sync_interval_s, maxStampCost: s.propagation_max_stamp_cost } : null,
      })
      : null;
    this.mtu = this.lxmf ? this.lxmf.maxContentBytes : KISS_MAX_PAYLOAD;
    this.concurrency = this.lxmf ? 4 : 1;
    // A send waits for the transmit queue (sendTimeoutMs at most) and then for its proof; a
    // large message first opens a link and goes as a resource (its airtime budget, retries).
    // With a propagation node, an attempt that fails directly then goes to the node: a stamp,
    // a link and one more delivery.
    if (this.lxmf) this.maxSendMs = this.timing.sendTimeoutMs + (options.proofTimeoutMs ?? 60_000) + LINK_DELIVERY_ALLOWANCE_MS * (s.propagation_node ? 2 : 1);
    this.lifecycle = this.supervise({
      session: (link) => this.#session(link),
      opening: 'opening the device',
      online: { why: 'every echoed value matches' },
      wentOnline: () => this.#goOnline(),
      // LXMF links closed on the air, radio off, then LEAVE (docs/protocols/rnode.md 1.4 step
      // 7), then the link closes.
      stopping: async () => {
        const link = this.#link;
        if (link && this.lifecycle.phase === 'online' && this.lxmf) await this.#closeLxmfLinksOnAir().catch(() => {});
        if (link && this.lifecycle.phase === 'online') await link.write(concat(RADIO_OFF, LEAVE)).catch(() => {});
        this.#goOffline('stop requested');
        this.lxmf?.close();
      },
    }, { clock: ctx.clock, log: ctx.log.child({ interface: ctx.interfaceName }), events: ctx.events });
  }

  /** Tells every LXMF link's peer that the link ends (LINKCLOSE) while the radio is on, so
   *  the peer closes it at once instead of after its keep-alive timeout, and waits until the
   *  radio has sent them (its queue as the flow control sees it is empty): what the radio
   *  still holds when it goes off may never be sent. Bounded, so a stop never waits long on a
   *  busy channel. */
  async #closeLxmfLinksOnAir(): Promise<void> {
    const clock = this.ctx.clock;
    const sentBy = clock.now() + LINKCLOSE_WAIT_MS;
    let closed = false;
    if (!(await settlesWithin(clock, this.lxmf!.closeLinks().then((any) => void (closed = any)), LINKCLOSE_WAIT_MS)) || !closed) return;
    while (this.#tx.radioQueue.packets > 0 && clock.now() < sentBy) await sleep(clock, 100);
  }

  async send(frame: OutboundFrame): Promise<SendResult> {
    if (this.lxmf) {
      if (this.lifecycle.phase !== 'online') return this.#offline();
      return this.lxmf.send(frame);
    }
    const n = frame.payload.length;
    // An RNode frame carries 1–508 bytes (docs/protocols/rnode.md 1.2, 1.3): longer messages must be
    // split by the interface's transforms; retrying cannot help.
    if (n > KISS_MAX_PAYLOAD) {
      return { ok: false, retryable: false, error: `ERR_RNODE_FRAME_TOO_LONG: ${n} bytes is more than the ${KISS_MAX_PAYLOAD} bytes one RNode frame carries (add a split or truncate transform)` };
    }
    if (n === 0) return { ok: false, retryable: false, error: 'ERR_RNODE_EMPTY_FRAME: an RNode frame needs at least one byte' };
    return this.#transmit(frame.payload);
  }

  /** One frame onto the air through the transmit queue (a message, or a Reticulum packet). */
  async #transmit(payload: Uint8Array): Promise<SendResult> {
    if (this.lifecycle.phase !== 'online') return this.#offline();
    const result = await this.#tx.enqueue(payload);
    if (result.ok) this.#transmittedSinceBeacon = true;
    return result;
  }

  #offline(): SendResult {
    return { ok: false, retryable: true, error: `ERR_RNODE_OFFLINE: the radio is not online (${this.lifecycle.phase}${this.lifecycle.state.lastError ? `: ${this.lifecycle.state.lastError}` : ''})` };
  }

  stats(): Record<string, unknown> {
    return {
      phase: this.lifecycle.phase,
      connected: this.lifecycle.state.connected,
      last_error: this.lifecycle.state.lastError,
      device: this.lifecycle.device,
      link: this.#link?.description ?? null,
      ...reportedStats(this.#reported, this.settings),
      queue_depth: this.#tx.depth,
      radio_queue: this.#tx.radioQueue,
      held_for_room: this.#tx.heldForRoom,
      ready_queries: this.#tx.readyQueries,
      ...this.#counters,
      kiss_errors: this.#sumKissErrors(),
      mode: this.settings.mode,
      ...(this.lxmf ? { reticulum: this.lxmf.stats() } : {}),
    };
  }

  // ---- bring-up (docs/protocols/rnode.md 1.4) ------------------------------------------------------

  async #session(link: Link): Promise<void> {
    this.#link = link;
    this.#addKissErrors();
    this.#decoder = new KissDecoder();
    this.#replies.clear();
    link.onData((chunk) => this.#onChunk(link, chunk));
    link.onClose((reason) => {
      if (this.#link !== link) return;
      this.#replies.failAll(new Error(reason));
      this.#goOffline(reason);
      this.#link = null;
    });
    // Bring-up steps show no error: the one that sent the device into backoff is over.
    const fresh = { connected: false, lastError: null };
    this.lifecycle.enter('detecting', `link open (${link.description}); sending the detect burst`, fresh);
    await this.#write(link, DETECT_BURST);
    await this.#replies.wait(['detect', 'fw_version', 'platform', 'mcu'], this.timing.detectTimeoutMs, 'ERR_RNODE_DETECT', 'the device did not answer the detect burst as an RNode');
    if (!this.#replies.get('detect')?.ok) throw new DeviceError('ERR_RNODE_DETECT', 'the device answered the detect request with the wrong byte (not an RNode)', { retryable: true });
    const fw = this.#replies.get('fw_version')!;
    if (!firmwareAtLeast(fw)) {
      throw new DeviceError('ERR_RNODE_FIRMWARE', `RNode firmware ${formatFirmware(fw)} is older than the required ${formatFirmware(REQUIRED_FW_VERSION)}; update it with rnodeconf`, { retryable: false, facts: { answer: formatFirmware(fw) } });
    }
    const s = this.settings;
    this.#mcuId = this.#replies.get('mcu')?.id;
    this.#replies.clear();
    this.lifecycle.enter('configuring', `RNode firmware ${formatFirmware(fw)} on ${this.#reported.platform}/${this.#reported.mcu}; sending ${s.frequency_hz} Hz, ${s.bandwidth_hz} Hz, SF${s.sf}, CR4/${s.cr}, ${s.tx_power_dbm} dBm`, fresh);
    await this.#write(link, encodeConfiguration(s));
    this.lifecycle.enter('verifying', 'configuration sent; checking every echoed value', fresh);
    await this.#replies.wait(expectedEchoes(s), this.timing.verifyTimeoutMs, 'ERR_RNODE_ECHO', 'the radio did not echo every setting');
    const mismatches = checkEchoes(s, this.#echoes());
    if (mismatches.length) {
      throw new DeviceError('ERR_RNODE_ECHO', `the radio did not take its settings: ${describeMismatches(mismatches)}`, { retryable: true, facts: { answer: describeMismatches(mismatches) } });
    }
    // Resolving hands over to the supervisor, which reports `online` (shared/links/driver-lifecycle.ts).
  }

  #echoes(): Echoes {
    const r = this.#replies;
    return {
      frequency: r.get('frequency')?.hz,
      bandwidth: r.get('bandwidth')?.hz,
      txpower: r.get('txpower')?.dbm,
      sf: r.get('sf')?.sf,
      cr: r.get('cr')?.cr,
      radio_state: r.get('radio_state')?.on,
      st_alock: r.get('st_alock')?.percent,
      lt_alock: r.get('lt_alock')?.percent,
    };
  }

  // ---- online ---------------------------------------------------------------------------

  #goOnline(): void {
    const link = this.#link;
    if (!link) return;
    const r = this.#reported;
    const s = this.settings;
    const limits = keepsAirtime(this.#mcuId);
    this.#tx.plan({
      capacity: queueCapacity(this.#mcuId),
      radio: { sf: r.sf ?? s.sf, bandwidthHz: r.bandwidth_hz ?? s.bandwidth_hz, cr: r.cr ?? s.cr },
      stLimitPct: limits ? (r.st_alock_pct ?? s.st_alock ?? 0) : 0,
      ltLimitPct: limits ? (r.lt_alock_pct ?? s.lt_alock ?? 0) : 0,
    });
    this.#tx.attach({
      writeData: (payload) => this.#writeData(link, payload),
      queryReady: () => this.#write(link, READY_QUERY),
    });
    this.#armKeepalive(link);
    this.#armBeacon();
    this.lxmf?.online();
  }

  #goOffline(reason: string): void {
    this.lxmf?.offline();
    this.#tx.detach(reason);
    this.#timers = clearTimers(this.ctx.clock, this.#timers);
    this.#reported.radio_on = false;
  }

  async #writeData(link: Link, payload: Uint8Array): Promise<void> {
    await this.#write(link, encodeFrame(CMD.CMD_DATA, payload));
    this.#counters.tx_frames++;
  }

  #write(link: Link, bytes: Uint8Array): Promise<void> {
    if (this.lifecycle.phase === 'online') this.#armKeepalive(link);
    return link.write(bytes);
  }

  /** On TCP the device drops a client it has not heard from for 6.5 s; a detect request
   *  after 3.5 s without writing keeps the link (docs/protocols/rnode.md 1.1; docs/api.md 8). */
  #armKeepalive(link: Link): void {
    if (link.kind !== 'tcp') return;
    if (this.#timers.keepalive) this.ctx.clock.clearTimeout(this.#timers.keepalive);
    this.#timers.keepalive = this.ctx.clock.setTimeout(() => {
      this.#timers.keepalive = undefined;
      if (this.#link === link) this.#write(link, DETECT_REQUEST).catch(() => {});
    }, this.timing.keepaliveMs);
  }

  /** The callsign goes out every beacon_interval_s, only if the interface transmitted since
   *  the last one (station identification). */
  #armBeacon(): void {
    const { callsign, beacon_interval_s: interval } = this.settings;
    if (!callsign || !interval) return;
    this.#timers.beacon = this.ctx.clock.setTimeout(() => {
      this.#timers.beacon = undefined;
      if (this.#transmittedSinceBeacon && this.lifecycle.phase === 'online') {
        this.#transmittedSinceBeacon = false;
        this.#counters.beacons_sent++;
        void this.#tx.enqueue(new TextEncoder().encode(callsign));
      }
      if (this.lifecycle.phase === 'online') this.#armBeacon();
    }, interval * 1000);
  }

  // ---- receiving ------------------------------------------------------------------------

  #onChunk(link: Link, chunk: Uint8Array): void {
    if (this.#link !== link) return;
    for (const frame of this.#decoder.push(chunk)) this.#onMessage(decodeDeviceFrame(frame));
    if (this.#timers.halfFrame) this.ctx.clock.clearTimeout(this.#timers.halfFrame);
    this.#timers.halfFrame = undefined;
    if (this.#decoder.midFrame) {
      this.#timers.halfFrame = this.ctx.clock.setTimeout(() => {
        this.#timers.halfFrame = undefined;
        this.#decoder.reset();
      }, HALF_FRAME_MS[link.kind]);
    }
  }

  #onMessage(m: DeviceMessage): void {
    const handler = ON_MESSAGE[m.type] as ((b: RNodeBearer, m: DeviceMessage) => void) | undefined;
    handler?.(this, m);
    // After the handler, so a fatal ERROR has dropped an online link before bring-up sees it.
    this.#replies.record(m);
  }

  /** Called through ON_MESSAGE; one method per kind of frame the device sends. */
  readonly on = {
    data: (payload: Uint8Array) => {
      this.#counters.rx_frames++;
      const meta: Record<string, unknown> = {};
      // STAT_RSSI and STAT_SNR precede the packet they describe (docs/protocols/rnode.md 1.3).
      if (this.#pendingRssi !== null) meta.rssi_dbm = this.#pendingRssi;
      if (this.#pendingSnr !== null) meta.snr_db = this.#pendingSnr;
      this.#pendingRssi = this.#pendingSnr = null;
      if (this.lxmf) return this.lxmf.onPacket(payload, meta);
      const text = utf8OrNull(payload);
      this.ctx.events.receive({ from: 'rnode', to: null, channel: null, kind: text === null ? 'data' : 'text', text, payload, meta });
    },
    rssi: (dbm: number) => {
      this.#pendingRssi = dbm;
      this.#reported.last_rssi_dbm = dbm;
    },
    snr: (db: number) => {
      this.#pendingSnr = db;
      this.#reported.last_snr_db = db;
    },
    report: (values: Reported) => Object.assign(this.#reported, values),
    ready: (room: boolean) => this.#tx.ready(room),
    channel: (m: Extract<DeviceMessage, { type: 'stat_chtm' }>) => {
      this.on.report({ ...m });
      if (this.lifecycle.phase === 'online') this.#tx.report(m.airtime_short_pct, m.airtime_long_pct);
    },
    error: (m: Extract<DeviceMessage, { type: 'error' }>) => {
      this.#counters.device_errors++;
      const reason = `RNode reported ${m.name} (0x${m.code.toString(16).padStart(2, '0')}): ${m.meaning}`;
      if (m.code === 0x04) this.#tx.full();
      if (m.fatal) {
        // During bring-up the ReplyBook fails the step waiting; online, the link is dropped.
        if (this.lifecycle.phase === 'online') this.lifecycle.fail(reason);
        return;
      }
      // Not fatal (queue full, memory low, modem timeout): stays online, shown as the last error.
      this.ctx.log.warn('rnode.device_error', { interface: this.ctx.interfaceName, reason });
      const state = this.lifecycle.state;
      if (state.lastError !== reason || state.reason !== 'device') this.lifecycle.enter(this.lifecycle.phase, reason, { ...state, lastError: reason, reason: 'device' });
    },
    reset: () => {
      // An ESP32 announces a reboot; its settings are gone, so bring it up again (Reticulum).
      if (this.lifecycle.phase === 'online') this.lifecycle.fail('the RNode rebooted (reset indication); initialising again');
    },
    unknown: () => this.#counters.unknown_frames++,
    malformed: (m: Extract<DeviceMessage, { type: 'malformed' }>) => {
      this.#counters.malformed_frames++;
      this.ctx.log.debug('rnode.malformed_frame', { interface: this.ctx.interfaceName, command: m.name, reason: m.reason });
    },
  };

  /** Keeps the counts of a finished link's decoder before a new link gets a fresh one. */
  #addKissErrors(): void {
    const e = this.#decoder.errors;
    const k = this.#kissErrors;
    k.oversize += e.oversize;
    k.badEscape += e.badEscape;
    k.unframedBytes += e.unframedBytes;
    k.discardedPartial += e.discardedPartial;
  }

  #sumKissErrors(): Record<string, number> {
    const e = this.#decoder.errors;
    const k = this.#kissErrors;
    return {
      oversize: k.oversize + e.oversize,
      bad_escape: k.badEscape + e.badEscape,
      unframed_bytes: k.unframedBytes + e.unframedBytes,
      discarded_partial: k.discardedPartial + e.discardedPartial,
    };
  }
}

type Handler<T extends DeviceMessage['type']> = (b: RNodeBearer, m: Extract<DeviceMessage, { type: T }>) => void;

/** What each device frame does, by decoded type (one table; 'unknown' is counted). */
const ON_MESSAGE: { [T in DeviceMessage['type']]?: Handler<T> } = {
  data: (b, m) => b.on.data(m.payload),
  stat_rssi: (b, m) => b.on.rssi(m.dbm),
  stat_snr: (b, m) => b.on.snr(m.db),
  stat_chtm: (b, m) => b.on.channel(m),
  frequency: (b, m) => b.on.report({ frequency_hz: m.hz }),
  bandwidth: (b, m) => b.on.report({ bandwidth_hz: m.hz }),
  txpower: (b, m) => b.on.report({ tx_power_dbm: m.dbm }),
  sf: (b, m) => b.on.report({ sf: m.sf }),
  cr: (b, m) => b.on.report({ cr: m.cr }),
  radio_state: (b, m) => b.on.report({ radio_on: m.on }),
  st_alock: (b, m) => b.on.report({ st_alock_pct: m.percent }),
  lt_alock: (b, m) => b.on.report({ lt_alock_pct: m.percent }),
  fw_version: (b, m) => b.on.report({ firmware: formatFirmware(m) }),
  platform: (b, m) => b.on.report({ platform: m.name }),
  mcu: (b, m) => b.on.report({ mcu: m.name }),
  board: (b, m) => b.on.report({ board: m.id }),
  stat_temp: (b, m) => b.on.report({ temperature_c: m.celsius }),
  ready: (b, m) => b.on.ready(m.room),
  error: (b, m) => b.on.error(m),
  reset: (b) => b.on.reset(),
  unknown: (b) => b.on.unknown(),
  malformed: (b, m) => b.on.malformed(m),
};
