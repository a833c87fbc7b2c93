// SMS-DELIVER (3GPP TS 23.040 9.2.2.1): what +CMT, +CMGR and +CMGL give for a received
// message in PDU mode, SMSC prefix first (docs/protocols/sms.md 4.3, 4.8). Pure.

import { encodeAddress, encodeSmsc, readAddress, type SmsAddress } from './address.ts';
import { FIRST_OCTET, TP_MTI } from './constants.ts';
import { decodeDcs, type DataCoding } from './dcs.ts';
import { openTpdu, type PduOptions } from './frame.ts';
import { type Decoded, decodeWith, octetsToHex } from './octets.ts';
import type { SmsPart } from './split.ts';
import { encodeTimestamp, readTimestampOrNull, type SmsTimestamp } from './timestamp.ts';
import { readUserData, type UserData } from './user-data.ts';

export interface SmsDeliver {
  type: 'deliver';
  smsc: SmsAddress | null;
  originator: SmsAddress;
  pid: number;
  coding: DataCoding;
  /** TP-SCTS; null (with a warning) when present but malformed. */
  timestamp: SmsTimestamp | null;
  /** TP-MMS inverted: true when the SC has more messages waiting. */
  moreMessages: boolean;
  /** TP-SRI: the sender asked for a status report. */
  statusReportIndication: boolean;
  replyPath: boolean;
  loopPrevention: boolean;
  userData: UserData;
  /** What was wrong but did not stop decoding, each naming its octet. */
  warnings: string[];
}

/** Decodes an SMS-DELIVER. */
export function decodeDeliver(hex: string, options?: PduOptions): Decoded<SmsDeliver> {
  return decodeWith(() => {
    const { smsc, r, first } = openTpdu(hex, options, 'DELIVER');
    const warnings: string[] = [];
    const originator = readAddress(r, 'TP-OA');
    const pid = r.u8('TP-PID');
    const coding = decodeDcs(r.u8('TP-DCS'));
    const timestamp = readTimestampOrNull(r, 'TP-SCTS', warnings);
    const userData = readUserData(r, coding, (first & FIRST_OCTET.UDHI) !== 0);
    if (!coding.known) warnings.push(`TP-DCS ${coding.dcs.toString(16).padStart(2, '0').toUpperCase()} is reserved: user data kept as octets`);
    return {
      type: 'deliver' as const,
      smsc,
      originator,
      pid,
      coding,
      timestamp,
      moreMessages: (first & FIRST_OCTET.MMS) === 0,
      statusReportIndication: (first & FIRST_OCTET.SRR) !== 0,
      replyPath: (first & FIRST_OCTET.RP) !== 0,
      loopPrevention: (first & FIRST_OCTET.LP) !== 0,
      userData,
      warnings,
    };
  });
}

export interface DeliverOptions {
  /** "+<digits>", digits, or an alphanumeric sender (at most 11 GSM-7 septets). */
  originator: string;
  /** The SC's timestamp and the offset it is shown at (minutes, a multiple of 15). */
  timestamp: Date;
  offsetMinutes?: number;
  /** null: prefix `00`. The simulator passes its SMSC, as a network would. */
  smsc?: string | null;
  pid?: number;
  /** TP-MMS is set (no more messages) unless this is true. */
  moreMessages?: boolean;
  statusReportIndication?: boolean;
}

/** One part's SMS-DELIVER, as the modem simulator hands it to the host. */
export function encodeDeliver(part: SmsPart, options: DeliverOptions): { hex: string; tpduLength: number } {
  let first = TP_MTI.DELIVER;
  if (!options.moreMessages) first |= FIRST_OCTET.MMS;
  if (options.statusReportIndication) first |= FIRST_OCTET.SRR;
  if (part.udhi) first |= FIRST_OCTET.UDHI;
  const pid = options.pid ?? 0;
  if (!Number.isInteger(pid) || pid < 0 || pid > 255) throw new RangeError(`pid must be an octet, got ${pid}`);
  const tpdu = Uint8Array.of(
    first,
    ...encodeAddress(options.originator),
    pid,
    part.dcs,
    ...encodeTimestamp(options.timestamp, options.offsetMinutes ?? 0),
    part.udl,
    ...part.userData,
  );
  const smsc = encodeSmsc(options.smsc ?? null);
  return { hex: octetsToHex(smsc) + octetsToHex(tpdu), tpduLength: tpdu.length };
}
