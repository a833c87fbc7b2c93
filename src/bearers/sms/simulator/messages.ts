import { gsm7Septets, toGsm7 } from '../../shared/codec/gsm7.ts';
import type { Concatenation } from '../codec/udh.ts';
import { decodeSubmit } from '../codec/submit.ts';
import type { PduOptions } from '../codec/frame.ts';
import { textToUcs2 } from '../codec/septets.ts';
import { isSeptetCoding, type UserData } from './pdu-encode.ts';

// One short message as the simulated network carries it: from an SMS-SUBMIT (PDU mode, read
// with the bridge's codec) or from a text-mode AT+CMGS, to the SMS-DELIVER the destination
// stores. The SC copies TP-PID, TP-DCS and the user data (header included) unchanged
// (23.040 9.2.2.1); the rest is the SC's (time stamp, originator).

export interface SubmittedMessage {
  /** TP-DA as the sender wrote it ("+<digits>", digits, or text). */
  to: string;
  /** TP-SRR. */
  statusReport: boolean;
  pid: number;
  userData: UserData;
  /** The text of this part (null for 8-bit data), and its place in a concatenated message. */
  text: string | null;
  concat: Concatenation | null;
}

/** An SMS-SUBMIT PDU (SMSC prefix included, as after the `> ` prompt) to a message, or the
 *  reason it cannot be one. `tpduLength` is the <length> of AT+CMGS, which must match. */
export function readSubmitPdu(hex: string, options: PduOptions = {}): { ok: true; message: SubmittedMessage } | { ok: false; error: string } {
  const decoded = decodeSubmit(hex, options);
  if (!decoded.ok) return decoded;
  const s = decoded.value;
  const udh = s.userData.udh;
  const header = udh ? Uint8Array.from(udh.elements.flatMap((e) => [e.iei, e.data.length, ...e.data])) : null;
  let body: Uint8Array;
  if (s.userData.text === null) body = s.userData.data ?? new Uint8Array(0);
  else if (isSeptetCoding(s.coding.dcs)) body = gsm7Septets(s.userData.text) ?? gsm7Septets(toGsm7(s.userData.text))!;
  else body = textToUcs2(s.userData.text);
  return {
    ok: true,
    message: {
      to: s.destination.address,
      statusReport: s.statusReport,
      pid: s.pid,
      userData: { dcs: s.coding.dcs, header, body },
      text: s.userData.text,
      concat: udh?.concat ?? null,
    },
  };
}

/** Puts the parts of concatenated messages back together (23.040 9.2.3.24.1), per sender:
 *  a message is complete when every sequence number of its reference has come. */
export class Reassembler {
  readonly #pending = new Map<string, { total: number; parts: Map<number, string> }>();

  /** Returns the whole text once the last part is in, else null. */
  push(from: string, text: string, concat: Concatenation | null): string | null {
    if (!concat || concat.total <= 1) return text;
    const key = `${from}\u0000${concat.referenceBits}:${concat.reference}:${concat.total}`;
    let entry = this.#pending.get(key);
    if (!entry) {
      entry = { total: concat.total, parts: new Map() };
      this.#pending.set(key, entry);
    }
    entry.parts.set(concat.sequence, text);
    if (entry.parts.size < entry.total) return null;
    this.#pending.delete(key);
    let whole = '';
    for (let i = 1; i <= entry.total; i++) whole += entry.parts.get(i) ?? '';
    return whole;
  }

  get incomplete(): number {
    return this.#pending.size;
  }
}
