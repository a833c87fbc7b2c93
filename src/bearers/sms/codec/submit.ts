// SMS-SUBMIT (3GPP TS 23.040 9.2.2.2): what AT+CMGS=<length> takes in PDU mode, and what
// +CMGR gives for a stored outgoing message (docs/protocols/sms.md 4.2, 4.8). Pure.

import { CTRL_Z } from '../../shared/codec/at.ts';
import { encodeAddress, encodeSmsc, readAddress, type SmsAddress } from './address.ts';
import { FIRST_OCTET, TP_MTI, VP_RELATIVE_24H } from './constants.ts';
import { decodeDcs, type DataCoding } from './dcs.ts';
import { openTpdu, type PduOptions } from './frame.ts';
import { type Decoded, decodeWith, octetsToHex } from './octets.ts';
import type { SmsPart } from './split.ts';
import { readTimestamp, type SmsTimestamp } from './timestamp.ts';
import { readUserData, type UserData } from './user-data.ts';

export interface SubmitOptions {
  /** "+<digits>" (type 0x91) or digits (0x81); normalise it first (normalizeNumber). */
  destination: string;
  /** null (default): the SMSC stored in the modem (prefix `00`); else "+<digits>". */
  smsc?: string | null;
  /** TP-SRR: ask for a status report. */
  statusReport?: boolean;
  /** TP-RD. */
  rejectDuplicates?: boolean;
  /** TP-VP relative octet (relativeValidity()); default 0xA7 = 24 h; null sends none (VPF 00). */
  validity?: number | null;
  /** TP-MR; 0 by default, the modem fills it in and answers it in +CMGS. */
  messageReference?: number;
  /** TP-PID; 0 (default) = plain short message. */
  pid?: number;
}

export interface SubmitPdu {
  /** SMSC prefix + TPDU, upper-case hex: the line written after the `> ` prompt. */
  hex: string;
  /** Octets of the TPDU alone: the <length> of AT+CMGS (27.005 3.5.1). */
  tpduLength: number;
}

const octet = (name: string, v: number) => {
  if (!Number.isInteger(v) || v < 0 || v > 255) throw new RangeError(`${name} must be an octet 0-255, got ${v}`);
  return v;
};

/** One part's SMS-SUBMIT. First octet: MTI 01, RD, VPF 10 (relative) unless validity is null,
 *  SRR, UDHI when the part has a header. */
export function encodeSubmit(part: SmsPart, options: SubmitOptions): SubmitPdu {
  // A destination is a number: an alphanumeric TP-DA is for senders only (23.040 9.1.2.5).
  if (!/^\+?[0-9*#]+$/.test(options.destination)) throw new RangeError(`destination ${JSON.stringify(options.destination)} must be digits, optionally starting with +`);
  const validity = options.validity === undefined ? VP_RELATIVE_24H : options.validity;
  let first = TP_MTI.SUBMIT;
  if (options.rejectDuplicates) first |= FIRST_OCTET.RD;
  if (validity !== null) first |= FIRST_OCTET.VPF_RELATIVE;
  if (options.statusReport) first |= FIRST_OCTET.SRR;
  if (part.udhi) first |= FIRST_OCTET.UDHI;
  const tpdu = Uint8Array.of(
    first,
    octet('messageReference', options.messageReference ?? 0),
    ...encodeAddress(options.destination),
    octet('pid', options.pid ?? 0),
    octet('dcs', part.dcs),
    ...(validity === null ? [] : [octet('validity', validity)]),
    octet('udl', part.udl),
    ...part.userData,
  );
  const smsc = encodeSmsc(options.smsc ?? null);
  const all = new Uint8Array(smsc.length + tpdu.length);
  all.set(smsc);
  all.set(tpdu, smsc.length);
  return { hex: octetsToHex(all), tpduLength: tpdu.length };
}

/** TP-VP relative (23.040 9.2.3.12.1) for at least `minutes`, capped at 63 weeks:
 *  0-143 (n+1)*5 min, 144-167 12 h + (n-143)*30 min, 168-196 (n-166) days, 197-255 (n-192) weeks. */
export function relativeValidity(minutes: number): number {
  if (!(minutes >= 0)) throw new RangeError(`validity minutes must be >= 0, got ${minutes}`);
  if (minutes <= 720) return Math.max(0, Math.ceil(minutes / 5) - 1);
  if (minutes <= 1440) return 143 + Math.ceil((minutes - 720) / 30);
  if (minutes <= 30 * 1440) return Math.max(168, 166 + Math.ceil(minutes / 1440));
  return Math.min(255, Math.max(197, 192 + Math.ceil(minutes / 10080)));
}

/** Minutes a relative TP-VP octet stands for. */
export function relativeValidityMinutes(vp: number): number {
  if (vp <= 143) return (vp + 1) * 5;
  if (vp <= 167) return 720 + (vp - 143) * 30;
  if (vp <= 196) return (vp - 166) * 1440;
  return (vp - 192) * 10080;
}

export type Validity =
  | { format: 'none' }
  | { format: 'relative'; octet: number; minutes: number }
  | { format: 'absolute'; timestamp: SmsTimestamp }
  | { format: 'enhanced'; octets: Uint8Array };

export interface SmsSubmit {
  type: 'submit';
  smsc: SmsAddress | null;
  messageReference: number;
  destination: SmsAddress;
  pid: number;
  coding: DataCoding;
  validity: Validity;
  statusReport: boolean;
  rejectDuplicates: boolean;
  replyPath: boolean;
  userData: UserData;
}

/** Decodes an SMS-SUBMIT (the simulator's side of AT+CMGS; +CMGR of a stored outgoing message). */
export function decodeSubmit(hex: string, options?: PduOptions): Decoded<SmsSubmit> {
  return decodeWith(() => {
    const { smsc, r, first } = openTpdu(hex, options, 'SUBMIT');
    const messageReference = r.u8('TP-MR');
    const destination = readAddress(r, 'TP-DA');
    const pid = r.u8('TP-PID');
    const coding = decodeDcs(r.u8('TP-DCS'));
    const vpf = first & FIRST_OCTET.VPF_MASK;
    let validity: Validity = { format: 'none' };
    if (vpf === FIRST_OCTET.VPF_RELATIVE) {
      const vp = r.u8('TP-VP');
      validity = { format: 'relative', octet: vp, minutes: relativeValidityMinutes(vp) };
    } else if (vpf === FIRST_OCTET.VPF_ABSOLUTE) validity = { format: 'absolute', timestamp: readTimestamp(r, 'TP-VP') };
    else if (vpf === FIRST_OCTET.VPF_ENHANCED) validity = { format: 'enhanced', octets: r.take(7, 'TP-VP').slice() };
    const userData = readUserData(r, coding, (first & FIRST_OCTET.UDHI) !== 0);
    return {
      type: 'submit' as const,
      smsc,
      messageReference,
      destination,
      pid,
      coding,
      validity,
      statusReport: (first & FIRST_OCTET.SRR) !== 0,
      rejectDuplicates: (first & FIRST_OCTET.RD) !== 0,
      replyPath: (first & FIRST_OCTET.RP) !== 0,
      userData,
    };
  });
}

/** The body written after the `> ` prompt of AT+CMGS=<len> in PDU mode: the PDU in hex, then
 *  Ctrl-Z (docs/protocols/sms.md 4.2). The driver may write the last byte on its own. */
export function pduSubmitBody(hex: string): Uint8Array {
  if (!/^(?:[0-9A-Fa-f]{2})+$/.test(hex)) {
    throw new RangeError(`PDU must be an even number of hex digits, got ${JSON.stringify(hex.length > 40 ? hex.slice(0, 40) + '...' : hex)}`);
  }
  const out = new Uint8Array(hex.length + 1);
  for (let i = 0; i < hex.length; i++) out[i] = hex.charCodeAt(i);
  out[hex.length] = CTRL_Z;
  return out;
}
