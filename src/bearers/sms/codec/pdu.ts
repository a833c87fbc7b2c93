// Any PDU read from storage (+CMGR, +CMGL) or announced (+CMT, +CDS), dispatched on TP-MTI
// (3GPP TS 23.040 9.2.3.1; docs/protocols/sms.md 4.3, 4.8). Stored messages are DELIVERs and
// STATUS-REPORTs received, and SUBMITs the host stored (stat 2 and 3). Pure.

import { TP_MTI } from './constants.ts';
import { decodeDeliver, type SmsDeliver } from './deliver.ts';
import { openPdu, type PduOptions } from './frame.ts';
import { type Decoded, decodeWith } from './octets.ts';
import { decodeStatusReport, type SmsStatusReport } from './status-report.ts';
import { decodeSubmit, type SmsSubmit } from './submit.ts';

export type SmsPdu = SmsDeliver | SmsSubmit | SmsStatusReport;

export function decodePdu(hex: string, options?: PduOptions): Decoded<SmsPdu> {
  const mti = decodeWith(() => {
    const { r } = openPdu(hex, options);
    return { mti: r.bytes[r.pos] & 0x03, at: r.at };
  });
  if (!mti.ok) return mti;
  switch (mti.value.mti) {
    case TP_MTI.DELIVER:
      return decodeDeliver(hex, options);
    case TP_MTI.SUBMIT:
      return decodeSubmit(hex, options);
    case TP_MTI.STATUS_REPORT:
      return decodeStatusReport(hex, options);
    default:
      return { ok: false, error: `TP-MTI 3 is reserved at octet ${mti.value.at}` };
  }
}
