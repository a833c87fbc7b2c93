import type { Bearer, BearerContext, BearerState, OutboundFrame, SendResult } from '../bearer.ts';
import { encodeFrame, KissDecoder, kissCommand, kissPort } from '../shared/codec/kiss.ts';
import { DriverLifecycle } from '../shared/links/driver-lifecycle.ts';
import type { Link } from '../shared/links/link.ts';
import { Airtime } from './airtime.ts';
import { AprsIsClient } from './aprs-is.ts';
import { decodeUi, encodeUi, formatTnc2, parseAddress, parseTnc2, type Tnc2Packet, uiToTnc2 } from './codec/ax25.ts';
import { encodeAck, encodeMessage, MAX_MESSAGE_TEXT } from './codec/message.ts';
import { encodePositionReport } from './codec/position.ts';
import { HeardList } from './igate.ts';
import { handlePacket, type Counters, ZERO_COUNTERS } from './inbound.ts';
import { ACK_WINDOW_MS, AckTracker } from './messaging.ts';
import { outgoing } from './outbound.ts';
import { AprsSettings } from './settings.ts';

// The APRS bearer (docs/aprs.md): a KISS TNC on RF (serial, tcp://host:8001, sim://), APRS-IS,
// or both (an iGate). A delivery to a callsign is an APRS message, sent again on the decaying
// schedule until its `ack` (delivered) or `rej` (dead); positions go out as the station's own
// or as objects. Nothing is transmitted, on RF or to APRS-IS, without the operator's callsign.
// Every RF frame waits its turn in the airtime queue.

/** The tocall of what the bridge sends: APZ is the experimental block (APRS 1.0.1 ch. 4). */
export const TOCALL = 'APZFBR';
/** The device value of an interface on APRS-IS alone. */
export const NO_TNC = 'auto';
const FIRST_BEACON_MS = 15_000;

export function createAprsBearer(ctx: BearerContext): AprsBearer {
  return new AprsBearer(ctx);
}

type Medium = 'rf' | 'is';

export class AprsBearer implements Bearer {
  readonly kind = 'aprs';
  readonly mtu = MAX_MESSAGE_TEXT;
  /** Messages wait minutes for their acks; several may wait at once. */
  readonly concurrency = 4;
  readonly maxSendMs = ACK_WINDOW_MS + 60_000;
  readonly settings: AprsSettings;
  readonly #ctx: BearerContext;
  readonly #lifecycle: DriverLifecycle<string>;
  readonly #acks: AckTracker;
  readonly heard = new HeardList();
  readonly counters: Counters = { ...ZERO_COUNTERS };
  #airtime: Airtime | null = null;
  #link: Link | null = null;
  #is: AprsIsClient | null = null;
  #isState = { connected: false, verified: false, error: null as string | null };
  #rfState: BearerState = { connected: false, lastError: null, phase: 'closed' };
  #rf = false;
  #stopped = false;
  #beacon: ReturnType<BearerContext['clock']['setTimeout']> | null = null;

  constructor(ctx: BearerContext) {
    this.#ctx = ctx;
    const parsed = AprsSettings.parse(ctx.settings);
    this.settings = { ...parsed, callsign: parsed.callsign?.toUpperCase() ?? null, path: parsed.path.toUpperCase() };
    this.#acks = new AckTracker(ctx.clock, ctx.state);
    const events = { ...ctx.events, state: (s: BearerState) => this.#report(s) };
    this.#lifecycle = new DriverLifecycle({ clock: ctx.clock, log: ctx.log, events }, {
      kind: 'aprs',
      open: (d) => ctx.openLink(d),
      session: async (link) => this.#session(link),
      backoff: { initialMs: 2_000, maxMs: 60_000 },
      opening: 'opening the TNC',
      online: { why: 'KISS TNC open' },
      stopping: () => {
        this.#airtime?.clear();
        this.#link = null;
      },
    });
  }

  get callsign(): string | null {
    return this.settings.callsign;
  }

  get phase(): string {
    return this.#rf ? this.#lifecycle.phase : this.#isState.connected ? 'online' : 'opening';
  }

  async start(device: string): Promise<void> {
    const s = this.settings;
    this.#rf = device !== NO_TNC;
    if (this.#rf) {
      this.#airtime = new Airtime(this.#ctx.clock, { minGapMs: s.rf_min_gap_s * 1000, maxPer10Min: s.rf_max_per_10min }, (frame) => this.#writeRf(frame));
      await this.#lifecycle.start(device);
    }
    if (s.aprs_is_server !== null && s.callsign !== null) {
      const passcode = s.aprs_is_passcode === null || s.aprs_is_passcode === '-1' ? null : s.aprs_is_passcode;
      this.#is = new AprsIsClient({
        server: s.aprs_is_server, callsign: s.callsign, passcode, filter: s.aprs_is_filter, clock: this.#ctx.clock, log: this.#ctx.log,
        onLine: (line) => this.#heardIs(line),
        onState: (st) => {
          this.#isState = st;
          this.#report(this.#rfState);
        },
      });
      this.#is.start();
    }
    this.#report(this.#rfState);
    this.#scheduleBeacon(FIRST_BEACON_MS);
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#beacon) this.#ctx.clock.clearTimeout(this.#beacon);
    this.#acks.cancelAll('the interface stopped');
    await this.#is?.stop();
    this.#is = null;
    await this.#lifecycle.stop();
    this.#ctx.events.state({ connected: false, lastError: null, phase: 'closed' });
  }

  async send(frame: OutboundFrame): Promise<SendResult> {
    const call = this.settings.callsign;
    if (call === null) return this.#refused('ERR_APRS_NO_CALLSIGN: no callsign is set, so nothing is transmitted; set the interface\'s callsign (a licensed operator\'s, with SSID)');
    const out = outgoing(frame, call, this.settings.beacon?.symbol ?? '/-', this.#ctx.clock.now());
    if (out.type === 'refused') return this.#refused(out.error);
    if (out.type !== 'message') {
      const medium = this.#medium(null);
      if (!medium) return this.#offline();
      this.#transmit(medium, out.info);
      return { ok: true, meta: { aprs_medium: medium } };
    }
    const medium = this.#medium(out.addressee);
    if (!medium) return this.#offline();
    const id = this.#acks.nextId();
    const info = encodeMessage(out.addressee, out.text, id);
    this.counters.messages_sent++;
    const outcome = await this.#acks.track(out.addressee, id, () => {
      // Each retry goes by the medium that works then (the TNC may have come back).
      const now = this.#medium(out.addressee) ?? medium;
      this.#transmit(now, info);
    });
    const meta = { aprs_msg_id: id, aprs_medium: medium, transmissions: 'transmissions' in outcome ? outcome.transmissions : 0 };
    switch (outcome.type) {
      case 'ack':
        return { ok: true, meta };
      case 'rej':
        return { ok: false, retryable: false, error: `ERR_APRS_REJECTED: ${out.addressee} rejected message ${id} (its station cannot take it)` };
      case 'timeout':
        return { ok: false, retryable: false, error: `ERR_APRS_NO_ACK: ${out.addressee} did not acknowledge message ${id} after ${outcome.transmissions} transmissions over ${ACK_WINDOW_MS / 60_000} minutes` };
      default:
        return { ok: false, retryable: true, error: `ERR_APRS_OFFLINE: ${outcome.why}` };
    }
  }

  stats(): Record<string, unknown> {
    return {
      ...this.counters,
      phase: this.phase,
      callsign: this.settings.callsign,
      heard_stations: this.heard.size,
      waiting_acks: this.#acks.waiting,
      rf_queue: this.#airtime?.waiting ?? 0,
      rf_deferred: this.#airtime?.deferred ?? 0,
      aprs_is_connected: this.#isState.connected,
      aprs_is_verified: this.#isState.verified,
      aprs_is_server_name: this.#is?.serverName ?? null,
    };
  }

  /** RF when a TNC is open and the addressee was heard on RF (or APRS-IS cannot send);
   *  else APRS-IS when logged in verified; null when neither can. */
  #medium(addressee: string | null): Medium | null {
    const rf = this.#rf && this.#link !== null;
    const is = this.#is?.verified ?? false;
    if (rf && (!is || addressee === null || this.heard.recently(addressee, this.#ctx.clock.now()))) return 'rf';
    if (is) return 'is';
    return rf ? 'rf' : null;
  }

  #transmit(medium: Medium, info: string, urgent = false): void {
    const call = this.settings.callsign!;
    if (medium === 'is') {
      if (this.#is?.send(formatTnc2({ source: call, destination: TOCALL, path: ['TCPIP*'], info }))) this.counters.is_lines_out++;
      return;
    }
    const path = this.settings.path === '' ? [] : this.settings.path.split(',').map((a) => parseAddress(a)!);
    const ui = encodeUi({ destination: { call: TOCALL, ssid: 0 }, source: parseAddress(call)!, path, info: new TextEncoder().encode(info) });
    if (!this.#airtime?.enqueue(encodeFrame(kissCommand(this.settings.tnc_port, 0), ui), urgent)) this.counters.rf_queue_full++;
  }

  #writeRf(frame: Uint8Array): void {
    const link = this.#link;
    if (!link) return;
    this.counters.rf_frames_out++;
    link.write(frame).catch((error: Error) => this.#lifecycle.fail(`writing to the TNC failed: ${error.message}`));
  }

  async #session(link: Link): Promise<void> {
    this.#link = link;
    const decoder = new KissDecoder();
    link.onData((chunk) => {
      for (const f of decoder.push(chunk)) {
        const { port, command } = kissPort(f.command);
        if (command !== 0 || port !== this.settings.tnc_port) continue;
        const d = decodeUi(f.payload);
        if (!d.ok) {
          this.counters.rf_frames_bad++;
          continue;
        }
        this.counters.rf_frames_in++;
        const packet = uiToTnc2(d.frame);
        const direct = !d.frame.path.some((a) => a.flag);
        if (packet.source.toUpperCase() !== this.settings.callsign?.toUpperCase()) this.heard.hear(packet.source, direct, this.#ctx.clock.now());
        this.#handle(packet, 'rf');
      }
    });
    link.onClose(() => {
      if (this.#link === link) this.#link = null;
    });
  }

  #heardIs(line: string): void {
    this.counters.is_lines_in++;
    const packet = parseTnc2(line);
    if (packet) this.#handle(packet, 'is');
  }

  #handle(packet: Tnc2Packet, medium: Medium): void {
    handlePacket({
      ctx: this.#ctx, settings: this.settings, counters: this.counters, heard: this.heard, acks: this.#acks,
      isVerified: this.#is?.verified ?? false,
      rfOnline: this.#rf && this.#link !== null,
      sendIs: (line) => this.#is?.send(line) ?? false,
      transmit: (m, info, urgent) => this.#transmit(m, info, urgent),
      ack: (m, to, id) => this.#transmit(m, encodeAck('ack', to, id), true),
    }, packet, medium);
  }

  #scheduleBeacon(ms: number): void {
    const b = this.settings.beacon;
    if (!b || this.settings.callsign === null || this.#stopped) return;
    this.#beacon = this.#ctx.clock.setTimeout(() => {
      const medium = this.#medium(null);
      if (medium) {
        this.#transmit(medium, encodePositionReport({ latitude: b.latitude, longitude: b.longitude, symbolTable: b.symbol[0], symbol: b.symbol[1], comment: b.comment }, { messaging: true }));
        this.counters.beacons_sent++;
      }
      this.#scheduleBeacon(b.interval_min * 60_000);
    }, ms);
  }

  /** The interface's state: the TNC's (or APRS-IS's alone), with what keeps it from sending. */
  #report(rf: BearerState): void {
    this.#rfState = rf;
    if (this.#stopped) return;
    const s = this.settings;
    const is = this.#isState;
    const connected = this.#rf ? rf.connected : is.connected;
    const problems: string[] = [];
    if (this.#rf && rf.lastError) problems.push(rf.lastError);
    if (!this.#rf && s.aprs_is_server === null) problems.push('ERR_APRS_NO_MEDIUM: the interface has no TNC (device auto) and no aprs_is_server');
    if (is.error) problems.push(is.error);
    if (s.callsign === null) problems.push('ERR_APRS_NO_CALLSIGN: no callsign is set: the interface listens and transmits nothing');
    const reason = this.#rf && rf.reason ? rf.reason : problems.length > 0 ? (connected ? 'config' : 'offline') : null;
    this.#ctx.events.state({ connected, lastError: problems.length > 0 ? problems.join('; ') : null, reason, phase: this.#rf ? (rf.phase ?? 'closed') : is.connected ? 'online' : 'opening' });
  }

  #refused(error: string): SendResult {
    this.counters.refused++;
    return { ok: false, retryable: false, error };
  }

  #offline(): SendResult {
    return { ok: false, retryable: true, error: `ERR_APRS_OFFLINE: neither the TNC nor a verified APRS-IS login is up (${this.phase})` };
  }
}
