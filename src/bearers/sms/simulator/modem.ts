import { EventEmitter } from 'node:events';
import { systemClock, type Clock, type TimerHandle } from '../../../lib/clock.ts';
import { CTRL_Z, ESC } from '../../shared/codec/at.ts';
import { octetsToHex } from '../codec/octets.ts';
import { encodeSmsc } from '../codec/address.ts';
import { COMMANDS, completeBody, parseCommandLine, type Answer, type PromptKind } from './commands.ts';
import { finalLine, type Final } from './errors.ts';
import type { NetworkMessage, SmsNetwork, SmsSubscriber } from './network.ts';
import { SmsNetwork as Network } from './network.ts';
import { SmsStorage } from './storage.ts';
import { cdsText, cmtText } from './text-mode.ts';

// A cellular modem as the host sees it: the modem side of 3GPP TS 27.007 / 27.005 (AT commands
// and SMS; docs/protocols/sms.md section 4), without a radio. Transport-free: a transport
// (serve.ts: TCP or a pty; link.ts: sim://) feeds host bytes to fromHost() and writes what the
// modem sends. Messages travel through an SmsNetwork (network.ts). The command handlers are in
// commands.ts; this file holds the state, the byte-level line discipline (echo, the `> `
// prompt, Ctrl-Z / ESC), unsolicited result codes and the faults.

export interface SmsModemIdentity {
  manufacturer: string;
  model: string;
  revision: string;
  /** 15 digits, Luhn check digit last. */
  imei: string;
  imsi: string;
}

export interface SmsModemFaults {
  /** Every final answer comes this late (a busy or 2G modem). */
  answerDelayMs: number;
  /** New messages are stored, but no +CMTI / +CDSI / +CDS / +CMT tells the host (a status
   *  report that would have come as +CDS is stored instead). */
  dropUrcs: boolean;
  /** The modem neither echoes nor answers; the radio side keeps working (messages are stored). */
  unresponsive: boolean;
  /** AT+CNMI parameter lists ("2,1,2,1,0") answered with +CMS ERROR: 303, to test fallbacks. */
  refuseCnmi: string[];
  /** The next `remaining` sends answer +CMS ERROR: <code> instead of going out. */
  failSends: { code: number; remaining: number } | null;
}

/** What AT+CNMI holds (27.005 3.4.1). */
export interface Cnmi {
  mode: number;
  mt: number;
  bm: number;
  ds: number;
  bfr: number;
}

/** Settings a reset or ATZ forgets (27.007 / 27.005 defaults). */
export interface ModemSettings {
  echo: boolean;
  cmee: number;
  /** 0 PDU, 1 text (AT+CMGF). */
  cmgf: number;
  cscs: string;
  cnmi: Cnmi;
  csdh: number;
  /** AT+CSMP: first octet, validity, PID, DCS of text-mode sends. */
  csmp: [number, number, number, number];
  /** AT+CREG=<n>: 0 no URC, 1 +CREG: <stat>, 2 with location. */
  cregUrc: number;
}

export type SimState = 'ready' | 'pin' | 'puk' | 'blocked';

export interface SmsModemOptions {
  name?: string;
  clock?: Clock;
  /** The operator; a private one when none is given. */
  network?: SmsNetwork;
  /** The SIM's number (E.164); the network assigns +1555000000N when none is given. */
  number?: string;
  identity?: Partial<SmsModemIdentity>;
  /** The SIM asks for this PIN at power-up (AT+CPIN?: SIM PIN); null/absent = no PIN. */
  pin?: string | null;
  puk?: string;
  /** AT+CREG <stat>: 1 home (default), 5 roaming, 0 not registered, 2 searching, 3 denied. */
  registration?: number;
  /** AT+CSQ <rssi> 0-31 (default 20). */
  signal?: number;
  /** Slots in "SM" (default 30) and the first index (default 1). */
  storageCapacity?: number;
  firstIndex?: number;
  /** From AT+CFUN=1,1 (or reset()) to RDY (default 200 ms). */
  resetDelayMs?: number;
  /** AT+CNMI after power-up; default 0,0,0,0,0 (27.005: store, tell nothing). */
  cnmi?: Partial<Cnmi>;
  faults?: Partial<SmsModemFaults>;
}

export interface SmsModemCounters {
  commands: number;
  unknownCommands: number;
  sent: number;
  sendErrors: number;
  received: number;
  statusReports: number;
  urcs: number;
  droppedUrcs: number;
  resets: number;
}

const MAX_LINE = 1024;
/** Longest body after the prompt: a 176-octet PDU in hex is 352 characters. */
const MAX_BODY = 1024;

export class SmsModem extends EventEmitter implements SmsSubscriber {
  readonly name: string;
  readonly clock: Clock;
  readonly network: SmsNetwork;
  readonly number: string;
  readonly identity: SmsModemIdentity;
  readonly storage: SmsStorage;
  readonly faults: SmsModemFaults;
  readonly counters: SmsModemCounters = { commands: 0, unknownCommands: 0, sent: 0, sendErrors: 0, received: 0, statusReports: 0, urcs: 0, droppedUrcs: 0, resets: 0 };
  /** Command lines the host sent, oldest first (the last 1000). */
  readonly hostLog: { at: number; line: string }[] = [];
  settings: ModemSettings;
  /** AT+CFUN: 1 full, 0 minimum, 4 radio off. */
  cfun = 1;
  registration: number;
  signal: number;
  smsc: string;
  readonly sim: { state: SimState; pin: string | null; puk: string; pinLeft: number; pukLeft: number };
  /** The next TP-MR (27.005 +CMGS: <mr>), mod 256. */
  nextMr = 0;

  readonly #defaultCnmi: Cnmi;
  readonly #resetDelayMs: number;
  #host: ((bytes: Uint8Array) => void) | null = null;
  #line: number[] = [];
  #prompt: { kind: PromptKind; body: number[] } | null = null;
  #busy = false;
  #pendingInput: number[] = [];
  #urcQueue: string[] = [];
  /** Indications held while AT+CNMI mode is 0 (27.005 3.4.1). */
  #held: string[] = [];
  #resetting: TimerHandle | null = null;
  #closed = false;

  constructor(options: SmsModemOptions = {}) {
    super();
    this.name = options.name ?? 'sms-sim';
    this.clock = options.clock ?? options.network?.clock ?? systemClock;
    this.network = options.network ?? new Network({ clock: this.clock });
    this.number = this.network.attach(this, options.number);
    this.identity = {
      manufacturer: 'Fieldbridge',
      model: 'SMS Simulator',
      revision: 'FBSIM-1.0',
      imei: imeiFor(this.number),
      imsi: `00101${this.number.replace(/\D/g, '').slice(-10).padStart(10, '0')}`,
      ...options.identity,
    };
    this.storage = new SmsStorage(options.storageCapacity ?? 30, options.firstIndex ?? 1);
    this.faults = { answerDelayMs: 0, dropUrcs: false, unresponsive: false, refuseCnmi: [], failSends: null, ...options.faults };
    this.#defaultCnmi = { mode: 0, mt: 0, bm: 0, ds: 0, bfr: 0, ...options.cnmi };
    this.#resetDelayMs = options.resetDelayMs ?? 200;
    this.settings = this.defaultSettings();
    this.registration = options.registration ?? 1;
    this.signal = options.signal ?? 20;
    this.smsc = this.network.smsc;
    const pin = options.pin ?? null;
    this.sim = { state: pin === null ? 'ready' : 'pin', pin, puk: options.puk ?? '12345678', pinLeft: 3, pukLeft: 10 };
  }

  defaultSettings(): ModemSettings {
    return { echo: true, cmee: 0, cmgf: 0, cscs: 'GSM', cnmi: { ...this.#defaultCnmi }, csdh: 0, csmp: [17, 167, 0, 0], cregUrc: 0 };
  }

  /** The network can hand this modem messages: radio on, SIM unlocked, registered. */
  get reachable(): boolean {
    return !this.#closed && this.#resetting === null && this.cfun === 1 && this.sim.state === 'ready' && this.registered;
  }

  /** AT+CREG <stat> 1 (home) or 5 (roaming). */
  get registered(): boolean {
    return this.registration === 1 || this.registration === 5;
  }

  /** What AT+CREG? answers: nothing before the SIM is unlocked or with the radio off. */
  get cregStat(): number {
    return this.cfun === 1 && this.sim.state === 'ready' ? this.registration : 0;
  }

  get hostAttached(): boolean {
    return this.#host !== null;
  }

  attachHost(write: (bytes: Uint8Array) => void): void {
    this.#host = write;
    this.#line = [];
    this.#prompt = null;
  }

  detachHost(): void {
    this.#host = null;
    this.#line = [];
    this.#prompt = null;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#resetting) this.clock.clearTimeout(this.#resetting);
    this.#resetting = null;
    this.#host = null;
    this.network.detach(this);
  }

  // ---- faults ----

  /** Registration changes (0 = no network: sends answer +CMS ERROR: 331). */
  setRegistration(stat: number): void {
    this.registration = stat;
    this.#cregUrc();
    this.#flushNetwork();
  }

  /** The next `count` sends answer +CMS ERROR: <code>. */
  failNextSends(code: number, count = 1): void {
    this.faults.failSends = count > 0 ? { code, remaining: count } : null;
  }

  /** Bytes that are no AT answer (line noise, a boot loader). */
  sendGarbage(length = 16): void {
    const bytes = new Uint8Array(length);
    for (let i = 0; i < length; i++) bytes[i] = [0x00, 0xff, 0xfe, 0x80, 0x7f, 0x1b][i % 6] ^ (i * 37 & 0x7f);
    this.#write(bytes);
  }

  /** A reset: the modem goes quiet, forgets echo, mode, CNMI and the other settings, locks
   *  the SIM again (when it has a PIN), keeps its stored messages, and says RDY. */
  reset(): void {
    if (this.#closed) return;
    this.counters.resets++;
    this.#line = [];
    this.#prompt = null;
    this.#busy = false;
    this.#pendingInput = [];
    this.#urcQueue = [];
    this.#held = [];
    this.settings = this.defaultSettings();
    this.cfun = 1;
    if (this.sim.pin !== null && this.sim.state === 'ready') this.sim.state = 'pin';
    if (this.#resetting) this.clock.clearTimeout(this.#resetting);
    this.emit('reset');
    this.#resetting = this.clock.setTimeout(() => {
      this.#resetting = null;
      // What Quectel and SIMCom modules say after power-up; hosts treat them as URCs.
      this.#writeText(`\r\nRDY\r\n\r\n+CFUN: 1\r\n\r\n+CPIN: ${cpinName(this.sim.state)}\r\n`);
      this.emit('ready');
      this.#flushNetwork();
    }, this.#resetDelayMs);
  }

  get resetting(): boolean {
    return this.#resetting !== null;
  }

  // ---- host bytes ----

  fromHost(chunk: Uint8Array): void {
    if (this.#closed || this.faults.unresponsive || this.#resetting) return;
    for (const byte of chunk) {
      if (this.#busy) {
        this.#pendingInput.push(byte);
        continue;
      }
      if (this.#prompt) this.#promptByte(byte);
      else this.#commandByte(byte);
    }
  }

  #commandByte(byte: number): void {
    if (this.settings.echo) this.#write(Uint8Array.of(byte));
    if (byte === 0x0d) {
      const line = Buffer.from(this.#line).toString('latin1');
      this.#line = [];
      this.#commandLine(line);
    } else if (byte === 0x0a) {
      // LF after CR: nothing (27.007 uses S3 = CR to end a line).
    } else if (byte === 0x08 || byte === 0x7f) this.#line.pop();
    else if (this.#line.length < MAX_LINE) this.#line.push(byte);
  }

  #commandLine(raw: string): void {
    const at = raw.toUpperCase().indexOf('AT');
    if (at < 0) return; // V.250 5.2.1: characters before "AT" are ignored, a line without it too
    const line = raw.slice(at);
    this.hostLog.push({ at: this.clock.now(), line });
    if (this.hostLog.length > 1000) this.hostLog.shift();
    this.emit('command', line);
    const commands = parseCommandLine(line.slice(2));
    if (commands === null) return this.#answer({ lines: [], final: 'ERROR' });
    const lines: string[] = [];
    const afters: (() => void)[] = [];
    const after = () => afters.forEach((f) => f());
    for (const [i, c] of commands.entries()) {
      this.counters.commands++;
      const handler = COMMANDS[c.name];
      if (!handler) {
        this.counters.unknownCommands++;
        this.emit('unknown-command', c.name);
        return this.#answer({ lines, final: 'ERROR', after });
      }
      const a: Answer = handler(this, c);
      lines.push(...a.lines);
      if (a.prompt && i === commands.length - 1) {
        this.#prompt = { kind: a.prompt, body: [] };
        this.#writeText('\r\n> ');
        return;
      }
      if (a.after) afters.push(a.after);
      if (a.final !== 'OK' || a.prompt) return this.#answer({ lines, final: a.prompt ? 'ERROR' : a.final, after });
    }
    this.#answer({ lines, final: 'OK', after });
  }

  #promptByte(byte: number): void {
    const prompt = this.#prompt!;
    if (byte === CTRL_Z) {
      this.#prompt = null;
      if (this.settings.echo) this.#write(Uint8Array.of(byte));
      this.#answer(completeBody(this, prompt.kind, Buffer.from(prompt.body).toString('latin1')));
      return;
    }
    if (byte === ESC) {
      // 27.005 3.5.1: ESC quits without sending.
      this.#prompt = null;
      this.#answer({ lines: [], final: 'OK' });
      return;
    }
    if (this.settings.echo) this.#write(Uint8Array.of(byte));
    if (byte === 0x0d && prompt.kind.mode === 'text') {
      // Text mode: CR is a line break in the message, and the prompt comes again.
      prompt.body.push(0x0a);
      this.#writeText('\r\n> ');
      return;
    }
    if (byte === 0x0d || byte === 0x0a) return;
    if (prompt.body.length >= MAX_BODY) {
      this.#prompt = null;
      this.#answer({ lines: [], final: { cms: prompt.kind.mode === 'pdu' ? 304 : 305 } });
      return;
    }
    prompt.body.push(byte);
  }

  /** Writes the information lines and the final result, after answerDelayMs when slow. */
  #answer(a: Answer): void {
    const final: Final = a.final;
    const text = (a.lines.length > 0 ? `\r\n${a.lines.join('\r\n')}\r\n` : '') + `\r\n${finalLine(final, this.settings.cmee)}\r\n`;
    const done = () => {
      this.#writeText(text);
      a.after?.();
      this.#busy = false;
      this.#flushUrcs();
      const input = this.#pendingInput;
      this.#pendingInput = [];
      if (input.length > 0) this.fromHost(Uint8Array.from(input));
    };
    if (this.faults.answerDelayMs > 0) {
      this.#busy = true;
      this.clock.setTimeout(() => {
        if (!this.#closed && this.#resetting === null) done();
      }, this.faults.answerDelayMs);
    } else done();
  }

  // ---- network side ----

  receive(message: NetworkMessage): boolean {
    if (!this.reachable) return false;
    const pdu = octetsToHex(encodeSmsc(message.smsc)) + octetsToHex(message.tpdu);
    const { cnmi, cmgf } = this.settings;
    if (message.kind === 'status-report') {
      this.counters.statusReports++;
      if (cnmi.ds === 1 && !this.faults.dropUrcs) {
        this.#indication(cmgf === 0 ? `+CDS: ${message.tpdu.length}\r\n${pdu}` : cdsText(pdu));
        this.emit('status-report', message);
        return true;
      }
      const stored = this.storage.store({ stat: 0, kind: 'status-report', smsc: message.smsc, tpdu: message.tpdu });
      if (!stored) return false;
      if (cnmi.ds === 2) this.#indication(`+CDSI: "${this.storage.name}",${stored.index}`);
      this.emit('status-report', message, stored.index);
      return true;
    }
    this.counters.received++;
    // mt=2 (and 3, for class 3): routed to the host as +CMT, not stored (27.005 3.4.1).
    if (cnmi.mt === 2 && !this.faults.dropUrcs && this.#host !== null) {
      this.#indication(cmgf === 0 ? `+CMT: ,${message.tpdu.length}\r\n${pdu}` : cmtText(pdu, this.settings));
      this.emit('received', message);
      return true;
    }
    const stored = this.storage.store({ stat: 0, kind: 'deliver', smsc: message.smsc, tpdu: message.tpdu });
    if (!stored) return false;
    if (cnmi.mt === 1 || cnmi.mt === 2 || cnmi.mt === 3) this.#indication(`+CMTI: "${this.storage.name}",${stored.index}`);
    this.emit('received', message, stored.index);
    return true;
  }

  /** Storage was freed or the modem came back: the network may hand over what waits. */
  flushNetwork(): void {
    this.#flushNetwork();
  }

  #flushNetwork(): void {
    if (!this.reachable) return;
    // Through the clock: never inside the command that freed the slot.
    this.clock.setTimeout(() => this.network.flush(this.number), 0);
  }

  // ---- unsolicited result codes ----

  /** An SMS indication: dropped by the fault, held while AT+CNMI mode is 0. */
  #indication(text: string): void {
    if (this.faults.dropUrcs) {
      this.counters.droppedUrcs++;
      return;
    }
    if (this.settings.cnmi.mode === 0) {
      this.#held.push(text);
      return;
    }
    this.urc(text);
  }

  /** AT+CNMI with mode 1/2: bfr 0 flushes what mode 0 held, bfr 1 clears it (27.005 3.4.1). */
  releaseHeld(flush: boolean): void {
    const held = this.#held;
    this.#held = [];
    if (flush) for (const t of held) this.urc(t);
  }

  /** Sends an unsolicited result code now, or after the answer in progress. */
  urc(text: string): void {
    if (this.faults.unresponsive || this.#host === null) {
      this.counters.droppedUrcs++;
      return;
    }
    this.#urcQueue.push(text);
    this.#flushUrcs();
  }

  #flushUrcs(): void {
    if (this.#busy || this.#prompt || this.#resetting) return;
    for (const t of this.#urcQueue.splice(0)) {
      this.counters.urcs++;
      this.#writeText(`\r\n${t}\r\n`);
    }
  }

  #cregUrc(): void {
    const n = this.settings.cregUrc;
    if (n === 1) this.urc(`+CREG: ${this.cregStat}`);
    else if (n === 2) this.urc(this.registered ? `+CREG: ${this.cregStat},"00A1","0001B2C3"` : `+CREG: ${this.cregStat}`);
  }

  /** Re-announces registration after AT+CFUN or a PIN (for AT+CREG=1/2). */
  registrationChanged(): void {
    this.#cregUrc();
    this.#flushNetwork();
  }

  #writeText(text: string): void {
    this.#write(Buffer.from(text, 'latin1'));
  }

  #write(bytes: Uint8Array): void {
    if (this.#closed || this.faults.unresponsive || !this.#host) return;
    this.#host(bytes);
  }
}

export function cpinName(state: SimState): string {
  return state === 'ready' ? 'READY' : state === 'pin' ? 'SIM PIN' : state === 'puk' ? 'SIM PUK' : 'SIM PUK'; // blocked: the PUK is used up too
}

/** A made-up IMEI from the number: TAC 35209900, the number's digits, Luhn check digit. */
function imeiFor(number: string): string {
  const body = ('35209900' + number.replace(/\D/g, '').slice(-6).padStart(6, '0')).slice(0, 14);
  let sum = 0;
  for (let i = 0; i < 14; i++) {
    let d = Number(body[13 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return body + String((10 - (sum % 10)) % 10);
}
