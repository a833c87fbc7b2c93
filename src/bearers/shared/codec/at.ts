// AT command lines as SMS modems (docs/protocols/sms.md) and Iridium SBD modems
// (docs/protocols/iridium-sbd.md) speak them. Pure: no sockets, timers or logging. push()
// takes any chunk and returns events; bad input is reported as a `garbage` event and counted,
// never thrown.
//
// Context: the decoder is told what the command queue sent (expect / expectBinary) and keeps
// that until the command's final result. It needs this for four things only the queue knows:
// which line is the echo of the command, whether `+CREG: 1` answers AT+CREG? or is a URC,
// whether `> ` is the SMS prompt (and not text in a received SMS), and when binary bytes
// follow (AT+SBDRB). Without expect() every line is classified by prefix alone.
//
// The decoder assumes verbose result codes (ATV1, the power-on default): the numeric `0` the
// SBD write commands answer is an information line, never a final result.

import { isUtf8 } from 'node:buffer';

const CR = 0x0d;
const LF = 0x0a;
const PROMPT_1 = 0x3e; // '>'
const PROMPT_2 = 0x20; // ' '
export const CTRL_Z = 0x1a; // ends an SMS body: send (docs/protocols/sms.md 4.2)
export const ESC = 0x1b; // aborts an SMS body and frees a modem stuck at the prompt

/** Longest line kept; a longer one is dropped whole (the decoder resyncs at the next CR or LF). */
export const AT_MAX_LINE_BYTES = 4096;
/** Largest AT+SBDRB payload accepted: 1960 bytes, the largest SBD message of any Iridium unit
 *  (9602/9603 send at most 270; docs/protocols/iridium-sbd.md 3.6). The length's high byte
 *  is then at most 0x07, which no text line starts with. */
export const AT_MAX_BINARY_BYTES = 1960;

export type AtFinalResult =
  | 'OK'
  | 'CONNECT'
  | 'ERROR'
  | '+CME ERROR'
  | '+CMS ERROR'
  | 'NO CARRIER'
  | 'BUSY'
  | 'NO ANSWER'
  | 'NO DIALTONE';

/** Final result codes, verbose form (+CMS ERROR numbers: docs/protocols/sms.md 4.5; a
 *  `+CME ERROR` carries a number only after AT+CMEE=1, 4.1). `arg` says what may follow the
 *  name: nothing, ` <text>` (CONNECT 9600) or `: <n or text>`. One table, matched in order;
 *  anything else is not final. */
export const AT_FINAL_RESULTS: readonly { result: AtFinalResult; ok: boolean; arg: 'none' | 'space' | 'colon' }[] = [
  { result: 'OK', ok: true, arg: 'none' },
  { result: 'CONNECT', ok: true, arg: 'space' },
  { result: 'ERROR', ok: false, arg: 'none' },
  { result: '+CME ERROR', ok: false, arg: 'colon' },
  { result: '+CMS ERROR', ok: false, arg: 'colon' },
  { result: 'NO CARRIER', ok: false, arg: 'none' },
  { result: 'BUSY', ok: false, arg: 'none' },
  { result: 'NO ANSWER', ok: false, arg: 'none' },
  { result: 'NO DIALTONE', ok: false, arg: 'none' },
];

/** Lines that arrive without a command (+CNMI indications: docs/protocols/sms.md 4.3;
 *  SBDRING and +CIEV: docs/protocols/iridium-sbd.md 3.5; RING, +CREG, +CUSD: the usual ones;
 *  `^` = Huawei-style vendor reports).
 *  A prefix ending in a letter or digit matches a whole word: RING is not RINGBACK and +CMT
 *  is not +CMTI. */
export const AT_DEFAULT_URC_PREFIXES: readonly string[] = [
  '+CMTI', '+CMT', '+CDSI', '+CDS', '+CBM', 'RING', '+CRING', '+CLIP', '+CREG', '+CGREG', '+CEREG',
  '+CIEV', '+CUSD', 'SBDRING', '^',
];

/** Headers followed by one data line (a PDU in hex, or an SMS text in text mode) that belongs
 *  to them, even when it reads "OK" (docs/protocols/sms.md 4.3: the +CMT/+CBM/+CDS URCs
 *  and the +CMGR/+CMGL answers).
 *  `pduArgs`: in PDU mode the header has at most this many arguments and ends with the length;
 *  its data line must then be hex, and a line that is not is no data line (resync).
 *  `textBody`: whether the text-mode form has a data line too (a text-mode +CDS has none).
 *  A status report read in text mode with +CMGR/+CMGL has none either, yet takes the next line:
 *  the SMS driver runs in PDU mode (AT+CMGF=0), where every header has its line. */
const DATA_LINE_HEADERS: Readonly<Record<string, { pduArgs: number; textBody: boolean }>> = {
  '+CMT': { pduArgs: 2, textBody: true },
  '+CBM': { pduArgs: 1, textBody: true },
  '+CDS': { pduArgs: 1, textBody: false },
  '+CMGR': { pduArgs: 3, textBody: true },
  '+CMGL': { pduArgs: 4, textBody: true },
};

export type AtGarbageReason = 'overflow' | 'invalid-utf8' | 'binary-length';

export type AtEvent =
  /** The command's end. code: the numeric argument (CME/CMS error number, CONNECT rate);
   *  text: a non-numeric argument (`+CME ERROR: SIM not inserted`); null when absent. */
  | { type: 'final'; result: AtFinalResult; ok: boolean; code: number | null; text: string | null; line: string }
  /** A line of the outstanding command's answer (or, with nothing outstanding, a line no URC
   *  prefix claims). body: the data line under a +CMGR/+CMGL header, else null. */
  | { type: 'info'; line: string; body: string | null }
  /** The SMS body prompt `> ` (no CR LF follows it). */
  | { type: 'prompt' }
  /** An unsolicited result code; body: the PDU/text line of +CMT, +CBM, +CDS (PDU mode). */
  | { type: 'urc'; name: string; line: string; body: string | null }
  /** An AT+SBDRB answer: payload and the checksum as received (docs/protocols/iridium-sbd.md 3.4). */
  | { type: 'binary'; payload: Uint8Array; checksum: number; checksumOk: boolean }
  /** The modem repeating the command line (ATE1) or the SMS body; safe to ignore. */
  | { type: 'echo'; line: string }
  /** Bytes thrown away. length: bytes in the bad line (overflow: the first byte over the cap
   *  counts; the rest of the line is skipped unseen). sample: its first bytes, for the log. */
  | { type: 'garbage'; reason: AtGarbageReason; length: number; sample: Uint8Array };

/** What the decoder threw away; counters only ever grow (reset() keeps them). */
export interface AtErrorCounts {
  /** Lines longer than maxLineBytes. */
  overflow: number;
  /** Lines that are not valid UTF-8 (a text-mode SMS in a legacy charset: use PDU mode). */
  invalidUtf8: number;
  /** NUL bytes, dropped one by one (some modems send them at power-up). */
  nul: number;
  /** AT+SBDRB answers whose length passed maxBinaryBytes (not a binary answer after all). */
  binaryLength: number;
  /** AT+SBDRB answers whose checksum did not match (still emitted, checksumOk false). */
  badChecksum: number;
  /** Data lines expected under a PDU header that were not hex: the header is emitted with
   *  body null and the line read as a line of its own. */
  missingBody: number;
  /** Half lines, headers or binary answers thrown away by reset(). */
  discardedPartial: number;
}

export interface AtDecoderOptions {
  /** Prefixes that mark a URC (default AT_DEFAULT_URC_PREFIXES). */
  urcPrefixes?: readonly string[];
  maxLineBytes?: number;
  /** At most 2559: a larger limit would let the LF after the echo pass for a length byte. */
  maxBinaryBytes?: number;
}

export interface AtExpectation {
  /** The command line as sent, without the CR: `AT+CREG?`. */
  command: string;
  /** The SMS body that follows the prompt (PDU hex or text, without Ctrl-Z): its echo is
   *  recognised too. */
  body?: string;
  /** Whether `> ` is a prompt; default: for AT+CMGS, AT+CMGW and AT+CMGC. */
  prompt?: boolean;
  /** Whether the answer is AT+SBDRB's length-prefixed binary; default false. */
  binary?: boolean;
}

const SMS_PROMPT_COMMAND = /^AT\+CMG[SWC](=|$)/i;
const SAMPLE_BYTES = 32;
const utf8 = new TextDecoder();

type Pending = { kind: 'info' | 'urc'; name: string; line: string; pdu: boolean };
type Binary = {
  stage: 'armed' | 'length' | 'payload' | 'checksum';
  length: number;
  at: number;
  sum: number;
  checksum: number;
  checksumBytes: number;
};

export class AtDecoder {
  readonly errors: AtErrorCounts = {
    overflow: 0, invalidUtf8: 0, nul: 0, binaryLength: 0, badChecksum: 0, missingBody: 0, discardedPartial: 0,
  };
  readonly #urcPrefixes: readonly string[];
  readonly #maxLine: number;
  readonly #maxBinary: number;
  readonly #line: Uint8Array;
  readonly #payload: Uint8Array;
  #length = 0;
  #afterCR = false;
  #discarding = false;
  #pending: Pending | null = null;
  #binary: Binary | null = null;
  #command: string | null = null;
  #names: string[] = [];
  #body: string | null = null;
  #prompt = false;

  constructor(options: AtDecoderOptions = {}) {
    this.#urcPrefixes = options.urcPrefixes ?? AT_DEFAULT_URC_PREFIXES;
    this.#maxLine = options.maxLineBytes ?? AT_MAX_LINE_BYTES;
    this.#maxBinary = options.maxBinaryBytes ?? AT_MAX_BINARY_BYTES;
    if (!Number.isInteger(this.#maxLine) || this.#maxLine < 2) throw new RangeError(`maxLineBytes must be a whole number of at least 2, got ${this.#maxLine}`);
    if (!Number.isInteger(this.#maxBinary) || this.#maxBinary < 0 || this.#maxBinary >= LF * 256) {
      throw new RangeError(`maxBinaryBytes must be a whole number from 0 to 2559, got ${this.#maxBinary}`);
    }
    this.#line = new Uint8Array(this.#maxLine);
    this.#payload = new Uint8Array(this.#maxBinary);
  }

  /** The queue is about to send `command`: its echo is dropped, lines named like it are its
   *  information, and (per the options) `> ` is a prompt or binary follows. Holds until the
   *  next final result, reset(), or the next expect(). */
  expect(expectation: AtExpectation): void {
    const command = expectation.command.trim();
    this.#command = command;
    this.#names = commandNames(command);
    this.#body = expectation.body ?? null;
    this.#prompt = expectation.prompt ?? SMS_PROMPT_COMMAND.test(command);
    this.#binary = expectation.binary ? { stage: 'armed', length: 0, at: 0, sum: 0, checksum: 0, checksumBytes: 0 } : null;
  }

  /** Shorthand for the Iridium read: AT+SBDRB answers `<len u16 BE><bytes><checksum u16 BE>`
   *  then `\r\nOK\r\n` (docs/protocols/iridium-sbd.md 3.4). */
  expectBinary(command = 'AT+SBDRB'): void {
    this.expect({ command, binary: true });
  }

  /** The command expect() announced, until its final result. */
  get outstanding(): string | null {
    return this.#command;
  }

  /** 'binary' while AT+SBDRB bytes are being read, 'body' while a header waits for its data
   *  line, else 'line'. */
  get state(): 'line' | 'body' | 'binary' {
    if (this.#binary !== null && this.#binary.stage !== 'armed') return 'binary';
    return this.#pending !== null ? 'body' : 'line';
  }

  /** Bytes held for the line or binary answer in progress; never more than the caps. */
  get bufferedBytes(): number {
    return this.#length + (this.#binary?.at ?? 0);
  }

  /** Throws away a half line, a header waiting for its data line, a binary answer in progress
   *  and the expectation (the driver calls this after a timeout or when it reopens the port). */
  reset(): void {
    if (this.#length > 0 || this.#discarding || this.#pending !== null || (this.#binary !== null && this.#binary.stage !== 'armed')) {
      this.errors.discardedPartial++;
    }
    this.#length = 0;
    this.#afterCR = false;
    this.#discarding = false;
    this.#pending = null;
    this.#endCommand();
  }

  push(chunk: Uint8Array): AtEvent[] {
    const events: AtEvent[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      const binary = this.#binary;
      if (binary !== null && binary.stage !== 'armed') {
        this.#binaryByte(binary, byte, events);
        continue;
      }
      if (this.#afterCR) {
        this.#afterCR = false;
        if (byte === LF) continue; // CR LF is one line end
      }
      if (byte === CR || byte === LF) {
        this.#endLine(events);
        this.#afterCR = byte === CR;
        continue;
      }
      if (this.#discarding) continue;
      // Binary starts at a line start with a length byte no text line begins with (the high
      // byte of at most maxBinaryBytes, i.e. 0x00..0x07), right after the echo's CR when echo is on.
      if (binary !== null && this.#length === 0 && byte * 256 <= this.#maxBinary) {
        binary.stage = 'length';
        binary.length = byte * 256;
        continue;
      }
      if (byte === 0) {
        this.errors.nul++;
        continue;
      }
      if (this.#length === this.#maxLine) {
        this.errors.overflow++;
        events.push({ type: 'garbage', reason: 'overflow', length: this.#length + 1, sample: this.#line.slice(0, SAMPLE_BYTES) });
        this.#length = 0;
        this.#discarding = true;
        continue;
      }
      this.#line[this.#length++] = byte;
      // The prompt comes as CR LF '>' ' ' and nothing after it (docs/protocols/sms.md 4.2).
      if (this.#prompt && this.#length === 2 && this.#line[0] === PROMPT_1 && this.#line[1] === PROMPT_2) {
        this.#length = 0;
        events.push({ type: 'prompt' });
      }
    }
    return events;
  }

  #binaryByte(binary: Binary, byte: number, events: AtEvent[]): void {
    switch (binary.stage) {
      case 'length':
        binary.length += byte;
        if (binary.length > this.#maxBinary) {
          this.errors.binaryLength++;
          const sample = Uint8Array.of(binary.length >> 8, byte);
          events.push({ type: 'garbage', reason: 'binary-length', length: 2, sample });
          this.#binary = null; // not a binary answer: read on as lines
          return;
        }
        binary.stage = binary.length === 0 ? 'checksum' : 'payload';
        return;
      case 'payload':
        this.#payload[binary.at++] = byte;
        binary.sum += byte;
        if (binary.at === binary.length) binary.stage = 'checksum';
        return;
      case 'checksum': {
        binary.checksum = (binary.checksum << 8) | byte;
        if (++binary.checksumBytes < 2) return;
        // Checksum: low 16 bits of the sum of the payload bytes, MSB first.
        const checksumOk = binary.checksum === (binary.sum & 0xffff);
        if (!checksumOk) this.errors.badChecksum++;
        events.push({ type: 'binary', payload: this.#payload.slice(0, binary.length), checksum: binary.checksum, checksumOk });
        this.#binary = null; // the `\r\nOK\r\n` that follows is read as lines
        return;
      }
    }
  }

  #endLine(events: AtEvent[]): void {
    if (this.#discarding) {
      this.#discarding = false;
      if (this.#pending !== null) this.#flushPending(null, events);
      return;
    }
    const raw = this.#line.subarray(0, this.#length);
    this.#length = 0;
    if (!isUtf8(raw)) {
      this.errors.invalidUtf8++;
      if (this.#pending !== null) this.#flushPending(null, events);
      events.push({ type: 'garbage', reason: 'invalid-utf8', length: raw.length, sample: raw.slice(0, SAMPLE_BYTES) });
      return;
    }
    const line = utf8.decode(raw);
    const pending = this.#pending;
    if (pending !== null) {
      // The data line is the very next line, even when empty or "OK" (text mode); in PDU mode
      // it must be hex, else the header lost it and this line is read on its own.
      if (!pending.pdu || /^[0-9A-Fa-f]+$/.test(line.trim())) {
        this.#flushPending(pending.pdu ? line.trim() : line, events);
        return;
      }
      this.errors.missingBody++;
      this.#flushPending(null, events);
    }
    this.#classify(line, events);
  }

  #classify(line: string, events: AtEvent[]): void {
    const trimmed = line.trim();
    if (trimmed === '') return; // the CR LF pairs around every verbose answer
    if (this.#command !== null && this.#isEcho(trimmed)) {
      events.push({ type: 'echo', line: trimmed });
      return;
    }
    const final = parseFinal(trimmed);
    if (final !== null) {
      events.push(final);
      this.#endCommand();
      return;
    }
    const name = lineName(trimmed);
    const answersCommand = this.#names.includes(name);
    const kind = !answersCommand && this.#urcPrefixes.some((p) => matchesPrefix(trimmed, p)) ? 'urc' : 'info';
    const data = DATA_LINE_HEADERS[name];
    if (data !== undefined) {
      const { args } = parseInfo(trimmed);
      const pdu = args.length <= data.pduArgs && typeof args[args.length - 1] === 'number';
      if (pdu || data.textBody) {
        this.#pending = { kind, name, line: trimmed, pdu };
        return;
      }
    }
    events.push(kind === 'urc' ? { type: 'urc', name, line: trimmed, body: null } : { type: 'info', line: trimmed, body: null });
  }

  #isEcho(line: string): boolean {
    if (line === this.#command) return true;
    if (this.#body === null) return false;
    // The body comes back as typed, Ctrl-Z (or ESC) included.
    const last = line.charCodeAt(line.length - 1);
    const body = last === CTRL_Z || last === ESC ? line.slice(0, -1) : line;
    return body === this.#body;
  }

  #flushPending(body: string | null, events: AtEvent[]): void {
    const p = this.#pending!;
    this.#pending = null;
    events.push(p.kind === 'urc' ? { type: 'urc', name: p.name, line: p.line, body } : { type: 'info', line: p.line, body });
  }

  #endCommand(): void {
    this.#command = null;
    this.#names = [];
    this.#body = null;
    this.#prompt = false;
    this.#binary = null;
  }
}

// ---- line helpers ----

/** The name a line answers to: what stands before the first colon (`+CMTI`, `^RSSI`), or the
 *  whole line (`RING`, `READY`). */
function lineName(line: string): string {
  const colon = line.indexOf(':');
  return (colon < 0 ? line : line.slice(0, colon)).trim();
}

/** Names whose lines answer a command: `AT+CREG?` -> `+CREG`, `AT^SYSINFO` -> `^SYSINFO`;
 *  each part of a `;`-joined command line counts. Basic commands (ATE0, AT&K0) name none. */
function commandNames(command: string): string[] {
  const body = command.replace(/^AT/i, '');
  return body
    .split(';')
    .map((part) => /^\s*([+^$%*#][A-Za-z0-9]+|-[A-Za-z0-9]+)/.exec(part)?.[1]?.toUpperCase() ?? '')
    .filter((name) => name !== '');
}

function matchesPrefix(line: string, prefix: string): boolean {
  if (prefix === '' || !line.startsWith(prefix)) return false;
  const lastIsWord = /[A-Za-z0-9]$/.test(prefix);
  return !lastIsWord || !/[A-Za-z0-9]/.test(line.charAt(prefix.length));
}

function parseFinal(line: string): Extract<AtEvent, { type: 'final' }> | null {
  for (const { result, ok, arg } of AT_FINAL_RESULTS) {
    if (!line.startsWith(result)) continue;
    const rest = line.slice(result.length);
    let value: string;
    if (rest === '') value = '';
    else if (arg === 'space' && rest.startsWith(' ')) value = rest.trim();
    else if (arg === 'colon' && rest.startsWith(':')) value = rest.slice(1).trim();
    else continue;
    const code = /^\d{1,9}$/.test(value) ? Number(value) : null;
    return { type: 'final', result, ok, code, text: code === null && value !== '' ? value : null, line };
  }
  return null;
}

export type AtArg = string | number | null;

/** Splits an information line into its name and arguments (the +CMTI, +CMGR and +CMGL
 *  forms of docs/protocols/sms.md 4.3): `+CMTI: "SM",3` -> `{ name: '+CMTI', args: ['SM', 3] }`.
 *  Quoted strings keep their commas and lose their quotes; whole numbers within the safe range
 *  become numbers (an ICCID stays a string); an empty argument is null (`+CMT: ,24` ->
 *  [null, 24]); an unclosed quote runs to the end of the line. A line without a colon has no
 *  arguments. */
export function parseInfo(line: string): { name: string; args: AtArg[] } {
  const colon = line.indexOf(':');
  if (colon < 0) return { name: line.trim(), args: [] };
  const name = line.slice(0, colon).trim();
  const rest = line.slice(colon + 1);
  const args: AtArg[] = [];
  if (rest.trim() === '') return { name, args };
  let i = 0;
  for (;;) {
    while (rest[i] === ' ' || rest[i] === '\t') i++;
    let arg: AtArg;
    if (rest[i] === '"') {
      const close = rest.indexOf('"', i + 1);
      const end = close < 0 ? rest.length : close;
      arg = rest.slice(i + 1, end);
      i = close < 0 ? rest.length : close + 1;
      const comma = rest.indexOf(',', i);
      i = comma < 0 ? rest.length : comma; // anything between the quote and the comma is dropped
    } else {
      const comma = rest.indexOf(',', i);
      const end = comma < 0 ? rest.length : comma;
      const raw = rest.slice(i, end).trim();
      i = end;
      arg = raw === '' ? null : /^-?\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : raw;
    }
    args.push(arg);
    if (i >= rest.length) return { name, args };
    i++; // the comma
  }
}

// ---- encoder ----

/** A command line as the modem wants it: the text and a CR, no LF (an Iridium modem refuses
 *  the LF: docs/protocols/iridium-sbd.md 3.1). Control characters inside would end or break the
 *  line, so they are refused. */
export function atCommand(text: string): Uint8Array {
  if (text.length === 0 || /[\x00-\x1f\x7f]/.test(text)) {
    throw new RangeError(`AT command must be non-empty text without control characters, got ${JSON.stringify(text)}`);
  }
  const bytes = new TextEncoder().encode(text);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  out[bytes.length] = CR;
  return out;
}
