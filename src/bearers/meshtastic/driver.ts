import type { Bearer, BearerContext, DeviceSection, OutboundFrame, SendResult } from '../bearer.ts';
import { settlesWithin, type TimerHandle } from '../../lib/clock.ts';
import { DeviceError } from '../device-error.ts';
import { clearTimers, type DriverLifecycle } from '../shared/links/driver-lifecycle.ts';
import { SupervisedDriver, type SupervisedDriverOptions } from '../shared/links/supervised-driver.ts';
import type { Link } from '../shared/links/link.ts';
import { AckBook, DeviceQueue } from './acks.ts';
import { boardOf, boardProblems, fitBoard } from './board.ts';
import { editSession, loraChange, moduleChanges, ownerChange, ownerReport, radioReport, type Change } from './admin.ts';
import {
  BITFIELD, DATA_PAYLOAD_LEN, decodeFromRadio, decodeRouting, encodeAdminMessage, encodeToRadioFrame, formatNodeId, fromRadioVariant,
  PORT_NUM, StreamDecoder, WAKE_BYTES,
  type AdminMessage, type FromRadio, type MeshPacket, type ToRadio,
} from './codec/messages.ts';
import { Handshake, newNonce, type DeviceState } from './handshake.ts';
import { deviceMetricsOf, inboundPacket, liveBoardTime } from './inbound.ts';
import { outboundPacket } from './outbound.ts';
import { deviceView } from './stats.ts';
import { replayedRecord, replayReport } from './replay.ts';
import { MeshtasticSettings } from './settings.ts';
import { sleep } from '../shared/links/open-link.ts';

// The Meshtastic bearer (interface kind `meshtastic`; docs/meshtastic.md,
// docs/protocols/meshtastic.md). The device supervisor opens the link and owns the
// opening/online/backoff cycle; on every fresh link this driver wakes the device, asks for its
// state with a random nonce and collects it until config_complete_id says the nonce, pushes
// the bridge's radio and owner settings when they differ (the device reboots once, and the
// next handshake verifies them), then carries packets both ways with honest acknowledgements.

export type MeshtasticPhase = 'closed' | 'opening' | 'waking' | 'handshake' | 'configuring' | 'online' | 'backoff';

export interface MeshtasticTiming {
  /** After the wake bytes, before want_config_id (the Python client waits 100 ms). */
  wakeMs: number;
  /** How long a device may take to reboot after commit_edit_settings. */
  rebootMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
}

export const DEFAULT_MESHTASTIC_TIMING: MeshtasticTiming = { wakeMs: 100, rebootMs: 30_000, backoffInitialMs: 1_000, backoffMaxMs: 60_000 };

// Debug text the firmware prints between frames: logged, but at most this many lines a minute.
const TEXT_LINES_PER_MINUTE = 30;

export interface MeshtasticDriverOptions extends SupervisedDriverOptions<MeshtasticTiming> {
  random?: () => number;
}

export class MeshtasticBearer extends SupervisedDriver<MeshtasticPhase, MeshtasticSettings, MeshtasticTiming, MeshtasticDriverOptions> implements Bearer {
  readonly kind = 'meshtastic';
  readonly mtu = DATA_PAYLOAD_LEN;
  // Acknowledgements take seconds: several messages may wait for theirs at once, within the
  // device's queue (DeviceQueue).
  readonly concurrency = 8;
  readonly maxSendMs: number;
  readonly #random: () => number;
  readonly #acks: AckBook;
  readonly #queue = new DeviceQueue();
  protected readonly lifecycle: DriverLifecycle<MeshtasticPhase>;
  #link: Link | null = null;
  #decoder = new StreamDecoder();
  #handshake: Handshake | null = null;
  #handshakeDone: (() => void) | null = null;
  #rebooted: (() => void) | null = null;
  #known: DeviceState | null = null;
  #ownMetrics: ReturnType<typeof deviceMetricsOf> = {};
  /** The changes pushed last (their fields), to verify after the reboot and never loop. */
  #pushed: string[] | null = null;
  #configError: string | null = null;
  /** Stored settings the bound board would not take (board.ts), as the interface's error. */
  #beyondBoard: string | null = null;
  /** Fields the device refused, with the value it refused: not pushed again until it changes. */
  readonly #refused = new Map<string, unknown>();
  /** The bridge's module settings as last seen, to push only what an operator changed. */
  #modulesSeen: Record<string, Record<string, unknown>> | null = null;
  /** Module fields changed while the device was not online: pushed after the next handshake. */
  #pendingModules: Record<string, Record<string, unknown>> = {};
  #timers: { heartbeat?: TimerHandle; silence?: TimerHandle; textWindow?: TimerHandle } = {};
  #textLines = 0;
  #unsubscribe: (() => void) | null = null;
  /** The board's time as last told (from a live packet's rx_time), and when (our clock). */
  #boardTime: { time: string; read_at: string } | null = null;
  #boardTimeMs = -Infinity;
  readonly #counters = { received: 0, sent: 0, acked: 0, failed: 0, undecodable: 0, unknown_ports: 0, encrypted: 0, replayed: 0, debug_lines: 0, oversize_frames: 0, config_pushes: 0, reboots: 0 };
  readonly #failedByReason: Record<string, number> = {};

  constructor(ctx: BearerContext, options: MeshtasticDriverOptions) {
    super(ctx, options, { timing: DEFAULT_MESHTASTIC_TIMING, settings: MeshtasticSettings });
    this.#random = options.random ?? Math.random;
    this.#acks = new AckBook(ctx.clock);
    // The acknowledgement's deadline, and time to wait for room in the device's queue.
    this.maxSendMs = this.settings.ack_timeout_s * 1000 + 60_000;
    this.lifecycle = this.supervise({
      session: (link) => this.#session(link),
      opening: 'opening the device',
      // A value the device refused stays the last error while it is online.
      online: { why: 'handshake complete', state: (s) => ({ ...s, lastError: this.#configError, ...(this.#configError ? { reason: 'config' as const } : {}) }) },
      wentOnline: () => this.#goOnline(),
      starting: () => {
        this.#modulesSeen = this.ctx.deviceConfig.desired('modules') as Record<string, Record<string, unknown>> | null;
        this.#unsubscribe = this.ctx.deviceConfig.onChange((section, value, part) => this.#configChanged(section, value, part));
      },
      stopping: async () => {
        this.#unsubscribe?.();
        this.#unsubscribe = null;
        const link = this.#link;
        // A polite goodbye lets the firmware drop the client at once (docs/protocols/meshtastic.md 2.2).
        if (link && this.lifecycle.phase === 'online') await link.write(encodeToRadioFrame({ disconnect: true })).catch(() => {});
        this.#goOffline('the interface stopped');
      },
    });
  }

  async send(frame: OutboundFrame): Promise<SendResult> {
    if (frame.payload.length > DATA_PAYLOAD_LEN) {
      return { ok: false, retryable: false, error: `ERR_MESHTASTIC_TOO_LARGE: ${frame.payload.length} bytes is more than the ${DATA_PAYLOAD_LEN} bytes one Meshtastic packet carries (add a split or truncate transform)` };
    }
    const link = this.#link;
    const device = this.#known;
    if (this.lifecycle.phase !== 'online' || !link || !device) {
      return { ok: false, retryable: true, error: `ERR_MESHTASTIC_OFFLINE: the radio is not online (${this.lifecycle.phase}${this.lifecycle.state.lastError ? `: ${this.lifecycle.state.lastError}` : ''})` };
    }
    const id = this.#packetId();
    const built = outboundPacket(frame, { id, channel: this.settings.channel, hopLimit: this.settings.hop_limit ?? device.lora?.hop_limit ?? 3 });
    if (!built.ok) return this.#failed({ ok: false, retryable: false, error: built.error });
    if (!(await this.#queue.room(this.ctx.clock, this.settings.ack_timeout_s * 1000))) {
      return { ok: false, retryable: true, notSent: true, error: 'ERR_MESHTASTIC_QUEUE_FULL: the device\'s transmit queue stayed full; nothing was sent' };
    }
    if (this.#link !== link) {
      this.#queue.giveBack();
      return this.#failed({ ok: false, retryable: true, error: 'ERR_MESHTASTIC_OFFLINE: the link went down before the packet was written' });
    }
    // Registered before writing: an acknowledgement can arrive before write() resolves.
    const ack = this.#acks.wait(id, built.broadcast, this.settings.ack_timeout_s * 1000, built.broadcast ? null : (built.packet.to ?? null));
    try {
      await this.#write(link, { packet: built.packet });
    } catch (error) {
      this.#acks.cancel(id);
      return this.#failed({ ok: false, retryable: true, error: `ERR_MESHTASTIC_WRITE: ${(error as Error).message}` });
    }
    this.#counters.sent++;
    const result = await ack;
    if (result.ok) {
      this.#counters.acked++;
      return { ok: true, meta: { ...result.meta, packet_id: id } };
    }
    return this.#failed(result);
  }

  stats(): Record<string, unknown> {
    return {
      phase: this.lifecycle.phase,
      device: this.lifecycle.device,
      link: this.#link?.description ?? null,
      ...deviceView(this.#known),
      channel_utilization_pct: this.#ownMetrics.channel_utilization_pct ?? null,
      air_util_tx_pct: this.#ownMetrics.air_util_tx_pct ?? null,
      queue_free: this.#queue.free,
      queue_max: this.#queue.max,
      awaiting_ack: this.#acks.size,
      config_error: this.#configError,
      board_time: this.#boardTime,
      ...this.#counters,
      failed_by_reason: { ...this.#failedByReason },
    };
  }

  deviceProblems(section: DeviceSection, value: Record<string, unknown>, part?: string): string[] {
    return this.#known ? boardProblems(boardOf(this.#known.metadata, this.#known.regionPresets), section, value, part) : [];
  }

  // ---- bring-up ---------------------------------------------------------------------------

  async #session(link: Link): Promise<void> {
    this.#link = link;
    this.#decoder = new StreamDecoder();
    this.#queue.reset();
    link.onData((chunk) => this.#onChunk(link, chunk));
    link.onClose((reason) => {
      if (this.#link !== link) return;
      this.#rebooted?.();
      this.#goOffline(reason);
      this.#link = null;
    });
    for (let round = 0; ; round++) {
      const device = await this.#handshakeOn(link);
      const changes = this.#changesFor(device);
      if (changes.length === 0) break;
      if (round > 0) throw new DeviceError('ERR_MESHTASTIC_CONFIG', 'the device rebooted twice without taking its settings', { retryable: true });
      await this.#push(link, changes);
      // Over serial the device reboots and keeps the port: hand-shake again on the same link.
      // Over TCP the connection drops, and the supervisor reconnects.
    }
    // Resolving hands over to the supervisor, which reports `online` (shared/links/driver-lifecycle.ts).
  }

  async #handshakeOn(link: Link): Promise<DeviceState> {
    this.lifecycle.enter('waking', `link open (${link.description}); waking the device`);
    await link.write(WAKE_BYTES);
    await this.#sleep(this.timing.wakeMs);
    const handshake = new Handshake(newNonce(this.#random));
    this.#handshake = handshake;
    this.lifecycle.enter('handshake', `asking for the device's state (nonce ${handshake.nonce})`);
    const done = new Promise<void>((resolve) => (this.#handshakeDone = resolve));
    await this.#write(link, { want_config_id: handshake.nonce });
    const timeoutS = this.settings.handshake_timeout_s;
    const finished = await this.#within(done, timeoutS * 1000);
    this.#handshakeDone = null;
    this.#handshake = null;
    if (!finished) throw new DeviceError('ERR_MESHTASTIC_HANDSHAKE', `the device did not finish sending its state within ${timeoutS} s`, { retryable: true });
    const device = handshake.state;
    this.#known = device;
    if (device.ownNode?.device_metrics) this.#ownMetrics = deviceMetricsOf(device.ownNode.device_metrics);
    if (device.nodes.length > 0) this.ctx.events.nodes(device.nodes);
    if (device.lora) this.ctx.deviceConfig.report('radio', radioReport(device.lora));
    if (device.owner) this.ctx.deviceConfig.report('owner', ownerReport(device.owner));
    this.ctx.log.info('meshtastic.handshake', {
      node: device.myInfo?.my_node_num !== undefined ? formatNodeId(device.myInfo.my_node_num) : null,
      firmware: device.metadata?.firmware_version ?? null, nodes: device.nodes.length, channels: device.channels.length,
    });
    return device;
  }

  /** What differs between the bridge's stored sections and the device, after a push verified. */
  #changesFor(device: DeviceState): Change[] {
    const desired = (s: DeviceSection) => this.ctx.deviceConfig.desired(s);
    const radio = desired('radio');
    const owner = desired('owner');
    // What was stored while no board was bound may be more than this one takes (a long name
    // it would cut, a module its build left out): not pushed, and a config problem on the
    // interface until the configuration changes.
    const board = boardOf(device.metadata, device.regionPresets);
    const { problems, ownerFits, modules, kept } = fitBoard(board, owner, this.#pendingModules);
    this.#pendingModules = kept; // kept for a board that has those modules
    if (problems.length > 0) this.ctx.log.warn('meshtastic.config_beyond_board', { firmware: board.firmware, problems });
    this.#beyondBoard = problems.length > 0 ? `ERR_MESHTASTIC_CONFIG: not pushed to the board: ${problems.join('; ')}` : null;
    const pending = Object.keys(modules).length > 0 ? moduleChanges(modules, device) : null;
    const wanted = (field: string) => {
      const [section, ...rest] = field.split('.');
      return rest.reduce<unknown>((v, k) => (v as Record<string, unknown> | null | undefined)?.[k], desired(section as DeviceSection));
    };
    // A value the device refused before is not pushed again while it is what is wanted.
    const changes = [radio && loraChange(radio, device.lora), ownerFits && owner && ownerChange(owner, device.owner), pending]
      .filter((c): c is Change => !!c)
      .filter((c) => !c.fields.some((f) => this.#refused.has(f) && this.#refused.get(f) === wanted(f)));
    if (this.#pushed) {
      // We pushed and the device rebooted: what still differs was not taken. Say so, and do
      // not push again (a device that refuses a value would reboot forever).
      const refused = changes.flatMap((c) => c.fields).filter((f) => this.#pushed!.includes(f));
      this.#pushed = null;
      if (refused.length > 0) {
        for (const f of refused) this.#refused.set(f, wanted(f));
        this.#configError = `ERR_MESHTASTIC_CONFIG: the device did not take ${refused.join(', ')}`;
        this.ctx.log.warn('meshtastic.config_refused', { fields: refused });
        return [];
      }
    }
    if (this.#refused.size === 0) this.#configError = this.#beyondBoard;
    return changes;
  }

  /** One edit session: begin, the changes, commit; then the device reboots. */
  async #push(link: Link, changes: Change[]): Promise<void> {
    const fields = changes.flatMap((c) => c.fields);
    this.lifecycle.enter('configuring', `the device differs from the configuration in ${fields.join(', ')}; applying (the device reboots once)`);
    this.#pushed = fields;
    this.#counters.config_pushes++;
    const rebooted = new Promise<void>((resolve) => (this.#rebooted = resolve));
    for (const message of editSession(changes)) await this.#write(link, { packet: this.#adminPacket(message) });
    const didReboot = await this.#within(rebooted, this.timing.rebootMs);
    this.#rebooted = null;
    if (!didReboot) throw new DeviceError('ERR_MESHTASTIC_CONFIG', `the device did not reboot within ${this.timing.rebootMs / 1000} s after its settings were committed`, { retryable: true });
    if (this.#link !== link) throw new DeviceError('ERR_MESHTASTIC_REBOOT', 'the device is rebooting to apply its settings', { retryable: true });
  }

  /** An AdminMessage to the own node (docs/protocols/meshtastic.md 2.7: a local client needs no session key). */
  #adminPacket(message: AdminMessage): MeshPacket {
    const own = this.#known?.myInfo?.my_node_num ?? 0;
    return { to: own, id: this.#packetId(), decoded: { portnum: PORT_NUM.ADMIN_APP, payload: encodeAdminMessage(message), bitfield: BITFIELD.IS_AUTOMATION }, channel: 0, hop_limit: 0 };
  }

  /** A committed change of a section: applied now when online (the device reboots once), else
   *  after the next handshake. For modules, only the fields of the module that changed, and of
   *  those only what the operator changed: the section's defaults must not undo board settings. */
  #configChanged(section: DeviceSection, value: Record<string, unknown>, part?: string): void {
    for (const f of [...this.#refused.keys()]) if (f.startsWith(`${section}.`)) this.#refused.delete(f);
    if (section === 'modules') {
      const seen = this.#modulesSeen;
      this.#modulesSeen = value as Record<string, Record<string, unknown>>;
      const now = (part ? { [part]: value[part] } : value) as Record<string, Record<string, unknown>>;
      for (const [module, fields] of Object.entries(now)) {
        for (const [field, v] of Object.entries(fields ?? {})) {
          if (seen?.[module] && JSON.stringify(seen[module][field]) === JSON.stringify(v)) continue;
          (this.#pendingModules[module] ??= {})[field] = v;
        }
      }
    }
    const link = this.#link;
    const device = this.#known;
    if (this.lifecycle.phase !== 'online' || !link || !device) return; // the next handshake applies it
    const desired = this.ctx.deviceConfig.desired(section);
    if (!desired) return;
    // What this board would not take (an import is not checked by the API) is not pushed.
    const fit = fitBoard(boardOf(device.metadata, device.regionPresets), section === 'owner' ? desired : null, section === 'modules' ? this.#pendingModules : {});
    if (fit.problems.length > 0) this.ctx.log.warn('meshtastic.config_beyond_board', { problems: fit.problems });
    const change = section === 'radio' ? loraChange(desired, device.lora) : section === 'owner' ? (fit.ownerFits ? ownerChange(desired, device.owner) : null) : moduleChanges(fit.modules, device);
    if (section === 'modules') this.#pendingModules = fit.kept;
    if (!change) return;
    this.#push(link, [change]).then(
      () => this.lifecycle.fail('rebooted to apply its settings'),
      (error: Error) => this.lifecycle.fail(error.message),
    );
  }

  // ---- online -----------------------------------------------------------------------------

  #goOnline(): void {
    const link = this.#link;
    if (!link) return;
    this.#armHeartbeat(link);
    this.#armSilence();
  }

  #goOffline(reason: string): void {
    this.#acks.failAll(`ERR_MESHTASTIC_OFFLINE: ${reason}`);
    this.#queue.reset();
    this.#timers = clearTimers(this.ctx.clock, this.#timers);
  }

  #armHeartbeat(link: Link): void {
    this.#timers.heartbeat = this.ctx.clock.setTimeout(() => {
      this.#timers.heartbeat = undefined;
      if (this.#link !== link || this.lifecycle.phase !== 'online') return;
      this.#write(link, { heartbeat: {} }).catch(() => {});
      this.#armHeartbeat(link);
    }, this.settings.heartbeat_s * 1000);
  }

  /** Recent firmware answers every heartbeat: silence past two of them means the device is gone. */
  #armSilence(): void {
    if (this.#timers.silence) this.ctx.clock.clearTimeout(this.#timers.silence);
    const ms = (2 * this.settings.heartbeat_s + 30) * 1000;
    this.#timers.silence = this.ctx.clock.setTimeout(() => {
      this.#timers.silence = undefined;
      if (this.lifecycle.phase === 'online') this.lifecycle.fail(`the device has been silent for ${ms / 1000} s`);
    }, ms);
  }

  // ---- receiving --------------------------------------------------------------------------

  #onChunk(link: Link, chunk: Uint8Array): void {
    if (this.#link !== link) return;
    if (this.lifecycle.phase === 'online') this.#armSilence();
    for (const event of this.#decoder.push(chunk)) {
      if (event.type === 'frame') {
        const decoded = decodeFromRadio(event.payload);
        if (decoded.ok) this.#onFromRadio(decoded.value);
        else this.#counters.undecodable++;
      } else if (event.type === 'text') this.#debugLine(event.line);
      else this.#counters.oversize_frames++;
    }
  }

  #onFromRadio(m: FromRadio): void {
    if (this.#handshake) {
      if (this.#handshake.take(m)) this.#handshakeDone?.();
      if (fromRadioVariant(m) !== 'packet' && fromRadioVariant(m) !== 'queueStatus' && fromRadioVariant(m) !== 'rebooted') return;
    }
    switch (fromRadioVariant(m)) {
      case 'packet':
        this.#onPacket(m.packet!);
        break;
      case 'queueStatus': {
        const q = m.queueStatus!;
        this.#queue.status(q.free ?? 0, q.maxlen ?? 0);
        if (q.res && q.mesh_packet_id) this.#acks.refuse(q.mesh_packet_id, q.res);
        break;
      }
      case 'rebooted':
        this.#counters.reboots++;
        if (this.#rebooted) this.#rebooted();
        else if (this.lifecycle.phase === 'online') this.lifecycle.fail('the device rebooted');
        break;
      case 'log_record':
        this.#debugLine(m.log_record!.message ?? '');
        break;
      default:
        break;
    }
  }

  #onPacket(p: MeshPacket): void {
    // A record the board replays from its node database is history: the node table takes it,
    // routing never sees it, and it says nothing about when the node was heard.
    const replayed = replayedRecord(p);
    if (replayed) {
      this.#counters.replayed++;
      const report = replayReport(p, replayed);
      if (report) this.ctx.events.nodes([report]);
      return;
    }
    this.#boardTimeFrom(p);
    const result = inboundPacket(p);
    const own = this.#known?.myInfo?.my_node_num;
    if (result.type === 'routing') {
      const decoded = decodeRouting(p.decoded?.payload ?? new Uint8Array(0));
      const requestId = p.decoded?.request_id;
      if (decoded.ok && requestId) this.#acks.settle(requestId, p.from ?? 0, decoded.value.error_reason ?? 0);
      return;
    }
    if (result.type === 'admin') return;
    if (result.type === 'skip') {
      if (result.reason === 'encrypted') this.#counters.encrypted++;
      return;
    }
    // The own node's packets (its telemetry) describe this radio; they are not mesh traffic.
    if (own !== undefined && p.from === own) {
      const metrics = result.nodes[0]?.device_metrics;
      if (metrics) this.#ownMetrics = metrics;
      return;
    }
    this.#counters.received++;
    if (result.unknownPort) this.#counters.unknown_ports++;
    this.ctx.events.nodes(result.nodes);
    this.ctx.events.receive(result.frame);
  }

  /** Tells the bridge the board's time from a packet heard live (liveBoardTime), only once
   *  the handshake is over: what a 2.8 board sends until config_complete_id, and the history
   *  it replays, is not its time now. Told again when it has moved on by a minute or more,
   *  not for every packet. */
  #boardTimeFrom(p: MeshPacket): void {
    if (this.#handshake || this.lifecycle.phase !== 'online') return;
    const ms = liveBoardTime(p);
    if (ms === null || ms < this.#boardTimeMs + 60_000) return;
    this.#boardTimeMs = ms;
    this.#boardTime = { time: new Date(ms).toISOString(), read_at: new Date(this.ctx.clock.now()).toISOString() };
    this.ctx.events.time?.(ms);
  }

  #debugLine(line: string): void {
    this.#counters.debug_lines++;
    if (this.#textLines === 0) {
      this.#timers.textWindow = this.ctx.clock.setTimeout(() => {
        this.#timers.textWindow = undefined;
        if (this.#textLines > TEXT_LINES_PER_MINUTE) this.ctx.log.debug('meshtastic.device_log_suppressed', { lines: this.#textLines - TEXT_LINES_PER_MINUTE });
        this.#textLines = 0;
      }, 60_000);
    }
    if (++this.#textLines <= TEXT_LINES_PER_MINUTE) this.ctx.log.debug('meshtastic.device_log', { line });
  }

  // ---- helpers ----------------------------------------------------------------------------

  #write(link: Link, message: ToRadio): Promise<void> {
    return link.write(encodeToRadioFrame(message));
  }

  #failed(result: SendResult & { ok: false }): SendResult {
    this.#counters.failed++;
    const reason = /^(ERR_[A-Z0-9_]+)/.exec(result.error)?.[1] ?? 'OTHER';
    this.#failedByReason[reason] = (this.#failedByReason[reason] ?? 0) + 1;
    return result;
  }

  /** Fresh, non-zero packet ids: the firmware drops an id it saw recently. */
  #packetId(): number {
    return (Math.floor(this.#random() * 0xffff_fffe) >>> 0) + 1;
  }

  #sleep(ms: number): Promise<void> {
    return sleep(this.ctx.clock, ms);
  }

  /** True when `p` settled within `ms`. */
  #within(p: Promise<void>, ms: number): Promise<boolean> {
    return settlesWithin(this.ctx.clock, p, ms);
  }
}

export function createMeshtasticBearer(ctx: BearerContext, options: MeshtasticDriverOptions): Bearer {
  return new MeshtasticBearer(ctx, options);
}
