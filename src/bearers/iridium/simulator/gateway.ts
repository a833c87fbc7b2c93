import { EventEmitter } from 'node:events';
import { systemClock, type Clock } from '../../../lib/clock.ts';

// The Iridium side of simulated SBD modems, in process: the gateway (GSS) and the sky between
// them. One per sim://<channel> (link.ts) and one shared by every modem of `fieldbridge sim
// iridium`. It keeps a mailbox (MT queue) per IMEI, the MO messages it received, the scripted
// outcomes of the next sessions and the signal bars every modem sees. Modems attach with
// distinct IMEIs and RockBLOCK serial numbers; tests inject MT messages and read what came.
//
// RockBLOCK to RockBLOCK (iridium-sbd.md 3.6): an MO payload that starts with `RB` and the
// 7-digit serial of another modem on this gateway is queued for that modem, its prefix
// replaced by `RB` and the *sender's* serial, so the receiver can tell who wrote (our choice;
// Rock7's pages say the payload is forwarded, not what it then starts with).

/** The largest MT message of a 9602/9603/RockBLOCK (iridium-sbd.md 3.6). */
export const MAX_MT_BYTES = 270;
/** The largest MO message (iridium-sbd.md 3.2, 3.6). */
export const MAX_MO_BYTES = 340;
/** MO status: sent (iridium-sbd.md 3.3). */
export const MO_SENT = 0;
/** MO status: no network service (iridium-sbd.md 3.3). */
export const MO_NO_SERVICE = 32;

/** One scripted session: its MO status and, optionally, how long it takes. */
export interface SkyOutcome {
  mo: number;
  ms?: number;
}

/** Success is MO status 0-4 (iridium-sbd.md 3.3, ISU). */
export const sessionSucceeded = (mo: number): boolean => mo >= 0 && mo <= 4;

export interface MoRecord {
  imei: string;
  serial: string;
  momsn: number;
  payload: Uint8Array;
  /** Clock time of the session. */
  at: number;
  /** Sent again by a session without a new write (the MO buffer was not cleared). */
  duplicate: boolean;
  /** The IMEI a RockBLOCK-addressed payload was queued for; null when not forwarded. */
  forwardedTo: string | null;
}

export interface MtMessage {
  payload: Uint8Array;
  queuedAt: number;
}

/** What a modem needs to be on a gateway. */
export interface IridiumSubscriber {
  readonly imei: string;
  readonly serial: string;
  /** An MT message was queued for this modem (the gateway sends a ring alert). */
  ringAlert(): void;
}

interface Mailbox {
  queue: MtMessage[];
  /** The MTMSN of the last message delivered; the next one gets this + 1, mod 65536. */
  lastMtmsn: number;
}

export interface IridiumGatewayOptions {
  clock?: Clock;
  /** Signal bars 0-5 every modem sees (default 5). */
  bars?: number;
}

export class IridiumGateway extends EventEmitter {
  readonly clock: Clock;
  /** Outcomes of the next sessions, oldest first; an empty script means success (or MO 32
   *  with 0 bars). Tests and the CLI push to it. */
  readonly sky: SkyOutcome[] = [];
  readonly received: MoRecord[] = [];
  readonly counters = { sessions: 0, failedSessions: 0, moReceived: 0, duplicateMo: 0, mtQueued: 0, mtDelivered: 0, forwarded: 0, undeliverable: 0 };
  #bars: number;
  #subscribers: IridiumSubscriber[] = [];
  #mailboxes = new Map<string, Mailbox>();
  #attached = 0;

  constructor(options: IridiumGatewayOptions = {}) {
    super();
    this.clock = options.clock ?? systemClock;
    this.#bars = checkBars(options.bars ?? 5);
  }

  get bars(): number {
    return this.#bars;
  }

  set bars(n: number) {
    this.#bars = checkBars(n);
  }

  /** Appends outcomes to the script: MO status numbers or full outcomes. */
  script(...outcomes: (number | SkyOutcome)[]): void {
    for (const o of outcomes) this.sky.push(typeof o === 'number' ? { mo: o } : o);
  }

  /** The outcome of the session starting now (used up even if the session is abandoned). */
  nextOutcome(): SkyOutcome {
    return this.sky.shift() ?? { mo: this.#bars === 0 ? MO_NO_SERVICE : MO_SENT };
  }

  /** Takes a modem on, with its IMEI and serial or the next free made-up ones. */
  attach(subscriber: IridiumSubscriber): void {
    if (this.#subscribers.some((s) => s.imei === subscriber.imei)) throw new Error(`IMEI ${subscriber.imei} is already on this gateway`);
    if (this.#subscribers.some((s) => s.serial === subscriber.serial)) throw new Error(`serial ${subscriber.serial} is already on this gateway`);
    this.#subscribers.push(subscriber);
  }

  detach(subscriber: IridiumSubscriber): void {
    this.#subscribers = this.#subscribers.filter((s) => s !== subscriber);
  }

  get subscribers(): readonly IridiumSubscriber[] {
    return this.#subscribers;
  }

  /** The next made-up identity: IMEI 3003401 + 7 digits + a Luhn digit; serial 0010001, ... */
  nextIdentity(): { imei: string; serial: string } {
    for (;;) {
      const n = ++this.#attached;
      const imei = withLuhn('3003401' + String(n).padStart(7, '0'));
      const serial = String(10000 + n).padStart(7, '0');
      if (!this.#subscribers.some((s) => s.imei === imei || s.serial === serial)) return { imei, serial };
    }
  }

  mailbox(imei: string): Mailbox {
    let box = this.#mailboxes.get(imei);
    if (!box) {
      box = { queue: [], lastMtmsn: 0 };
      this.#mailboxes.set(imei, box);
    }
    return box;
  }

  /** MT messages waiting for this IMEI. */
  queued(imei: string): number {
    return this.#mailboxes.get(imei)?.queue.length ?? 0;
  }

  /** Queues an MT message, as the Rock7 web service or an email to the GSS does, and rings
   *  the modem. Text is sent as UTF-8. */
  queueMt(imei: string, payload: Uint8Array | string): void {
    const bytes = typeof payload === 'string' ? new Uint8Array(Buffer.from(payload, 'utf8')) : payload.slice();
    // iridium-sbd.md 3.6: a 9602/9603 takes at most 270 bytes; the gateway refuses more.
    if (bytes.length < 1 || bytes.length > MAX_MT_BYTES) throw new RangeError(`MT message for ${imei}: expected 1 to ${MAX_MT_BYTES} bytes, got ${bytes.length}`);
    this.mailbox(imei).queue.push({ payload: bytes, queuedAt: this.clock.now() });
    this.counters.mtQueued++;
    this.emit('mt-queued', imei, bytes);
    this.#subscribers.find((s) => s.imei === imei)?.ringAlert();
  }

  /** A session's MO part, once the sky let it through: records the message. */
  receiveMo(from: IridiumSubscriber, payload: Uint8Array, momsn: number, duplicate: boolean): MoRecord {
    const record: MoRecord = { imei: from.imei, serial: from.serial, momsn, payload: payload.slice(), at: this.clock.now(), duplicate, forwardedTo: null };
    this.counters.moReceived++;
    if (duplicate) this.counters.duplicateMo++;
    const rb = rockblockDestination(payload);
    const to = rb === null ? undefined : this.#subscribers.find((s) => s.serial === rb);
    let forward: Uint8Array | null = null;
    if (to) {
      // The receiver sees who wrote: `RB` + the sender's serial, then the rest of the payload.
      const f = Uint8Array.from([...Buffer.from(`RB${from.serial}`, 'latin1'), ...payload.subarray(9)]);
      if (f.length <= MAX_MT_BYTES) {
        forward = f;
        record.forwardedTo = to.imei;
        this.counters.forwarded++;
      } else this.counters.undeliverable++; // an MO of 271-340 bytes fits no MT (iridium-sbd.md 3.6)
    }
    this.received.push(record);
    this.emit('mo', record);
    if (forward && to) this.queueMt(to.imei, forward);
    return record;
  }

  /** A session's MT part: the oldest waiting message (with its MTMSN) and how many remain. */
  deliverMt(imei: string): { message: Uint8Array; mtmsn: number; remaining: number } | null {
    const box = this.mailbox(imei);
    const next = box.queue.shift();
    if (!next) return null;
    // iridium-sbd.md 3.3: MTMSN wraps at 65535.
    box.lastMtmsn = (box.lastMtmsn + 1) & 0xffff;
    this.counters.mtDelivered++;
    return { message: next.payload, mtmsn: box.lastMtmsn, remaining: box.queue.length };
  }

  /** Counts a session (the modem reports it; the gateway keeps fleet-wide numbers). */
  countSession(mo: number): void {
    this.counters.sessions++;
    if (!sessionSucceeded(mo)) this.counters.failedSessions++;
  }
}

/** `RB` + 7 ASCII digits at the start: the destination RockBLOCK's serial (iridium-sbd.md 3.6). */
export function rockblockDestination(payload: Uint8Array): string | null {
  if (payload.length < 9 || payload[0] !== 0x52 || payload[1] !== 0x42) return null;
  for (let i = 2; i < 9; i++) if (payload[i] < 0x30 || payload[i] > 0x39) return null;
  return Buffer.from(payload.subarray(2, 9)).toString('latin1');
}

function checkBars(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 5) throw new RangeError(`signal bars: expected 0 to 5, got ${n}`);
  return n;
}

/** Appends the Luhn check digit, as IMEIs have. */
export function withLuhn(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return body + String((10 - (sum % 10)) % 10);
}
