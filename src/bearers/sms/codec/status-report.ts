// SMS-STATUS-REPORT (3GPP TS 23.040 9.2.2.3): what +CDS gives, or +CMGR after +CDSI, for a
// message sent with TP-SRR (docs/protocols/sms.md 4.8). Pure.

import { encodeAddress, encodeSmsc, readAddress, type SmsAddress } from './address.ts';
import { classifyStatus, FIRST_OCTET, type StatusClass, TP_MTI } from './constants.ts';
import { decodeDcs } from './dcs.ts';
import { openTpdu, type PduOptions } from './frame.ts';
import { type Decoded, decodeWith, octetsToHex, PduError } from './octets.ts';
import { encodeTimestamp, readTimestampOrNull, type SmsTimestamp } from './timestamp.ts';
import { readUserData, type UserData } from './user-data.ts';

export interface SmsStatusReport {
  type: 'status-report';
  smsc: SmsAddress | null;
  /** TP-MR: the reference +CMGS answered for the submitted message. */
  messageReference: number;
  /** TP-RA: the submitted message's recipient. */
  recipient: SmsAddress;
  /** TP-SCTS: when the SC received the submitted message. */
  timestamp: SmsTimestamp | null;
  /** TP-DT: when it was delivered, or when the SC last tried / gave up. */
  discharge: SmsTimestamp | null;
  status: { value: number; class: StatusClass; name: string };
  /** TP-SRQ: the report is about an SMS-COMMAND, not an SMS-SUBMIT. */
  aboutCommand: boolean;
  moreMessages: boolean;
  pid: number | null;
  /** Optional user data (TP-PI bit 2); null when absent. */
  userData: UserData | null;
  warnings: string[];
}

/** Decodes an SMS-STATUS-REPORT. The optional tail (TP-PI and what it announces) is
 *  read leniently: when it is broken the report still decodes, with a warning. */
export function decodeStatusReport(hex: string, options?: PduOptions): Decoded<SmsStatusReport> {
  return decodeWith(() => {
    const { smsc, r, first } = openTpdu(hex, options, 'STATUS_REPORT');
    const warnings: string[] = [];
    const messageReference = r.u8('TP-MR');
    const recipient = readAddress(r, 'TP-RA');
    const timestamp = readTimestampOrNull(r, 'TP-SCTS', warnings);
    const discharge = readTimestampOrNull(r, 'TP-DT', warnings);
    const st = r.u8('TP-ST');
    let pid: number | null = null;
    let userData: UserData | null = null;
    if (r.remaining > 0) {
      // TP-PI (23.040 9.2.3.27): bit 0 PID, bit 1 DCS, bit 2 UDL (and UD) follow; bit 7 says
      // another PI octet follows; reserved bits are ignored.
      const tailAt = r.pos;
      try {
        const pi = r.u8('TP-PI');
        for (let ext = pi; ext & 0x80; ) ext = r.u8('TP-PI extension');
        if (pi & 0x01) pid = r.u8('TP-PID');
        const coding = decodeDcs(pi & 0x02 ? r.u8('TP-DCS') : 0);
        if (pi & 0x04) userData = readUserData(r, coding, (first & FIRST_OCTET.UDHI) !== 0);
      } catch (e) {
        if (!(e instanceof PduError)) throw e;
        warnings.push(`optional part ignored: ${e.message}`);
        r.pos = tailAt;
        pid = null;
        userData = null;
      }
    }
    return {
      type: 'status-report' as const,
      smsc,
      messageReference,
      recipient,
      timestamp,
      discharge,
      status: { value: st, ...classifyStatus(st) },
      aboutCommand: (first & FIRST_OCTET.SRR) !== 0,
      moreMessages: (first & FIRST_OCTET.MMS) === 0,
      pid,
      userData,
      warnings,
    };
  });
}

export interface StatusReportOptions {
  messageReference: number;
  recipient: string;
  /** When the SC took the message, and when it discharged it. */
  timestamp: Date;
  discharge: Date;
  offsetMinutes?: number;
  status: number;
  smsc?: string | null;
}

/** An SMS-STATUS-REPORT without the optional tail, as the modem simulator sends it in +CDS. */
export function encodeStatusReport(o: StatusReportOptions): { hex: string; tpduLength: number } {
  for (const [name, v] of [['messageReference', o.messageReference], ['status', o.status]] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 255) throw new RangeError(`${name} must be an octet, got ${v}`);
  }
  const tpdu = Uint8Array.of(
    TP_MTI.STATUS_REPORT | FIRST_OCTET.MMS,
    o.messageReference,
    ...encodeAddress(o.recipient),
    ...encodeTimestamp(o.timestamp, o.offsetMinutes ?? 0),
    ...encodeTimestamp(o.discharge, o.offsetMinutes ?? 0),
    o.status,
  );
  return { hex: octetsToHex(encodeSmsc(o.smsc ?? null)) + octetsToHex(tpdu), tpduLength: tpdu.length };
}
