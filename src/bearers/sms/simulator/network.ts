import { EventEmitter } from 'node:events';
import { systemClock, type Clock } from '../../../lib/clock.ts';
import { hexToOctets } from '../codec/octets.ts';
import type { Concatenation } from '../codec/udh.ts';
import { Reassembler, type SubmittedMessage } from './messages.ts';
import { encodeDeliver, encodeStatusReport, splitText, toPart } from './pdu-encode.ts';

// A simulated operator, in process: modems attach with a phone number, SMS-SUBMITs from one
// become SMS-DELIVERs at another (with the SC's time stamp and the sender's number), status
// reports come back when TP-SRR was set, and tests inject messages "from the network side".
// Like a real SC it stores and forwards: a message to a modem that is not reachable (not
// registered, radio off, storage full) waits until the modem calls flush(). Every delivery
// goes through the clock, never re-entrantly inside submit().
//
// A number nobody attached is "outside" the simulation: its messages are kept (textsTo) and
// reported delivered. A number marked unreachable gets nothing and its senders get a failed
// status report: 0x41 "incompatible destination" (permanent) or 0x62 "no response from SME"
// (temporary, the SC gave up) (23.040 9.2.3.15).

/** TP-ST values the network reports (23.040 9.2.3.15; the codec's TP_STATUS_NAMES). */
export const TP_ST = { RECEIVED: 0x00, INCOMPATIBLE_DESTINATION: 0x41, NO_RESPONSE_GAVE_UP: 0x62 } as const;

/** What the network hands a modem. */
export interface NetworkMessage {
  kind: 'deliver' | 'status-report';
  /** The TPDU, without the SMSC prefix (the modem adds the SC's address, as 27.005 shows it). */
  tpdu: Uint8Array;
  /** The SC's address (AT+CSCA). */
  smsc: string;
  from: string;
  to: string;
  /** For logs and tests: the part's text (null for data or a report) and concatenation. */
  text: string | null;
  concat: Concatenation | null;
}

/** What the network needs from a modem on it. */
export interface SmsSubscriber {
  /** Registered, radio on, SIM ready: the network may hand it messages now. */
  readonly reachable: boolean;
  /** Takes one message; false = cannot now (storage full): the network keeps it until flush(). */
  receive(message: NetworkMessage): boolean;
}

export interface SmsNetworkOptions {
  clock?: Clock;
  /** The SC's address, which modems answer in AT+CSCA? (default +15550000000). */
  smsc?: string;
  /** From submit to delivery (default 0: the next timer turn). */
  deliveryDelayMs?: number;
  /** From the outcome to the status report (default 200 ms). */
  statusReportDelayMs?: number;
  /** The SC's time zone in quarter hours, for time stamps (default 0, UTC). */
  tzQuarters?: number;
}

export interface NetworkRecord {
  at: number;
  from: string;
  to: string;
  kind: 'deliver' | 'status-report';
  text: string | null;
  /** 'delivered', 'held' (waiting for the modem), 'outside' (no modem has the number),
   *  'failed' (marked unreachable). */
  outcome: 'delivered' | 'held' | 'outside' | 'failed';
}

interface Pending {
  message: NetworkMessage;
  /** Runs once the message is in the modem (or never, for a failure). */
  onDelivered: () => void;
}

/** Digits of a number, for matching "+15550000001" with "15550000001"; null for text. */
function numberKey(address: string): string | null {
  return /^\+?[0-9]+$/.test(address) ? address.replace(/^\+/, '') : null;
}

export class SmsNetwork extends EventEmitter {
  readonly clock: Clock;
  readonly smsc: string;
  readonly deliveryDelayMs: number;
  statusReportDelayMs: number;
  readonly tzQuarters: number;
  /** Every hand-over and its outcome, oldest first (the last 1000). */
  readonly log: NetworkRecord[] = [];
  readonly #subscribers = new Map<string, { number: string; subscriber: SmsSubscriber }>();
  readonly #held = new Map<string, Pending[]>();
  readonly #unreachable = new Map<string, number>();
  readonly #texts = new Map<string, string[]>();
  readonly #reassembler = new Reassembler();
  #nextNumber = 1;
  #nextRef = 0;

  constructor(options: SmsNetworkOptions = {}) {
    super();
    this.clock = options.clock ?? systemClock;
    this.smsc = options.smsc ?? '+15550000000';
    this.deliveryDelayMs = options.deliveryDelayMs ?? 0;
    this.statusReportDelayMs = options.statusReportDelayMs ?? 200;
    this.tzQuarters = options.tzQuarters ?? 0;
  }

  /** Attaches a modem under `number` (E.164, "+<digits>"), or the next free +1555000000N. */
  attach(subscriber: SmsSubscriber, number?: string): string {
    if (number !== undefined) {
      if (!/^\+[1-9][0-9]{2,14}$/.test(number)) throw new RangeError(`number must be E.164 ("+" and 3-15 digits), got ${JSON.stringify(number)}`);
    } else {
      do number = `+1555${String(this.#nextNumber++).padStart(7, '0')}`;
      while (this.#subscribers.has(numberKey(number)!));
    }
    const key = numberKey(number)!;
    const other = this.#subscribers.get(key);
    if (other && other.subscriber !== subscriber) throw new Error(`${number} is already attached to this network`);
    this.#subscribers.set(key, { number, subscriber });
    return number;
  }

  detach(subscriber: SmsSubscriber): void {
    for (const [key, entry] of this.#subscribers) if (entry.subscriber === subscriber) this.#subscribers.delete(key);
  }

  /** The numbers attached now. */
  get numbers(): string[] {
    return [...this.#subscribers.values()].map((e) => e.number);
  }

  /** Marks a number unreachable: 'permanent' (TP-ST 0x41), 'temporary' (0x62) or a TP-ST of
   *  your own (0x20-0x7F); false makes it reachable again. */
  setUnreachable(number: string, how: 'permanent' | 'temporary' | number | false = 'permanent'): void {
    const key = numberKey(number) ?? number;
    if (how === false) this.#unreachable.delete(key);
    else this.#unreachable.set(key, how === 'permanent' ? TP_ST.INCOMPATIBLE_DESTINATION : how === 'temporary' ? TP_ST.NO_RESPONSE_GAVE_UP : how);
  }

  /** A modem sent a message (AT+CMGS accepted it with reference `mr`). */
  submit(from: string, mr: number, message: SubmittedMessage): void {
    const sctsMs = this.clock.now();
    const deliver: NetworkMessage = {
      kind: 'deliver',
      tpdu: encodeDeliver({ originator: from, sctsMs, tzQuarters: this.tzQuarters, pid: message.pid, part: toPart(message.userData, message.text), statusReportIndication: message.statusReport }),
      smsc: this.smsc,
      from,
      to: message.to,
      text: message.text,
      concat: message.concat,
    };
    this.emit('submitted', from, message, mr);
    const report = (status: number) => {
      if (!message.statusReport) return;
      this.clock.setTimeout(() => {
        const now = this.clock.now();
        const tpdu = encodeStatusReport({ messageReference: mr, recipient: message.to, sctsMs, dischargeMs: now, tzQuarters: this.tzQuarters, status });
        this.#handOver({ kind: 'status-report', tpdu, smsc: this.smsc, from: message.to, to: from, text: null, concat: null }, () => {});
      }, this.statusReportDelayMs);
    };
    this.clock.setTimeout(() => {
      const refused = this.#unreachable.get(numberKey(message.to) ?? message.to);
      if (refused !== undefined) {
        this.#record(deliver, 'failed');
        report(refused);
        return;
      }
      this.#handOver(deliver, () => report(TP_ST.RECEIVED), true);
    }, this.deliveryDelayMs);
  }

  /** A message "from the network side" to `to`: text (split into parts as a phone would:
   *  GSM-7 or UCS-2, concatenated past one part), or SMS-DELIVER TPDUs as given (hex or
   *  bytes, without the SMSC prefix). `from` may be alphanumeric ("Fieldbridge"). Returns
   *  the number of parts. */
  inject(from: string, to: string, content: string | readonly (string | Uint8Array)[]): number {
    const sctsMs = this.clock.now();
    const parts: NetworkMessage[] = [];
    if (typeof content === 'string') {
      for (const part of splitText(content, this.#nextRef++ & 0xff)) {
        const tpdu = encodeDeliver({ originator: from, sctsMs, tzQuarters: this.tzQuarters, part });
        parts.push({ kind: 'deliver', tpdu, smsc: this.smsc, from, to, text: part.text, concat: null });
      }
    } else {
      for (const pdu of content) {
        let tpdu: Uint8Array;
        if (typeof pdu === 'string') {
          const parsed = hexToOctets(pdu);
          if (!parsed.ok) throw new RangeError(`inject: ${parsed.error}`);
          tpdu = parsed.value;
        } else tpdu = pdu.slice();
        parts.push({ kind: 'deliver', tpdu, smsc: this.smsc, from, to, text: null, concat: null });
      }
    }
    if (typeof content === 'string') this.#remember(to, content);
    this.clock.setTimeout(() => {
      for (const p of parts) this.#handOver(p, () => {});
    }, this.deliveryDelayMs);
    return parts.length;
  }

  /** The modem behind `number` can take messages again: hands over what waited for it. */
  flush(number: string): void {
    const key = numberKey(number) ?? number;
    const held = this.#held.get(key);
    const entry = this.#subscribers.get(key);
    if (!held || !entry) return;
    while (held.length > 0 && entry.subscriber.reachable) {
      if (!entry.subscriber.receive(held[0].message)) break;
      const p = held.shift()!;
      this.#record(p.message, 'delivered');
      p.onDelivered();
    }
    if (held.length === 0) this.#held.delete(key);
  }

  /** Messages waiting for the modem behind `number`. */
  heldFor(number: string): number {
    return this.#held.get(numberKey(number) ?? number)?.length ?? 0;
  }

  /** Whole texts sent to `number` (reassembled from their parts), oldest first: what modems
   *  submitted and what inject() sent as text. */
  textsTo(number: string): string[] {
    return [...(this.#texts.get(numberKey(number) ?? number) ?? [])];
  }

  #remember(to: string, text: string): void {
    const key = numberKey(to) ?? to;
    const list = this.#texts.get(key) ?? [];
    list.push(text);
    this.#texts.set(key, list);
    this.emit('text', to, text);
  }

  /** `reassemble`: a modem's part, to put together for textsTo() (inject() remembers its text whole). */
  #handOver(message: NetworkMessage, onDelivered: () => void, reassemble = false): void {
    const key = numberKey(message.to) ?? message.to;
    const entry = this.#subscribers.get(key);
    if (reassemble && message.text !== null) {
      const whole = this.#reassembler.push(`${message.from}>${key}`, message.text, message.concat);
      if (whole !== null) this.#remember(message.to, whole);
    }
    if (!entry) {
      this.#record(message, 'outside');
      onDelivered();
      return;
    }
    const queue = this.#held.get(key);
    if (!queue?.length && entry.subscriber.reachable && entry.subscriber.receive(message)) {
      this.#record(message, 'delivered');
      onDelivered();
      return;
    }
    const list = queue ?? [];
    list.push({ message, onDelivered });
    this.#held.set(key, list);
    this.#record(message, 'held');
  }

  #record(message: NetworkMessage, outcome: NetworkRecord['outcome']): void {
    this.log.push({ at: this.clock.now(), from: message.from, to: message.to, kind: message.kind, text: message.text, outcome });
    if (this.log.length > 1000) this.log.shift();
    this.emit(outcome, message);
  }
}
