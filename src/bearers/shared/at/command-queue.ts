// The AT command queue the SMS (docs/protocols/sms.md section 4) and Iridium SBD
// (docs/protocols/iridium-sbd.md section 3) drivers stand on: one Link, one AtDecoder, one
// command on the wire at a time, in the order run() was called.
//
// What it guarantees:
// - A command is written only when no other waits for its answer (sms.md 4.2: "wait for the
//   answer before the next command").
// - Every run() settles with a result, never an exception: OK, a failing final result with
//   its number, TIMEOUT, WRITE (the link refused the bytes) or CLOSED. One bad command never
//   blocks the ones behind it (sms.md 4.6).
// - URCs (+CMTI, +CDS with its PDU line, RING, SBDRING, ...) reach their handlers whenever they
//   arrive, also in the middle of an answer. Handlers run in a microtask, after the chunk that
//   carried them is read, so a handler may itself call run(): its command queues behind the
//   one that waits.
// - A command that times out at the SMS prompt is aborted with ESC (sms.md 4.6); after a
//   timeout the queue stays quiet for a moment so a late answer is not taken for the next
//   command's; after N timeouts in a row the modem is declared unresponsive (the driver
//   reopens the link: sms.md 4.6, iridium-sbd.md 3.7).
//
// The session does not own the link: close() settles every command and stops listening, the
// driver closes the link. When the link closes by itself, the session closes too.

import type { Clock, TimerHandle } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/log.ts';
import {
  AtDecoder,
  CTRL_Z,
  ESC,
  atCommand,
  type AtDecoderOptions,
  type AtErrorCounts,
  type AtEvent,
  type AtFinalResult,
} from '../codec/at.ts';
import type { Link } from '../links/link.ts';

/** Default time a command may take; callers pass 60-180 s for AT+CMGS (sms.md 4.2) and
 *  AT+SBDIX (iridium-sbd.md 3.7). */
export const AT_DEFAULT_TIMEOUT_MS = 5_000;
/** Timeouts in a row after which the modem is declared unresponsive. */
export const AT_DEFAULT_UNRESPONSIVE_AFTER = 3;
/** Quiet time after a timeout before the next command is written: a late answer to the
 *  command that timed out (or the modem's answer to our ESC) arrives with nothing outstanding
 *  and is dropped as stray instead of ending the next command. */
export const AT_DEFAULT_SETTLE_MS = 1_000;

/** Why a command failed. ERROR: the modem answered with a failing final result (ERROR,
 *  +CME ERROR, +CMS ERROR, NO CARRIER, BUSY, ...: see final, code, text). TIMEOUT: no final
 *  result in time. WRITE: the link refused the bytes. CLOSED: the session closed first. */
export type AtErrorCode = 'ERROR' | 'TIMEOUT' | 'WRITE' | 'CLOSED';

export interface AtBinary {
  payload: Uint8Array;
  /** As received; checksumOk says whether it matches the payload (iridium-sbd.md 3.4). */
  checksum: number;
  checksumOk: boolean;
}

export interface AtResult {
  /** The modem answered OK (or CONNECT), or a line matching `endOn` ended the command. */
  ok: boolean;
  /** Null when ok. */
  error: AtErrorCode | null;
  /** The final result as the modem wrote it; null when none came (timeout, closed, endOn). */
  final: AtFinalResult | null;
  /** The final result's number: the +CME/+CMS ERROR code (sms.md 4.5), a CONNECT rate. */
  code: number | null;
  /** A final result's non-numeric argument (`+CME ERROR: SIM not inserted`). */
  text: string | null;
  /** The information lines of the answer, in order (echo, prompt, READY and URCs excluded). */
  info: string[];
  /** Parallel to info: the data line under a +CMGR/+CMGL header (a PDU in hex), else null. */
  bodies: (string | null)[];
  /** AT+SBDRB's payload, when options.binary was set and it came. */
  binary?: AtBinary;
  /** Whether the prompt (`> ` or READY) came. */
  prompted: boolean;
  /** Whether promptData went to the link. A send that timed out after it is ambiguous: the
   *  modem may have sent it (sms.md 4.6: no duplicate unless a retry is recorded). */
  dataWritten: boolean;
  /** Whether ESC was written to free the modem from the prompt. */
  escaped: boolean;
}

/** What a command that failed did, for an error message: "got no answer in time", "the link
 *  went away", or "answered ERROR 4". */
export function describeAtResult(r: AtResult): string {
  if (r.error === 'TIMEOUT') return 'got no answer in time';
  if (r.error === 'CLOSED' || r.error === 'WRITE') return 'the link went away';
  return `answered ${r.final ?? r.error}${r.code !== null ? ` ${r.code}` : ''}`;
}

export interface AtRunOptions {
  /** Default: the session's defaultTimeoutMs (5 s). Counted from the write of the command. */
  timeoutMs?: number;
  /** The command answers with a prompt before its final result: `> ` for AT+CMGS/CMGW/CMGC
   *  (sms.md 4.2), a `READY` line for AT+SBDWB and AT+SBDWT (iridium-sbd.md 3.2). Default:
   *  whether promptData is given. */
  expectPrompt?: boolean;
  /** Written when the prompt comes: PDU hex + Ctrl-Z, or SBDWB's bytes + checksum. A final
   *  Ctrl-Z goes in a write of its own (sms.md 4.2). Without it nothing is written at the
   *  prompt and the command ends by its timeout (with ESC). */
  promptData?: Uint8Array;
  /** The answer is AT+SBDRB's length-prefixed binary (iridium-sbd.md 3.4). */
  binary?: boolean;
  /** An information line that ends the command without a final result: AT+SBDWB's status
   *  `1` (timeout) comes without OK (iridium-sbd.md 3.2). The line is the last of `info`. */
  endOn?: (line: string) => boolean;
}

export interface AtUrc {
  name: string;
  line: string;
  /** The data line of +CMT, +CBM, +CDS in PDU mode; else null. */
  body: string | null;
}

export type AtUrcHandler = (urc: AtUrc) => void | Promise<void>;

export interface AtSessionOptions {
  clock: Clock;
  log?: Logger;
  defaultTimeoutMs?: number;
  unresponsiveAfter?: number;
  settleMs?: number;
  decoder?: AtDecoderOptions;
}

export interface AtSessionStats {
  /** run() calls accepted (including those later closed). */
  commands: number;
  ok: number;
  /** Commands answered with a failing final result. */
  errors: number;
  timeouts: number;
  writeErrors: number;
  /** Commands settled as CLOSED. */
  closed: number;
  urcs: number;
  /** URCs no handler was registered for (counted in urcs too). */
  unhandledUrcs: number;
  handlerErrors: number;
  garbage: number;
  echoes: number;
  /** Answers, prompts and lines that arrived with no command waiting (late answers). */
  stray: number;
  escapes: number;
  unresponsive: number;
  consecutiveTimeouts: number;
  queued: number;
  decoder: AtErrorCounts;
}

type Counter = Exclude<keyof AtSessionStats, 'consecutiveTimeouts' | 'queued' | 'decoder'>;

interface Job {
  command: string;
  bytes: Uint8Array;
  options: AtRunOptions;
  expectPrompt: boolean;
  timeoutMs: number;
  resolve: (result: AtResult) => void;
  info: string[];
  bodies: (string | null)[];
  binary: AtBinary | undefined;
  prompt: 'prompt' | 'ready' | null;
  dataWritten: boolean;
  timer: TimerHandle | null;
}

export class AtSession {
  readonly #link: Link;
  readonly #clock: Clock;
  readonly #log: Logger | undefined;
  readonly #decoder: AtDecoder;
  readonly #defaultTimeoutMs: number;
  readonly #unresponsiveAfter: number;
  readonly #settleMs: number;
  readonly #queue: Job[] = [];
  readonly #urcHandlers = new Map<string, Set<AtUrcHandler>>();
  readonly #unresponsiveListeners: ((reason: string) => void)[] = [];
  readonly #counts: Record<Counter, number> = {
    commands: 0, ok: 0, errors: 0, timeouts: 0, writeErrors: 0, closed: 0, urcs: 0, unhandledUrcs: 0,
    handlerErrors: 0, garbage: 0, echoes: 0, stray: 0, escapes: 0, unresponsive: 0,
  };
  #current: Job | null = null;
  #settle: TimerHandle | null = null;
  #consecutiveTimeouts = 0;
  #closed: string | null = null;

  constructor(link: Link, options: AtSessionOptions) {
    this.#link = link;
    this.#clock = options.clock;
    this.#log = options.log;
    this.#decoder = new AtDecoder(options.decoder);
    this.#defaultTimeoutMs = positive('defaultTimeoutMs', options.defaultTimeoutMs ?? AT_DEFAULT_TIMEOUT_MS);
    this.#unresponsiveAfter = positive('unresponsiveAfter', options.unresponsiveAfter ?? AT_DEFAULT_UNRESPONSIVE_AFTER);
    this.#settleMs = options.settleMs ?? AT_DEFAULT_SETTLE_MS;
    if (!(this.#settleMs >= 0)) throw new RangeError(`settleMs must be 0 or more, got ${this.#settleMs}`);
    link.onData((chunk) => this.#onData(chunk));
    link.onClose((reason) => this.close(`link closed: ${reason}`));
  }

  /** Queues a command (without its CR: `AT+CMGS=23`) and settles with its result; never
   *  rejects. Throws RangeError at once for text no modem could take (empty, control
   *  characters) or a timeout that is not a positive number: those are bugs, not results. */
  run(command: string, options: AtRunOptions = {}): Promise<AtResult> {
    const bytes = atCommand(command);
    const timeoutMs = positive('timeoutMs', options.timeoutMs ?? this.#defaultTimeoutMs);
    this.#counts.commands++;
    if (this.#closed !== null) {
      this.#counts.closed++;
      return Promise.resolve(failed('CLOSED'));
    }
    return new Promise<AtResult>((resolve) => {
      this.#queue.push({
        command, bytes, options, timeoutMs, resolve,
        expectPrompt: options.expectPrompt ?? options.promptData !== undefined,
        info: [], bodies: [], binary: undefined, prompt: null, dataWritten: false, timer: null,
      });
      this.#pump();
    });
  }

  /** Calls handler for every URC named `name` (`+CMTI`, `SBDRING`) or, with '*', every URC.
   *  Returns the unsubscribe. */
  onUrc(name: string, handler: AtUrcHandler): () => void {
    let set = this.#urcHandlers.get(name);
    if (!set) this.#urcHandlers.set(name, (set = new Set()));
    set.add(handler);
    return () => void set.delete(handler);
  }

  /** Called each time `unresponsiveAfter` commands in a row have timed out (after the last
   *  one settled, before the next is written): the driver closes and reopens the link. */
  onUnresponsive(listener: (reason: string) => void): void {
    this.#unresponsiveListeners.push(listener);
  }

  /** Settles the waiting and every queued command with CLOSED; later run() calls settle so at
   *  once; bytes that still arrive are ignored. Does not close the link. */
  close(reason = 'closed'): void {
    if (this.#closed !== null) return;
    this.#closed = reason;
    if (this.#settle !== null) this.#clock.clearTimeout(this.#settle);
    this.#settle = null;
    const jobs = this.#current ? [this.#current, ...this.#queue.splice(0)] : this.#queue.splice(0);
    this.#current = null;
    this.#decoder.reset();
    for (const job of jobs) this.#finish(job, { ...failed('CLOSED'), ...this.#partial(job) }, 'closed');
  }

  get closed(): boolean {
    return this.#closed !== null;
  }

  /** The command on the wire, if any. */
  get waiting(): string | null {
    return this.#current?.command ?? null;
  }

  stats(): AtSessionStats {
    return {
      ...this.#counts,
      consecutiveTimeouts: this.#consecutiveTimeouts,
      queued: this.#queue.length,
      decoder: { ...this.#decoder.errors },
    };
  }

  // ---- writing ----

  #pump(): void {
    if (this.#closed !== null || this.#current !== null || this.#settle !== null) return;
    const job = this.#queue.shift();
    if (!job) return;
    this.#current = job;
    this.#decoder.expect({
      command: shownCommand(job.command),
      body: echoBody(job.options.promptData),
      prompt: job.expectPrompt,
      binary: job.options.binary ?? false,
    });
    job.timer = this.#clock.setTimeout(() => this.#timeout(job), job.timeoutMs);
    this.#write(job, job.bytes);
  }

  #write(job: Job, bytes: Uint8Array): void {
    this.#link.write(bytes).catch((err: unknown) => {
      if (this.#current !== job) return;
      this.#log?.warn('at_write_failed', { command: shownCommand(job.command), error: String(err) });
      this.#abandon();
      this.#end(job, { ...failed('WRITE'), ...this.#partial(job) }, 'writeErrors');
    });
  }

  #atPrompt(job: Job, kind: 'prompt' | 'ready'): void {
    job.prompt = kind;
    const data = job.options.promptData;
    if (data === undefined || data.length === 0) return;
    job.dataWritten = true;
    // sms.md 4.2: send Ctrl-Z in a write of its own.
    if (data.length > 1 && data[data.length - 1] === CTRL_Z) {
      this.#write(job, data.subarray(0, -1));
      this.#write(job, data.subarray(-1));
    } else {
      this.#write(job, data);
    }
  }

  // ---- reading ----

  #onData(chunk: Uint8Array): void {
    if (this.#closed !== null) return;
    for (const event of this.#decoder.push(chunk)) this.#onEvent(event);
  }

  #onEvent(event: AtEvent): void {
    const job = this.#current;
    switch (event.type) {
      case 'urc':
        this.#counts.urcs++;
        this.#dispatch({ name: event.name, line: event.line, body: event.body });
        return;
      case 'garbage':
        this.#counts.garbage++;
        this.#log?.debug('at_garbage', { reason: event.reason, length: event.length });
        return;
      case 'echo':
        this.#counts.echoes++;
        return;
      case 'prompt':
        if (job && job.expectPrompt && job.prompt === null) this.#atPrompt(job, 'prompt');
        else this.#counts.stray++;
        return;
      case 'info':
        if (!job) {
          this.#counts.stray++;
          return;
        }
        // iridium-sbd.md 3.2: AT+SBDWB/SBDWT answer `READY` before taking the data.
        if (job.expectPrompt && job.prompt === null && event.line === 'READY') {
          this.#atPrompt(job, 'ready');
          return;
        }
        job.info.push(event.line);
        job.bodies.push(event.body);
        if (job.options.endOn?.(event.line)) {
          this.#end(job, { ...failed('ERROR'), ...this.#partial(job), ok: true, error: null }, 'ok');
        }
        return;
      case 'binary':
        if (job) job.binary = { payload: event.payload, checksum: event.checksum, checksumOk: event.checksumOk };
        else this.#counts.stray++;
        return;
      case 'final':
        if (!job) {
          this.#counts.stray++;
          return;
        }
        this.#end(
          job,
          { ...failed('ERROR'), ...this.#partial(job), ok: event.ok, error: event.ok ? null : 'ERROR', final: event.result, code: event.code, text: event.text },
          event.ok ? 'ok' : 'errors',
        );
        return;
      default: {
        const unknown: never = event; // docs/style.md habit 3: an explicit, counted "unknown"
        this.#counts.stray++;
        this.#log?.debug('at_unknown_event', { event: String((unknown as { type?: unknown }).type) });
      }
    }
  }

  #dispatch(urc: AtUrc): void {
    const handlers = [...(this.#urcHandlers.get(urc.name) ?? []), ...(this.#urcHandlers.get('*') ?? [])];
    if (handlers.length === 0) {
      this.#counts.unhandledUrcs++;
      return;
    }
    // Asynchronous: the handler may call run() without re-entering the read of this chunk.
    queueMicrotask(() => {
      if (this.#closed !== null) return;
      for (const handler of handlers) {
        try {
          const result = handler(urc);
          if (result && typeof result.then === 'function') result.then(undefined, (err) => this.#handlerFailed(urc, err));
        } catch (err) {
          this.#handlerFailed(urc, err);
        }
      }
    });
  }

  #handlerFailed(urc: AtUrc, err: unknown): void {
    this.#counts.handlerErrors++;
    this.#log?.warn('at_urc_handler_failed', { urc: urc.name, error: String(err) });
  }

  // ---- ending ----

  #timeout(job: Job): void {
    if (this.#current !== job) return;
    job.timer = null;
    // sms.md 4.6: a modem stuck at the `> ` prompt is freed with ESC. At READY the modem
    // frees itself after 60 s (iridium-sbd.md 3.2) and an ESC would be taken as data.
    const escaped = job.prompt === 'prompt';
    if (escaped) {
      this.#counts.escapes++;
      this.#link.write(Uint8Array.of(ESC)).catch(() => {});
    }
    this.#abandon();
    this.#consecutiveTimeouts++;
    this.#log?.warn('at_timeout', { command: shownCommand(job.command), timeoutMs: job.timeoutMs, escaped, inARow: this.#consecutiveTimeouts });
    if (this.#settleMs > 0) {
      this.#settle = this.#clock.setTimeout(() => {
        this.#settle = null;
        this.#pump();
      }, this.#settleMs);
    }
    this.#end(job, { ...failed('TIMEOUT'), ...this.#partial(job), escaped }, 'timeouts');
  }

  /** The decoder after a command ended without its final result. A binary read in progress is
   *  thrown away, or the bytes after it would be taken for payload. Anything else is kept: a
   *  half-read line or a +CMT header waiting for its PDU may be a URC, and reset() would lose
   *  it. The stale expectation lasts until the next command's expect(); what it claims in
   *  the meantime (a late answer) is stray either way. */
  #abandon(): void {
    if (this.#decoder.state === 'binary') this.#decoder.reset();
  }

  /** Settles the waiting command, reports unresponsiveness, then writes the next one. */
  #end(job: Job, result: AtResult, counter: Counter): void {
    this.#current = null;
    if (counter !== 'timeouts') this.#consecutiveTimeouts = 0;
    this.#finish(job, result, counter);
    if (counter === 'timeouts' && this.#consecutiveTimeouts % this.#unresponsiveAfter === 0) {
      const reason = `${this.#consecutiveTimeouts} AT commands in a row timed out, the last ${shownCommand(job.command)} after ${job.timeoutMs} ms`;
      this.#counts.unresponsive++;
      this.#log?.warn('at_unresponsive', { reason });
      for (const listener of this.#unresponsiveListeners) {
        try {
          listener(reason);
        } catch (err) {
          this.#log?.warn('at_unresponsive_listener_failed', { error: String(err) });
        }
      }
    }
    this.#pump();
  }

  #finish(job: Job, result: AtResult, counter: Counter): void {
    if (job.timer !== null) this.#clock.clearTimeout(job.timer);
    job.timer = null;
    this.#counts[counter]++;
    job.resolve(result);
  }

  #partial(job: Job): Pick<AtResult, 'info' | 'bodies' | 'binary' | 'prompted' | 'dataWritten'> {
    const out: Pick<AtResult, 'info' | 'bodies' | 'binary' | 'prompted' | 'dataWritten'> = {
      info: job.info, bodies: job.bodies, prompted: job.prompt !== null, dataWritten: job.dataWritten,
    };
    if (job.binary) out.binary = job.binary;
    return out;
  }
}

function failed(error: AtErrorCode): AtResult {
  return { ok: false, error, final: null, code: null, text: null, info: [], bodies: [], prompted: false, dataWritten: false, escaped: false };
}

function positive(name: string, value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}

/** The body as the modem echoes it (the decoder drops that echo): the prompt data without its
 *  final Ctrl-Z or CR, when it is printable ASCII (PDU hex or text); binary data has none. */
function echoBody(data: Uint8Array | undefined): string | undefined {
  if (data === undefined) return undefined;
  // Ctrl-Z ends a PDU (sms.md 4.2), CR a text for AT+SBDWT (iridium-sbd.md 3.2).
  const last = data[data.length - 1];
  const end = last === CTRL_Z || last === 0x0d ? data.length - 1 : data.length;
  let text = '';
  for (let i = 0; i < end; i++) {
    if (data[i] < 0x20 || data[i] > 0x7e) return undefined;
    text += String.fromCharCode(data[i]);
  }
  return text === '' ? undefined : text;
}

/** A command as logs may show it: the SIM PIN (and PUK) never appear (docs/sms.md, "PIN"). */
export function shownCommand(command: string): string {
  return /^AT\+CPIN\s*=/i.test(command) ? 'AT+CPIN=<redacted>' : command;
}
