import type { Bearer, BearerContext, OutboundFrame, SendResult } from '../bearer.ts';
import { type DriverLifecycle } from '../shared/links/driver-lifecycle.ts';
import { SupervisedDriver, type SupervisedDriverOptions } from '../shared/links/supervised-driver.ts';
import type { Link } from '../shared/links/link.ts';
import {
  type Contact, decodeRadioMessage, ERR_CODE, FrameDecoder, hex, isPush, MAX_TEXT_LEN, OUT_PATH_UNKNOWN, type RadioMessage,
  type ScopeChoice, TXT_TYPE, utf8,
} from './codec/index.ts';
import { AckBook } from './acks.ts';
import { CommandChannel, CommandTimeout } from './commands.ts';
import { addressOf, contactReport, inboundMessage, isAddress } from './inbound.ts';
import { ackHex, describe, errName, only, refused, textOf } from './answers.ts';
import { FloodScopes, scopeSetting, splitAddress } from './scope.ts';
import { MeshCoreSettings } from './settings.ts';

// The MeshCore bearer (interface kind `meshcore`; docs/protocols/meshcore.md). The device
// supervisor opens the link and owns the opening/online/backoff cycle; on every fresh link
// this driver starts the companion session (6.3): CMD_APP_START (detecting), CMD_DEVICE_QUERY,
// CMD_SET_DEVICE_TIME (configuring), the contacts and channels, then drains the messages that
// waited on the radio (verifying), and only then is online. One command is in flight at a
// time (commands.ts); a command the radio does not answer in time drops the link. A direct
// message is delivered only when SEND_CONFIRMED carries the tag its SENT announced (6.5);
// a channel message when the radio takes it (no ack exists for those). The interface's flood
// scope is put on the radio while configuring; a delivery may name another (scope.ts).

export type MeshCorePhase = 'closed' | 'opening' | 'detecting' | 'configuring' | 'verifying' | 'online' | 'backoff';

export interface MeshCoreTiming {
  backoffInitialMs: number;
  backoffMaxMs: number;
}

export const DEFAULT_MESHCORE_TIMING: MeshCoreTiming = { backoffInitialMs: 1_000, backoffMaxMs: 60_000 };

/** The protocol version we speak: from 3 the radio queues messages with their SNR (6.6). */
const APP_TARGET_VERSION = 3;
/** Deliveries whose attempt count is remembered (for the attempt byte and the path reset). */
const ATTEMPTS_KEPT = 1000;

export type MeshCoreDriverOptions = SupervisedDriverOptions<MeshCoreTiming>;

type Failure = SendResult & { ok: false };

export class MeshCoreBearer extends SupervisedDriver<MeshCorePhase, MeshCoreSettings, MeshCoreTiming, MeshCoreDriverOptions> implements Bearer {
  readonly kind = 'meshcore';
  /** MAX_TEXT_LEN: the longest direct text (a channel text also carries "<name>: "). */
  readonly mtu = MAX_TEXT_LEN;
  /** Acks take seconds: several direct messages may wait for theirs (the radio's
   *  expected-ack table holds 8). Commands still go one at a time. */
  readonly concurrency = 4;
  readonly maxSendMs: number;
  protected readonly lifecycle: DriverLifecycle<MeshCorePhase>;
  #link: Link | null = null;
  #decoder = new FrameDecoder('from-radio');
  #commands: CommandChannel | null = null;
  #self: Extract<RadioMessage, { type: 'SELF_INFO' }> | null = null;
  #info: Extract<RadioMessage, { type: 'DEVICE_INFO' }> | null = null;
  readonly #contacts = new Map<string, Contact>();
  #channels: Extract<RadioMessage, { type: 'CHANNEL_INFO' }>[] = [];
  #contactsSince = 0;
  readonly #acks: AckBook;
  readonly #scopes: FloodScopes;
  readonly #attempts = new Map<string, { attempt: number; timestamp: number }>();
  #draining: Promise<void> | null = null;
  #drainAgain = false;
  #refreshing = false;
  /** A contact changed while a refresh ran: read again when it ends. */
  #refreshAgain = false;
  /** Direct sends waiting for their ack, by what the radio's ack code is made of (see #sendDirect). */
  readonly #awaitingAck = new Set<string>();
  readonly #counters = {
    received: 0, sent_direct: 0, sent_channel: 0, acked: 0, failed: 0, ack_timeouts: 0, path_resets: 0, store_failures: 0,
    undecodable: 0, unknown_codes: 0, oversize_frames: 0, command_timeouts: 0,
  };
  readonly #failedByReason: Record<string, number> = {};

  constructor(ctx: BearerContext, options: MeshCoreDriverOptions) {
    super(ctx, options, { timing: DEFAULT_MESHCORE_TIMING, settings: MeshCoreSettings });
    this.#acks = new AckBook(ctx.clock);
    this.#scopes = new FloodScopes(scopeSetting(this.settings), ctx.log);
    // A send waits for its turn among the commands, its SENT, then the ack.
    this.maxSendMs = this.settings.ack_timeout_max_s * 1000 + 4 * this.settings.command_timeout_s * 1000 + 10_000;
    this.lifecycle = this.supervise({
      session: (link) => this.#session(link),
      opening: 'opening the device',
      online: { why: 'session started' },
      wentOnline: () => {
        if (this.#drainAgain) this.#drain();
      },
      stopping: () => {
        this.#commands?.close('the interface stopped');
        this.#acks.giveUpAll();
      },
    });
  }

  override async stop(): Promise<void> {
    await super.stop();
    this.#link = null;
  }

  async send(frame: OutboundFrame): Promise<SendResult> {
    const address = splitAddress(frame.to);
    if ('problem' in address) return this.#failed({ ok: false, retryable: false, error: `ERR_MESHCORE_SCOPE: ${address.problem}` });
    if (frame.payload.length > MAX_TEXT_LEN) {
      return this.#failed({ ok: false, retryable: false, error: `ERR_MESHCORE_TOO_LARGE: ${frame.payload.length} bytes is more than the ${MAX_TEXT_LEN} bytes one MeshCore text carries (add a split transform)` });
    }
    const to = address.to.trim().toLowerCase();
    const broadcast = to === 'broadcast' || to === '';
    // Text goes as a text message; other bytes only as a channel datagram (6.6): the firmware
    // ends a text at its first NUL, and direct messages carry text only.
    const text = frame.kind === 'text' || frame.text !== null ? (frame.text ?? textOf(frame.payload)) : null;
    if (text !== null && utf8(text).length > MAX_TEXT_LEN) {
      return this.#failed({ ok: false, retryable: false, error: `ERR_MESHCORE_TOO_LARGE: ${utf8(text).length} bytes of text is more than the ${MAX_TEXT_LEN} bytes one MeshCore text carries (add a split transform)` });
    }
    if (text === null && !broadcast) {
      return this.#failed({ ok: false, retryable: false, error: 'ERR_MESHCORE_NOT_TEXT: a MeshCore direct message carries UTF-8 text without NUL bytes; binary data can only go to "broadcast" (a channel datagram)' });
    }
    if (!broadcast && !isAddress(to)) {
      return this.#failed({ ok: false, retryable: false, error: `ERR_MESHCORE_ADDRESS: "${frame.to}" is no MeshCore address; expected the hex of a public-key prefix (12 digits or more) or "broadcast"` });
    }
    const commands = this.#commands;
    if (this.lifecycle.phase !== 'online' || !commands) {
      return { ok: false, retryable: true, error: `ERR_MESHCORE_OFFLINE: the radio is not online (${this.lifecycle.phase}${this.lifecycle.state.lastError ? `: ${this.lifecycle.state.lastError}` : ''})` };
    }
    const channel = frame.channel ?? this.settings.channel;
    const scope = address.scope;
    if (text === null) return this.#sendData(commands, channel, frame.payload, scope);
    if (broadcast) return this.#sendChannel(commands, channel, text, scope);
    return this.#sendDirect(commands, frame, to, text, scope);
  }

  stats(): Record<string, unknown> {
    const s = this.#self;
    const d = this.#info;
    return {
      phase: this.lifecycle.phase,
      device: this.lifecycle.device,
      link: this.#link?.description ?? null,
      public_key: s ? hex(s.publicKey) : null,
      address: s ? addressOf(s.publicKey) : null,
      name: s?.name ?? null,
      model: d?.model ?? null,
      firmware_version: d?.version ?? null,
      firmware_build: d?.buildDate ?? null,
      protocol_version: d?.firmwareVersion ?? null,
      max_contacts: d?.maxContacts ?? null,
      max_channels: d?.maxChannels ?? null,
      radio_freq_mhz: s ? s.radioFreq / 1000 : null,
      radio_bw_khz: s ? s.radioBw / 1000 : null,
      radio_sf: s?.radioSf ?? null,
      radio_cr: s?.radioCr ?? null,
      tx_power_dbm: s?.txPower ?? null,
      contacts: this.#contacts.size,
      channels: this.#channels.filter((c) => c.name !== '').map((c) => ({ index: c.index, name: c.name })),
      awaiting_ack: this.#acks.size,
      ...this.#scopes.stats(),
      ...this.#counters,
      unmatched_acks: this.#acks.unmatched,
      unexpected_answers: this.#commands?.unexpected ?? 0,
      skipped_bytes: this.#decoder.counts.skippedBytes,
      failed_by_reason: { ...this.#failedByReason },
    };
  }

  // ---- bring-up -----------------------------------------------------------------------------

  async #session(link: Link): Promise<void> {
    this.#link = link;
    this.#decoder = new FrameDecoder('from-radio');
    const commands = new CommandChannel(this.ctx.clock, (bytes) => link.write(bytes), this.settings.command_timeout_s * 1000);
    this.#commands = commands;
    link.onData((chunk) => this.#onChunk(link, chunk));
    link.onClose((reason) => {
      if (this.#link !== link) return;
      commands.close(`the link closed: ${reason}`);
      this.#link = null;
      this.#commands = null;
    });

    this.lifecycle.enter('detecting', `link open (${link.description}); starting the companion session`);
    this.#self = only(await commands.run({ type: 'APP_START', appName: this.settings.app_name }), 'SELF_INFO', 'CMD_APP_START');
    const info = await commands.run({ type: 'DEVICE_QUERY', appTargetVersion: APP_TARGET_VERSION });
    this.#info = info.at(-1)?.type === 'DEVICE_INFO' ? (info.at(-1) as Extract<RadioMessage, { type: 'DEVICE_INFO' }>) : null;

    this.lifecycle.enter('configuring', 'setting the radio\'s clock and flood scope');
    const now = Math.floor(this.ctx.clock.now() / 1000);
    const time = (await commands.run({ type: 'SET_DEVICE_TIME', time: now })).at(-1);
    // ERR_CODE_ILLEGAL_ARG: the radio's clock is ahead of ours and never goes back (6.3).
    if (time?.type === 'ERR') this.ctx.log.warn('meshcore.clock_ahead', { our_time: now, error: errName(time.code) });
    await this.#scopes.configure(commands, this.#info?.firmwareVersion ?? 0);

    this.lifecycle.enter('verifying', 'reading contacts and channels, then messages that waited on the radio');
    await this.#readContacts(commands, 0);
    this.#channels = [];
    for (let i = 0; i < (this.#info?.maxChannels ?? 8); i++) {
      const answer = (await commands.run({ type: 'GET_CHANNEL', index: i })).at(-1);
      if (answer?.type !== 'CHANNEL_INFO') break;
      this.#channels.push(answer);
    }
    await this.#drainWith(commands);
    this.ctx.log.info('meshcore.session', {
      name: this.#self.name, address: addressOf(this.#self.publicKey), model: this.#info?.model ?? null, firmware: this.#info?.version ?? null,
      contacts: this.#contacts.size, channels: this.#channels.filter((c) => c.name !== '').length,
    });
    // Resolving hands over to the supervisor, which reports `online` (shared/links/driver-lifecycle.ts).
  }

  async #readContacts(commands: CommandChannel, since: number): Promise<void> {
    const answer = await commands.run(since > 0 ? { type: 'GET_CONTACTS', since } : { type: 'GET_CONTACTS' });
    const end = answer.at(-1);
    if (end?.type !== 'END_OF_CONTACTS') throw refused('ERR_MESHCORE_CONTACTS', 'CMD_GET_CONTACTS', end);
    const contacts = answer.flatMap((m) => (m.type === 'CONTACT' ? [m.contact] : []));
    for (const c of contacts) this.#contacts.set(addressOf(c.publicKey), c);
    this.#contactsSince = Math.max(this.#contactsSince, end.mostRecentLastmod);
    if (contacts.length > 0) this.ctx.events.nodes(contacts.map(contactReport));
  }

  // ---- receiving ----------------------------------------------------------------------------

  #onChunk(link: Link, chunk: Uint8Array): void {
    if (this.#link !== link) return;
    for (const event of this.#decoder.push(chunk)) {
      if (event.type === 'frame') this.#onMessage(decodeRadioMessage(event.body));
      else this.#counters.oversize_frames++;
    }
  }

  #onMessage(m: RadioMessage): void {
    if (m.type === 'malformed') this.#counters.undecodable++;
    if (m.type === 'unknown') this.#counters.unknown_codes++;
    if (!isPush(m)) {
      this.#commands?.answer(m);
      return;
    }
    switch (m.type) {
      case 'SEND_CONFIRMED':
        return this.#acks.confirm(m.ackCode, m.roundTripMs);
      case 'MSG_WAITING':
        return this.#drain();
      case 'ADVERT':
      case 'PATH_UPDATED':
        return this.#refreshContacts();
      case 'NEW_ADVERT':
        // Manual-add mode: the radio did not add it; the node database still learns of it.
        this.ctx.events.nodes([contactReport(m.contact)]);
        return;
      default:
        return; // unknown pushes are counted above
    }
  }

  /** SYNC_NEXT_MESSAGE until NO_MORE_MESSAGES, once at a time; a MSG_WAITING meanwhile
   *  drains again afterwards. */
  #drain(): void {
    const commands = this.#commands;
    if (this.lifecycle.phase !== 'online' || !commands) {
      this.#drainAgain = true; // the session's own drain, or the next one online, takes it
      return;
    }
    if (this.#draining) {
      this.#drainAgain = true;
      return;
    }
    this.#drainAgain = false;
    this.#draining = this.#drainWith(commands)
      .catch((error: Error) => this.#commandFailed(error))
      .finally(() => {
        this.#draining = null;
        if (this.#drainAgain) this.#drain();
      });
  }

  async #drainWith(commands: CommandChannel): Promise<void> {
    this.#drainAgain = false;
    for (;;) {
      const m = (await commands.run({ type: 'SYNC_NEXT_MESSAGE' })).at(-1);
      if (!m || m.type === 'NO_MORE_MESSAGES' || m.type === 'ERR') return;
      const frame = inboundMessage(m);
      if (!frame) {
        this.ctx.log.debug('meshcore.message_skipped', { what: describe(m) });
        continue;
      }
      this.#counters.received++;
      // Taken off the radio already: a store failure loses it (the radio cannot take it back),
      // so the next message is not held up waiting for this one's commit (BearerEvents.receive).
      const lost = (stored: boolean | void) => {
        if (stored !== false) return;
        this.#counters.store_failures++;
        this.ctx.log.error('meshcore.message_lost', { from: frame.from, reason: 'the message could not be stored after the radio handed it over' });
      };
      const stored = this.ctx.events.receive(frame, { watchOnly: true });
      if (typeof stored === 'object') void stored.then(lost);
      else lost(stored);
    }
  }

  #refreshContacts(): void {
    const commands = this.#commands;
    if (this.lifecycle.phase !== 'online' || !commands) return;
    if (this.#refreshing) {
      this.#refreshAgain = true;
      return;
    }
    this.#refreshing = true;
    this.#refreshAgain = false;
    // lastmod counts whole seconds: a contact written in the same second as the newest one
    // read last time must not be skipped, so ask from one second before.
    this.#readContacts(commands, Math.max(0, this.#contactsSince - 1))
      .catch((error: Error) => this.#commandFailed(error))
      .finally(() => {
        this.#refreshing = false;
        if (this.#refreshAgain) this.#refreshContacts();
      });
  }

  #commandFailed(error: Error): void {
    if (error instanceof CommandTimeout) {
      this.#counters.command_timeouts++;
      this.lifecycle.fail(error.message);
    }
  }

  // ---- sending ------------------------------------------------------------------------------

  async #sendChannel(commands: CommandChannel, index: number, text: string, scope: ScopeChoice | null): Promise<SendResult> {
    // sendGroupMessage sends "<name>: <text>" and cuts it at MAX_TEXT_LEN (6.5): refuse
    // rather than let the radio cut.
    const total = utf8(`${this.#self?.name ?? ''}: ${text}`).length;
    if (total > MAX_TEXT_LEN) {
      return this.#failed({ ok: false, retryable: false, error: `ERR_MESHCORE_TOO_LARGE: with the sender name in front, a channel text of ${total} bytes is more than ${MAX_TEXT_LEN} bytes (add a split transform)` });
    }
    const answer = await this.#run(commands, { type: 'SEND_CHANNEL_TXT_MSG', txtType: TXT_TYPE.PLAIN, channelIndex: index, timestamp: this.#now(), text }, scope);
    if (!Array.isArray(answer)) return answer;
    const last = answer.at(-1)!;
    if (last.type === 'ERR') {
      if (last.code === ERR_CODE.NOT_FOUND) return this.#failed({ ok: false, retryable: false, error: `ERR_MESHCORE_NO_CHANNEL: the radio has no channel ${index}` });
      return this.#failed(this.#radioError(last.code, 'CMD_SEND_CHANNEL_TXT_MSG'));
    }
    this.#counters.sent_channel++;
    // No ack exists for channel messages: delivered means the radio took it (6.5).
    return { ok: true, meta: { channel: index, acknowledged: false, ...this.#scopes.meta(scope) } };
  }

  async #sendData(commands: CommandChannel, index: number, payload: Uint8Array, scope: ScopeChoice | null): Promise<SendResult> {
    const answer = await this.#run(commands, {
      type: 'SEND_CHANNEL_DATA', channelIndex: index, pathLen: OUT_PATH_UNKNOWN, path: new Uint8Array(0), dataType: this.settings.data_type, payload,
    }, scope);
    if (!Array.isArray(answer)) return answer;
    const last = answer.at(-1)!;
    if (last.type === 'ERR') {
      if (last.code === ERR_CODE.NOT_FOUND) return this.#failed({ ok: false, retryable: false, error: `ERR_MESHCORE_NO_CHANNEL: the radio has no channel ${index}` });
      if (last.code === ERR_CODE.UNSUPPORTED_CMD) return this.#failed({ ok: false, retryable: false, error: 'ERR_MESHCORE_NO_DATAGRAMS: this firmware has no channel datagrams (CMD_SEND_CHANNEL_DATA)' });
      return this.#failed(this.#radioError(last.code, 'CMD_SEND_CHANNEL_DATA'));
    }
    this.#counters.sent_channel++;
    return { ok: true, meta: { channel: index, acknowledged: false, data_type: this.settings.data_type, ...this.#scopes.meta(scope) } };
  }

  async #sendDirect(commands: CommandChannel, frame: OutboundFrame, to: string, text: string, scope: ScopeChoice | null): Promise<SendResult> {
    const contact = [...this.#contacts.values()].find((c) => hex(c.publicKey).startsWith(to));
    if (!contact) {
      return this.#failed({ ok: false, retryable: true, error: `ERR_MESHCORE_UNKNOWN_CONTACT: the radio knows no contact ${to} (it becomes one when its advert is heard)` });
    }
    // By delivery and text: the parts of a split delivery share the delivery id.
    const key = `${frame.deliveryId}:${text}`;
    const previous = this.#attempts.get(key);
    const attempt = previous ? previous.attempt + 1 : 0;
    // The same timestamp on every attempt: the receiver then takes a repeat for the same
    // message (same sender, time and text).
    let timestamp = previous?.timestamp ?? this.#now();
    // The radio's ack code is a hash of timestamp, attempt, text and our own key, not of the
    // recipient (6.5): one text to two contacts in the same second would expect one code. A
    // first attempt takes the next free second instead.
    const ackKey = (t: number) => `${t}:${Math.min(attempt, 3)}:${text}`;
    if (!previous) while (this.#awaitingAck.has(ackKey(timestamp))) timestamp++;
    this.#remember(key, { attempt, timestamp });
    // Reserved from now (sends wait their turn for the radio) until the ack or its timeout.
    this.#awaitingAck.add(ackKey(timestamp));
    try {
      return await this.#sendText(commands, contact, to, text, attempt, timestamp, scope);
    } finally {
      this.#awaitingAck.delete(ackKey(timestamp));
    }
  }

  async #sendText(commands: CommandChannel, contact: Contact, to: string, text: string, attempt: number, timestamp: number, scope: ScopeChoice | null): Promise<SendResult> {
    // After the second failed attempt, flood the last one (the reference clients do, 6.5).
    if (attempt >= 2 && (attempt === 2 || contact.outPathLen !== OUT_PATH_UNKNOWN)) {
      const reset = await this.#run(commands, { type: 'RESET_PATH', publicKey: contact.publicKey });
      if (!Array.isArray(reset)) return reset;
      if (reset.at(-1)?.type === 'ERR') {
        // Sent anyway along whatever path the radio has: flooding is a hope, not a condition.
        this.ctx.log.warn('meshcore.path_reset_refused', { to: addressOf(contact.publicKey), error: describe(reset.at(-1)) });
      } else {
        this.#counters.path_resets++;
        contact.outPathLen = OUT_PATH_UNKNOWN;
        this.ctx.log.info('meshcore.path_reset', { to: addressOf(contact.publicKey), attempt: attempt + 1 });
      }
    }
    const answer = await this.#run(commands, {
      type: 'SEND_TXT_MSG', txtType: TXT_TYPE.PLAIN, attempt: Math.min(attempt, 3), timestamp, pubKeyPrefix: contact.publicKey.subarray(0, 6), text,
    }, scope);
    if (!Array.isArray(answer)) return answer;
    const sent = answer.at(-1)!;
    if (sent.type === 'ERR') {
      if (sent.code === ERR_CODE.NOT_FOUND) return this.#failed({ ok: false, retryable: true, error: `ERR_MESHCORE_UNKNOWN_CONTACT: the radio no longer knows contact ${to}` });
      return this.#failed(this.#radioError(sent.code, 'CMD_SEND_TXT_MSG'));
    }
    if (sent.type !== 'SENT') return this.#failed({ ok: false, retryable: true, error: `ERR_MESHCORE_PROTOCOL: the radio answered CMD_SEND_TXT_MSG with ${describe(sent)}` });
    this.#counters.sent_direct++;
    const waitMs = Math.min(Math.ceil((sent.suggestedTimeoutMs * this.settings.ack_margin_pct) / 100), this.settings.ack_timeout_max_s * 1000);
    const roundTrip = await this.#acks.wait(sent.expectedAck, waitMs);
    const route = sent.flood ? 'flood' : 'direct';
    if (roundTrip === null) {
      this.#counters.ack_timeouts++;
      return this.#failed({ ok: false, retryable: true, error: `ERR_MESHCORE_NO_ACK: no ack ${ackHex(sent.expectedAck)} from ${to} within ${waitMs} ms (attempt ${attempt + 1}, ${route})` });
    }
    this.#counters.acked++;
    // The attempt count stays: a retry of a split delivery sends this part again, with its timestamp.
    return { ok: true, meta: { ack: ackHex(sent.expectedAck), round_trip_ms: roundTrip, route, attempt: attempt + 1, ...(sent.flood ? this.#scopes.meta(scope) : {}) } };
  }

  /** Runs a command for a send (a send's own in its flood scope): its answers, or the failure
   *  to return. */
  async #run(commands: CommandChannel, c: Parameters<CommandChannel['run']>[0], scope?: ScopeChoice | null): Promise<RadioMessage[] | Failure> {
    try {
      const answer = scope === undefined ? await commands.run(c) : await this.#scopes.run(commands, scope, c);
      return typeof answer === 'string' ? this.#failed({ ok: false, retryable: false, error: answer }) : answer;
    } catch (error) {
      this.#commandFailed(error as Error);
      return this.#failed({ ok: false, retryable: true, error: `ERR_MESHCORE_OFFLINE: ${(error as Error).message}` });
    }
  }

  #radioError(code: number | undefined, command: string): Failure {
    // TABLE_FULL: the radio's send queue is full, retry later (6.4); the size cases that can
    // never succeed were refused before sending.
    const retryable = code === ERR_CODE.TABLE_FULL || code === ERR_CODE.BAD_STATE;
    return { ok: false, retryable, error: `ERR_MESHCORE_RADIO: the radio refused ${command} with ${errName(code)}` };
  }

  #remember(deliveryId: string, entry: { attempt: number; timestamp: number }): void {
    this.#attempts.delete(deliveryId);
    this.#attempts.set(deliveryId, entry);
    if (this.#attempts.size > ATTEMPTS_KEPT) this.#attempts.delete(this.#attempts.keys().next().value!);
  }

  // ---- helpers ------------------------------------------------------------------------------

  #now(): number {
    return Math.floor(this.ctx.clock.now() / 1000);
  }

  #failed(result: Failure): Failure {
    this.#counters.failed++;
    const reason = /^(ERR_[A-Z0-9_]+)/.exec(result.error)?.[1] ?? 'OTHER';
    this.#failedByReason[reason] = (this.#failedByReason[reason] ?? 0) + 1;
    return result;
  }

}

export function createMeshCoreBearer(ctx: BearerContext, options: MeshCoreDriverOptions): Bearer {
  return new MeshCoreBearer(ctx, options);
}
