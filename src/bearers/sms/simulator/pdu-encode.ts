import { encodeDeliver as codecEncodeDeliver } from '../codec/deliver.ts';
import { decodeDcs } from '../codec/dcs.ts';
import { hexToOctets } from '../codec/octets.ts';
import { planMessage, type SmsPart } from '../codec/split.ts';
import { encodeStatusReport as codecEncodeStatusReport } from '../codec/status-report.ts';
import { packSeptets } from '../codec/septets.ts';
import { udhSeptets } from '../codec/udh.ts';

// What the simulated network sends towards a modem: SMS-DELIVER and SMS-STATUS-REPORT TPDUs
// (3GPP TS 23.040 9.2.2.1 and 9.2.2.3), written with the bridge's codec
// (src/bearers/sms/codec/deliver.ts, status-report.ts, split.ts). What is the simulator's own
// is the SC's part: copying a submitted message's user data (header included) into a DELIVER
// unchanged, and time stamps from its clock. Gammu (test/bearers/sms/simulator/gammu.test.ts)
// checks the result independently of the codec. Pure.

/** User data as it travels: the DCS, an optional header (the IEs, without the UDHL octet),
 *  and the body as septet codes (GSM-7) or octets (8-bit, UCS-2). */
export interface UserData {
  dcs: number;
  header: Uint8Array | null;
  /** GSM-7: unpacked septet codes; otherwise octets. */
  body: Uint8Array;
}

/** True when the user data is GSM-7 packed (by coding group: 23.038 section 4). */
export function isSeptetCoding(dcs: number): boolean {
  const coding = decodeDcs(dcs);
  return coding.alphabet === 'gsm7' && !coding.compressed;
}

/** The user data as a codec part: TP-UDL and TP-UD (23.040 9.2.3.16, 9.2.3.24). With GSM-7
 *  the length counts septets, the header included, and the text starts on a septet boundary. */
export function toPart(ud: UserData, text: string | null = null): SmsPart {
  const header = ud.header && ud.header.length > 0 ? Uint8Array.of(ud.header.length, ...ud.header) : new Uint8Array(0);
  if (isSeptetCoding(ud.dcs)) {
    const { septets, fillBits } = header.length > 0 ? udhSeptets(header.length) : { septets: 0, fillBits: 0 };
    // The fill bits open the first octet after the header.
    return { dcs: ud.dcs, udhi: header.length > 0, udl: septets + ud.body.length, userData: Uint8Array.of(...header, ...packSeptets(ud.body, fillBits)), text };
  }
  return { dcs: ud.dcs, udhi: header.length > 0, udl: header.length + ud.body.length, userData: Uint8Array.of(...header, ...ud.body), text };
}

const tpduOf = (r: { hex: string }) => {
  // The codec writes `00` (no SMSC) first when given none; the TPDU follows.
  const parsed = hexToOctets(r.hex);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value.subarray(1);
};

export interface DeliverFields {
  /** "+<digits>" (international), digits (unknown), or alphanumeric text (23.040 9.1.2.5). */
  originator: string;
  /** Service centre time stamp, ms since the epoch, and the SC's zone in quarter hours. */
  sctsMs: number;
  tzQuarters?: number;
  pid?: number;
  part: SmsPart;
  /** TP-SRI: the sender asked for a status report. */
  statusReportIndication?: boolean;
}

/** An SMS-DELIVER TPDU (no SMSC prefix). */
export function encodeDeliver(f: DeliverFields): Uint8Array {
  return tpduOf(codecEncodeDeliver(f.part, {
    originator: f.originator, timestamp: new Date(f.sctsMs), offsetMinutes: (f.tzQuarters ?? 0) * 15,
    smsc: null, pid: f.pid ?? 0, statusReportIndication: f.statusReportIndication ?? false,
  }));
}

export interface StatusReportFields {
  /** TP-MR of the SUBMIT the report is about, and TP-RA, its recipient. */
  messageReference: number;
  recipient: string;
  /** When the SC took the SUBMIT (TP-SCTS) and reached its outcome (TP-DT). */
  sctsMs: number;
  dischargeMs: number;
  tzQuarters?: number;
  /** TP-ST (23.040 9.2.3.15). */
  status: number;
}

/** An SMS-STATUS-REPORT TPDU (no SMSC prefix). */
export function encodeStatusReport(f: StatusReportFields): Uint8Array {
  return tpduOf(codecEncodeStatusReport({
    messageReference: f.messageReference & 0xff, recipient: f.recipient, timestamp: new Date(f.sctsMs),
    discharge: new Date(f.dischargeMs), offsetMinutes: (f.tzQuarters ?? 0) * 15, status: f.status, smsc: null,
  }));
}

/** Text as the parts a phone would send: GSM-7 when every character has a code, else UCS-2,
 *  concatenated (8-bit reference `ref`) past one part (docs/protocols/sms.md 4.4). */
export function splitText(text: string, ref: number): SmsPart[] {
  const plan = planMessage(text, { reference: ref & 0xff });
  if (!plan.ok) throw new RangeError(plan.error);
  return plan.plan.parts;
}
