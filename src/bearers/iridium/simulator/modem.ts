import { EventEmitter } from 'node:events';
import { systemClock, type Clock, type TimerHandle } from '../../../lib/clock.ts';
import { msstmCount, sbdChecksum } from '../sbd.ts';
import { COMMANDS, ERROR, info, ok, parseCommand, status, type Reply } from './commands.ts';
import { IridiumGateway, MAX_MO_BYTES, sessionSucceeded, type IridiumSubscriber, type MoRecord } from './gateway.ts';
import type { HostedDevice } from '../../shared/simulators/pty.ts';
import type { IridiumModemFaults, IridiumModemIdentity, IridiumModemOptions, IridiumSettings, SessionReport } from './modem-types.ts';

// An Iridium SBD modem (9602, 9603, RockBLOCK) as the host sees it: the modem side of the SBD
// AT commands (docs/protocols/iridium-sbd.md), without a radio. Transport-free: a transport
// (serve.ts: TCP or a pty; link.ts: sim://) feeds host bytes to fromHost() and writes what
// the modem sends. Sessions go through an IridiumGateway (gateway.ts), which holds the MT
// queues and scripts the sky. The command handlers are in commands.ts; this file holds the
// state, the byte-level discipline (echo, the SBDWB binary read, the SBDRB binary answer),
// the ring alert and the faults.
//
// Choices where the docs are silent:
//  - MOMSN: a session reports the MOMSN it used, and success moves it on; a failed session
//    reports the current one unchanged (ISU: "incremented each time an SBD session is
//    successfully completed"; +SBDS shows the next one). It survives reset() (ISU: kept across
//    power cycles). MTMSN is the gateway's, per IMEI, first 1.
//  - A failed session answers MT status 2, MTMSN 0, length 0, queued 0 (iridium-sbd.md 3.7:
//    what a real 9603 usually reports); a session with nothing for the modem answers MT
//    status 0 and MTMSN 0.
//  - Every session, failed or not, empties the MT buffer first (iridium-sbd.md 3.4).
//  - Ring alerts need a registration (iridium-sbd.md 3.5): a successful session or
//    AT+SBDREG since power-up. A registered modem sets the +SBDSX ring-alert flag for each MT
//    message queued (until the next successful session) and, with AT+SBDMTA=1, says SBDRING.
//    <msg waiting> is the MT queued count of the last successful session or registration.

export type { IridiumModemFaults, IridiumModemIdentity, IridiumModemOptions, IridiumSettings, SessionReport } from './modem-types.ts';

const CR = 0x0d;
const LF = 0x0a;
/** Longer command lines answer ERROR. */
const MAX_LINE = 512;

export class IridiumModem extends EventEmitter implements HostedDevice, IridiumSubscriber {
  readonly name: string;
  readonly clock: Clock;
  readonly gateway: IridiumGateway;
  readonly identity: IridiumModemIdentity;
  readonly faults: IridiumModemFaults;
  readonly sessionMs: number;
  readonly csqDelayMs: number;
  readonly writeTimeoutMs: number;
  readonly counters = {
    commands: 0, unknownCommands: 0, longLines: 0, sessions: 0, failedSessions: 0, writes: 0, checksumErrors: 0,
    sizeErrors: 0, writeTimeouts: 0, moSent: 0, duplicateMo: 0, mtReceived: 0, mtRead: 0, rings: 0, droppedUrcs: 0, resets: 0,
  };
  settings: IridiumSettings;
  /** The MOMSN the next session uses (wraps at 65535). */
  momsn: number;
  mo: Uint8Array | null = null;
  mt: Uint8Array | null = null;
  /** The MTMSN of the message in the MT buffer. */
  mtmsn = 0;
  registered = false;
  ringAlertFlag = false;
  msgWaiting = 0;

  #host: ((bytes: Uint8Array) => void) | null = null;
  #line: number[] = [];
  #longLine = false;
  #afterCr = false;
  /** AT+SBDWB reading its bytes. */
  #binary: { need: number; got: number[] } | null = null;
  /** AT+SBDWT (READY form) reading its text, up to CR. */
  #text: number[] | null = null;
  /** Waiting for a session, a CSQ reading or a slow answer: host bytes wait in #pending. */
  #busy = false;
  #pending: number[] = [];
  #timer: TimerHandle | null = null;
  #urcs: string[] = [];
  /** The MO buffer went in a successful session since it was written. */
  #moSent = false;
  #closed = false;

  constructor(options: IridiumModemOptions = {}) {
    super();
    this.clock = options.clock ?? options.gateway?.clock ?? systemClock;
    this.gateway = options.gateway ?? new IridiumGateway({ clock: this.clock });
    const made = options.imei === undefined || options.serial === undefined ? this.gateway.nextIdentity() : null;
    this.identity = {
      manufacturer: 'Iridium',
      model: 'IRIDIUM 9600 Family SBD Transceiver',
      revision: ['Call Processor Version: TA16005', 'Modem DSP Version: 1.7 svn: 2358', 'DBB Version: 0x0001 (ASIC)', 'RFA Version: 0x0007 (SRFA2)', 'NVM Version: KVS', 'Hardware Version: BOOT07d2/9603NrevDB/04/RX', 'BOOT Version: TA16005 (rev exp)'],
      imei: options.imei ?? made!.imei,
      serial: options.serial ?? made!.serial,
    };
    if (!/^\d{15}$/.test(this.identity.imei)) throw new RangeError(`IMEI: expected 15 digits, got ${JSON.stringify(this.identity.imei)}`);
    if (!/^\d{7}$/.test(this.identity.serial)) throw new RangeError(`serial: expected 7 digits, got ${JSON.stringify(this.identity.serial)}`);
    this.name = options.name ?? `iridium-${this.identity.serial}`;
    this.faults = { answerDelayMs: 0, unresponsive: false, corruptNextMtChecksum: false, ...options.faults };
    this.sessionMs = options.sessionMs ?? 0;
    this.csqDelayMs = options.csqDelayMs ?? 0;
    this.writeTimeoutMs = options.writeTimeoutMs ?? 60_000;
    this.momsn = (options.momsn ?? 0) & 0xffff;
    this.settings = this.defaultSettings();
    this.gateway.attach(this);
  }

  get imei(): string {
    return this.identity.imei;
  }

  get serial(): string {
    return this.identity.serial;
  }

  defaultSettings(): IridiumSettings {
    return { echo: true, mta: 0, flowControl: 3, dtr: 2 };
  }

  get hostAttached(): boolean {
    return this.#host !== null;
  }

  attachHost(write: (bytes: Uint8Array) => void): void {
    this.#host = write;
    this.#line = [];
    this.#longLine = false;
  }

  detachHost(): void {
    this.#host = null;
    this.#line = [];
    this.#longLine = false;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancelTimer();
    this.#host = null;
    this.gateway.detach(this);
  }

  // ---- faults ----

  /** Bytes that are no AT answer (line noise, a brown-out), then a line that never ends. */
  sendGarbage(length = 12): void {
    const bytes: number[] = [];
    for (let i = 0; i < length; i++) bytes.push(Math.random() < 0.2 ? [0x00, 0x1b, 0x07][i % 3] : 0x80 + Math.floor(Math.random() * 0x80));
    this.#write(Uint8Array.from([...bytes, ...Buffer.from('\r\n+SBDI', 'latin1')]));
  }

  /** A power cycle: whatever was being answered is abandoned, buffers and settings go,
   *  the registration too. The MOMSN stays (ISU). Says nothing when it comes back. */
  reset(): void {
    if (this.#closed) return;
    this.counters.resets++;
    this.#cancelTimer();
    this.#binary = null;
    this.#text = null;
    this.#busy = false;
    this.#pending = [];
    this.#line = [];
    this.#longLine = false;
    this.#afterCr = false;
    this.#urcs = [];
    this.settings = this.defaultSettings();
    this.mo = null;
    this.#moSent = false;
    this.mt = null;
    this.mtmsn = 0;
    this.registered = false;
    this.ringAlertFlag = false;
    this.msgWaiting = 0;
    this.emit('reset');
  }

  // ---- host bytes ----

  fromHost(chunk: Uint8Array): void {
    if (this.#closed || this.faults.unresponsive) return;
    for (const byte of chunk) {
      if (this.#busy) this.#pending.push(byte);
      else if (this.#binary) this.#binaryByte(byte);
      else if (this.#text) this.#textByte(byte);
      else this.#commandByte(byte);
    }
  }

  #commandByte(byte: number): void {
    // iridium-sbd.md 3.1: commands end with CR; an LF right after it is dropped, unechoed.
    if (byte === LF && this.#afterCr) {
      this.#afterCr = false;
      return;
    }
    this.#afterCr = byte === CR;
    if (this.settings.echo) this.#write(Uint8Array.of(byte));
    if (byte !== CR) {
      if (this.#line.length < MAX_LINE) this.#line.push(byte);
      else this.#longLine = true;
      return;
    }
    const raw = Buffer.from(this.#line).toString('latin1');
    const long = this.#longLine;
    this.#line = [];
    this.#longLine = false;
    if (long) {
      this.counters.longLines++;
      return this.#reply(ERROR);
    }
    this.#commandLine(raw);
  }

  #commandLine(raw: string): void {
    const at = raw.toUpperCase().indexOf('AT');
    // V.250 5.2.1: what comes before "AT" is ignored, and a line without it (an empty line,
    // line noise) gets no answer at all.
    if (at < 0) return;
    const line = raw.slice(at);
    this.counters.commands++;
    this.emit('command', line);
    const command = parseCommand(line.slice(2));
    const handler = command ? COMMANDS[command.name] : undefined;
    if (!command || !handler) {
      this.counters.unknownCommands++;
      this.emit('unknown-command', command?.name ?? line);
      return this.#reply(ERROR);
    }
    this.#reply(handler(this, command));
  }

  #reply(r: Reply): void {
    if ('after' in r) {
      // Busy from now to the answer, even a prompt one: a ring alert raised meanwhile (by
      // AT+SBDREG, or an RB message to itself) comes after the answer.
      this.#busy = true;
      if (r.after <= 0) return this.#reply(r.then());
      this.#setTimer(() => this.#reply(r.then()), r.after);
      return;
    }
    if ('binary' in r) {
      // iridium-sbd.md 3.7: READY is exactly `READY\r\n`, and then the bytes are not echoed.
      this.#awaitInput(() => (this.#binary = { need: r.binary + 2, got: [] }), () => (this.#binary = null));
      return;
    }
    if ('textInput' in r) {
      // ISU +SBDWT: READY, then the text up to CR (at most 340 bytes); `0`, or `1` (no OK)
      // after 60 s without the CR.
      this.#awaitInput(() => (this.#text = []), () => (this.#text = null));
      return;
    }
    this.#final(r);
  }

  /** READY, then the host's data (`start` readies for it). iridium-sbd.md 3.2: status 1 after
   *  60 s without all of it (`abandon` drops what came), and no OK after it. */
  #awaitInput(start: () => void, abandon: () => void): void {
    this.#busy = false;
    this.#writeText('READY\r\n');
    start();
    this.#setTimer(() => {
      abandon();
      this.counters.writeTimeouts++;
      this.#final({ text: info('1') });
    }, this.writeTimeoutMs);
  }

  #textByte(byte: number): void {
    const t = this.#text!;
    if (byte !== CR) {
      t.push(byte);
      return;
    }
    this.#cancelTimer();
    this.#text = null;
    this.#afterCr = true; // an LF after the CR is dropped, as after a command line
    // Our choice where the ISU is silent: an empty or too long text answers ERROR and leaves
    // the MO buffer as it was.
    if (t.length < 1 || t.length > MAX_MO_BYTES) {
      this.counters.sizeErrors++;
      return this.#final(ERROR);
    }
    this.writeMo(Uint8Array.from(t));
    this.#final(status(0));
  }

  #binaryByte(byte: number): void {
    const b = this.#binary!;
    b.got.push(byte);
    if (b.got.length < b.need) return;
    this.#cancelTimer();
    this.#binary = null;
    const payload = Uint8Array.from(b.got.slice(0, -2));
    const sent = (b.got[b.need - 2] << 8) | b.got[b.need - 1];
    // iridium-sbd.md 3.2: the low 16 bits of the sum, high byte first; 2 = wrong, buffer kept.
    if (sent !== sbdChecksum(payload)) {
      this.counters.checksumErrors++;
      return this.#final(status(2));
    }
    this.writeMo(payload);
    this.#final(status(0));
  }

  /** Writes the final part of an answer, after answerDelayMs when slow; then what waited. */
  #final(r: { text: string } | { bytes: Uint8Array }): void {
    const done = () => {
      this.#timer = null;
      if ('text' in r) this.#writeText(r.text);
      else this.#write(r.bytes);
      this.#busy = false;
      this.#flushUrcs();
      const input = this.#pending;
      this.#pending = [];
      if (input.length > 0) this.fromHost(Uint8Array.from(input));
    };
    if (this.faults.answerDelayMs > 0) {
      this.#busy = true;
      this.#setTimer(done, this.faults.answerDelayMs);
    } else done();
  }

  #setTimer(fn: () => void, ms: number): void {
    this.#cancelTimer();
    this.#timer = this.clock.setTimeout(() => {
      this.#timer = null;
      if (!this.#closed) fn();
    }, ms);
  }

  #cancelTimer(): void {
    if (this.#timer) this.clock.clearTimeout(this.#timer);
    this.#timer = null;
  }

  // ---- buffers and sessions (called by commands.ts) ----

  writeMo(bytes: Uint8Array): void {
    this.mo = bytes;
    this.#moSent = false;
    this.counters.writes++;
  }

  /** AT+SBDD<n>: 0 MO, 1 MT, 2 both (iridium-sbd.md 3.4). */
  clearBuffers(which: number): void {
    if (which !== 1) {
      this.mo = null;
      this.#moSent = false;
    }
    if (which !== 0) this.mt = null;
  }

  /** AT+SBDRB: `<length u16 BE><payload><checksum u16 BE>`, then OK (iridium-sbd.md 3.4). */
  readMtBinary(): Uint8Array {
    const payload = this.mt ?? new Uint8Array(0);
    let sum = sbdChecksum(payload);
    if (this.faults.corruptNextMtChecksum) {
      this.faults.corruptNextMtChecksum = false;
      sum ^= 0xffff;
    }
    const out = new Uint8Array(payload.length + 4);
    out[0] = payload.length >> 8;
    out[1] = payload.length & 0xff;
    out.set(payload, 2);
    out[payload.length + 2] = sum >> 8;
    out[payload.length + 3] = sum & 0xff;
    this.counters.mtRead++;
    this.emit('mt-read', payload);
    return Uint8Array.from([...out, ...Buffer.from(info('OK'), 'latin1')]);
  }

  /** +SBDSX fields: MO flag, MOMSN, MT flag, MTMSN (-1 when empty), RA flag, msg waiting. */
  statusFields(): number[] {
    return [this.mo ? 1 : 0, this.momsn, this.mt ? 1 : 0, this.mt ? this.mtmsn : -1, this.ringAlertFlag ? 1 : 0, this.msgWaiting];
  }

  /** -MSSTM: 90 ms ticks of the era in force on this modem's clock (the network's time), 8
   *  hex digits; "no network service" while the sky has no signal, as a modem that has not
   *  heard the network since power-up answers. */
  systemTime(): string {
    if (this.gateway.bars === 0) return 'no network service';
    return msstmCount(this.clock.now()).toString(16).padStart(8, '0');
  }

  /** AT+SBDIX / AT+SBDIXA: the outcome is decided now, the answer comes when it ends. */
  startSession(command: 'SBDIX' | 'SBDIXA'): Reply {
    const outcome = this.gateway.nextOutcome();
    return { after: outcome.ms ?? this.sessionMs, then: () => this.#session(command, outcome.mo) };
  }

  #session(command: 'SBDIX' | 'SBDIXA', mo: number): Reply {
    this.counters.sessions++;
    this.gateway.countSession(mo);
    this.mt = null; // iridium-sbd.md 3.4: every session overwrites the MT buffer
    let report: SessionReport;
    if (!sessionSucceeded(mo)) {
      this.counters.failedSessions++;
      report = { command, mo, momsn: this.momsn, mt: 2, mtmsn: 0, mtLength: 0, mtQueued: 0, moLength: this.mo?.length ?? null };
    } else {
      const momsn = this.momsn;
      this.momsn = (momsn + 1) & 0xffff; // iridium-sbd.md 3.3: wraps at 65535
      this.registered = true;
      this.ringAlertFlag = false;
      if (this.mo) this.#sendMo(momsn);
      const mt = this.gateway.deliverMt(this.imei);
      if (mt) {
        this.mt = mt.message;
        this.mtmsn = mt.mtmsn;
        this.counters.mtReceived++;
      }
      this.msgWaiting = this.gateway.queued(this.imei);
      report = { command, mo, momsn, mt: mt ? 1 : 0, mtmsn: mt?.mtmsn ?? 0, mtLength: mt?.message.length ?? 0, mtQueued: this.msgWaiting, moLength: this.mo?.length ?? null };
    }
    this.emit('session', report);
    const fields = [report.mo, report.momsn, report.mt, report.mtmsn, report.mtLength, report.mtQueued];
    return ok(`+SBDIX: ${fields.join(', ')}`);
  }

  #sendMo(momsn: number): void {
    // iridium-sbd.md 3.2 and 3.7: the buffer stays after the session, so a session without a
    // new write or AT+SBDD0 sends (and bills) the same bytes again. The gateway gets them.
    const duplicate = this.#moSent;
    this.#moSent = true;
    this.counters.moSent++;
    if (duplicate) this.counters.duplicateMo++;
    const record: MoRecord = this.gateway.receiveMo(this, this.mo!, momsn, duplicate);
    this.emit('mo', record);
  }

  /** AT+SBDREG once its time is up: registered unless there is no signal. */
  register(): Reply {
    if (this.gateway.bars === 0) return ok(`+SBDREG:${this.registered ? 2 : 0},32`);
    this.registered = true;
    this.msgWaiting = this.gateway.queued(this.imei);
    // The gateway rings a freshly registered modem that has mail (ISU, SBD ring alert).
    if (this.msgWaiting > 0) this.ringAlert();
    return ok('+SBDREG:2,0');
  }

  // ---- ring alerts ----

  ringAlert(): void {
    if (this.#closed || !this.registered) return; // iridium-sbd.md 3.5: needs a registration
    this.ringAlertFlag = true;
    if (this.settings.mta !== 1) return;
    this.counters.rings++;
    this.emit('ring');
    if (this.faults.unresponsive || this.#host === null) {
      this.counters.droppedUrcs++;
      return;
    }
    this.#urcs.push('SBDRING');
    this.#flushUrcs();
  }

  #flushUrcs(): void {
    // Never inside an answer: after it (a session, the SBDWB bytes, a slow answer).
    if (this.#busy || this.#binary || this.#text) return;
    for (const t of this.#urcs.splice(0)) this.#writeText(info(t));
  }

  #writeText(text: string): void {
    this.#write(Buffer.from(text, 'latin1'));
  }

  #write(bytes: Uint8Array): void {
    if (this.#closed || this.faults.unresponsive || !this.#host) return;
    this.#host(bytes);
  }
}
