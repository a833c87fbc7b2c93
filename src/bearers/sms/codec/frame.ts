// The 27.005 PDU-mode frame: optional SMSC prefix, then the TPDU (3GPP TS 27.005 section 3.1
// <pdu>; docs/protocols/sms.md 4.2, 4.3, 4.8). Pure.

import { readSmsc, type SmsAddress } from './address.ts';
import { TP_MTI } from './constants.ts';
import { hexToOctets, OctetReader, PduError } from './octets.ts';

export interface PduOptions {
  /** Whether the hex starts with the SMSC prefix. 27.005 PDUs from +CMGR, +CMGL and +CMT do;
   *  default true. */
  smsc?: boolean;
  /** The <length> the header line gave (TPDU octets, SMSC excluded). When set, it decides
   *  whether a prefix is present (some modems leave it out of +CDS) and is checked. */
  tpduLength?: number;
}

/** Hex to a reader positioned at the TPDU's first octet, with the SMSC read. Throws PduError. */
export function openPdu(hex: string, options: PduOptions = {}): { smsc: SmsAddress | null; r: OctetReader } {
  const parsed = hexToOctets(hex);
  if (!parsed.ok) throw new PduError(null, parsed.error);
  const bytes = parsed.value;
  if (bytes.length === 0) throw new PduError(null, 'PDU is empty');
  const { tpduLength } = options;
  let hasSmsc = options.smsc ?? true;
  if (tpduLength !== undefined) {
    if (!Number.isInteger(tpduLength) || tpduLength < 0) throw new RangeError(`tpduLength must be a non-negative integer, got ${tpduLength}`);
    if (bytes.length === tpduLength) hasSmsc = false;
    else if (bytes.length < tpduLength) throw new PduError(bytes.length, `PDU has ${bytes.length} octets, the header said ${tpduLength} TPDU octets`);
    else hasSmsc = true;
  }
  const head = new OctetReader(bytes);
  const smsc = hasSmsc ? readSmsc(head) : null;
  if (tpduLength !== undefined && head.remaining !== tpduLength) {
    throw new PduError(0, `SMSC prefix of ${head.pos} octets leaves ${head.remaining} TPDU octets, the header said ${tpduLength}`);
  }
  if (head.remaining === 0) throw new PduError(head.pos, 'PDU ends before the TPDU first octet');
  return { smsc, r: head };
}

/** openPdu for one message type: also reads the TPDU's first octet, and fails (naming that
 *  octet) when its TP-MTI says another type. */
export function openTpdu(hex: string, options: PduOptions | undefined, type: 'DELIVER' | 'SUBMIT' | 'STATUS_REPORT'): { smsc: SmsAddress | null; r: OctetReader; first: number } {
  const { smsc, r } = openPdu(hex, options);
  const firstAt = r.at;
  const first = r.u8('first octet');
  if ((first & 0x03) !== TP_MTI[type]) r.fail(`TP-MTI ${first & 0x03} is not SMS-${type.replace('_', '-')} (${TP_MTI[type]})`, firstAt);
  return { smsc, r, first };
}
