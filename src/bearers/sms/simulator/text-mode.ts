import { GSM7_DEFAULT_ALPHABET, gsm7Septets, isGsm7 } from '../../shared/codec/gsm7.ts';
import { decodeDeliver } from '../codec/deliver.ts';
import { octetsToHex } from '../codec/octets.ts';
import { textToUcs2, ucs2ToText } from '../codec/septets.ts';
import { decodeStatusReport } from '../codec/status-report.ts';
import type { SmsTimestamp } from '../codec/timestamp.ts';
import { encodeSmsc } from '../codec/address.ts';
import type { UserData } from './pdu-encode.ts';
import { STAT_NAMES, type StoredMessage } from './storage.ts';

// Text mode (AT+CMGF=1) of the simulated modem: how stored and arriving messages are shown
// (27.005 3.4.1 +CMT/+CDS, 3.4.2 +CMGL, 3.4.3 +CMGR, with AT+CSDH=1 details) and how a
// text-mode AT+CMGS body becomes user data. Strings follow AT+CSCS (27.007 5.5): "GSM" is
// one byte per GSM 03.38 code (docs/protocols/sms.md 4.1), "IRA" ASCII, "8859-1" Latin-1,
// "UCS2" four hex digits per UTF-16 unit. UCS-2 and 8-bit messages are shown as hex whatever
// the character set (27.005 3.1 <data>). Simplification: a user data header is not shown.

export const CHARSETS = ['GSM', 'IRA', '8859-1', 'UCS2'] as const;

interface Shown {
  cscs: string;
  csdh: number;
}

/** Text in the TE character set, as the bytes (one per char, latin1) the modem writes. */
export function toCharset(text: string, cscs: string): string {
  if (cscs === 'UCS2') return octetsToHex(textToUcs2(text));
  if (cscs === 'GSM') {
    const septets = gsm7Septets(text);
    return septets === null ? text.replace(/[^\x20-\x7e]/g, '?') : String.fromCharCode(...septets);
  }
  if (cscs === '8859-1') return text.replace(/[^\x00-\xff]/g, '?');
  return text.replace(/[^\x00-\x7f]/g, '?');
}

/** Bytes the host wrote (latin1 string) in the TE character set back to text; null when
 *  they are not valid in it (UCS2 that is not hex). */
export function fromCharset(bytes: string, cscs: string): string | null {
  if (cscs === 'UCS2') {
    if (!/^(?:[0-9A-Fa-f]{4})*$/.test(bytes)) return null;
    return ucs2ToText(Uint8Array.from(Buffer.from(bytes, 'hex')));
  }
  if (cscs === 'GSM') {
    let out = '';
    for (const ch of bytes) {
      const code = ch.charCodeAt(0);
      out += code < 0x80 ? GSM7_DEFAULT_ALPHABET[code] : '?';
    }
    return out;
  }
  return bytes;
}

/** "yy/MM/dd,hh:mm:ss+zz", zz in quarter hours (27.005 3.1 <scts>). */
function scts(t: SmsTimestamp | null): string {
  if (!t) return '';
  const m = /^\d\d(\d\d)-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)/.exec(t.local);
  if (!m) return '';
  const q = t.offsetMinutes / 15;
  return `${m[1]}/${m[2]}/${m[3]},${m[4]}:${m[5]}:${m[6]}${q < 0 ? '-' : '+'}${String(Math.abs(q)).padStart(2, '0')}`;
}

const pduOf = (m: { smsc: string | null; tpdu: Uint8Array }) => octetsToHex(encodeSmsc(m.smsc)) + octetsToHex(m.tpdu);

/** The header fields and data of a DELIVER in text mode; null when it does not decode. */
function deliverFields(pdu: string, shown: Shown): { oa: string; toa: number; scts: string; details: string; data: string } | null {
  const d = decodeDeliver(pdu);
  if (!d.ok) return null;
  const v = d.value;
  const tpduStart = 2 + 2 * Number.parseInt(pdu.slice(0, 2), 16);
  const fo = Number.parseInt(pdu.slice(tpduStart, tpduStart + 2), 16);
  // UCS-2 as hex of its UTF-16 units, 8-bit as hex of its octets; GSM-7 in the TE character
  // set (a concatenation header is left out: the host learns of it in PDU mode only).
  let data: string;
  if (v.userData.text === null) data = octetsToHex(v.userData.data ?? new Uint8Array(0));
  else if (v.coding.alphabet === 'ucs2') data = octetsToHex(textToUcs2(v.userData.text));
  else data = toCharset(v.userData.text, shown.cscs);
  const length = v.userData.text !== null && v.coding.alphabet === 'gsm7' ? v.userData.text.length : data.length / 2;
  const sca = v.smsc ? `"${v.smsc.address}",${v.smsc.typeOfAddress}` : ',';
  const details = `${v.originator.typeOfAddress},${fo},${v.pid},${v.coding.dcs},${sca},${length}`;
  return { oa: v.originator.address, toa: v.originator.typeOfAddress, scts: scts(v.timestamp), details, data };
}

/** <fo>,<mr>,"<ra>",<tora>,"<scts>","<dt>",<st> of a status report (27.005 3.4.1 +CDS). */
function reportFields(pdu: string): string | null {
  const r = decodeStatusReport(pdu);
  if (!r.ok) return null;
  const v = r.value;
  const tpduStart = 2 + 2 * Number.parseInt(pdu.slice(0, 2), 16);
  const fo = Number.parseInt(pdu.slice(tpduStart, tpduStart + 2), 16);
  return `${fo},${v.messageReference},"${v.recipient.address}",${v.recipient.typeOfAddress},"${scts(v.timestamp)}","${scts(v.discharge)}",${v.status.value}`;
}

/** +CMGR in text mode: the header line and the data line. */
export function cmgrText(m: StoredMessage, shown: Shown): string[] {
  const stat = `"${STAT_NAMES[m.stat]}"`;
  const pdu = pduOf(m);
  if (m.kind === 'status-report') return [`+CMGR: ${stat},${reportFields(pdu) ?? ''}`];
  const f = deliverFields(pdu, shown);
  if (!f) return [`+CMGR: ${stat},"",,""`, ''];
  return [`+CMGR: ${stat},"${f.oa}",,"${f.scts}"${shown.csdh ? `,${f.details}` : ''}`, f.data];
}

/** One +CMGL entry in text mode. */
export function cmglText(m: StoredMessage, shown: Shown): string[] {
  const stat = `"${STAT_NAMES[m.stat]}"`;
  const pdu = pduOf(m);
  if (m.kind === 'status-report') return [`+CMGL: ${m.index},${stat},${reportFields(pdu) ?? ''}`];
  const f = deliverFields(pdu, shown);
  if (!f) return [`+CMGL: ${m.index},${stat},"",,""`, ''];
  const length = f.details.split(',').pop();
  return [`+CMGL: ${m.index},${stat},"${f.oa}",,"${f.scts}"${shown.csdh ? `,${f.toa},${length}` : ''}`, f.data];
}

/** +CMT in text mode (27.005 3.4.1): header and data. */
export function cmtText(pdu: string, shown: Shown): string {
  const f = deliverFields(pdu, shown);
  if (!f) return '+CMT: "",,""\r\n';
  return `+CMT: "${f.oa}",,"${f.scts}"${shown.csdh ? `,${f.details}` : ''}\r\n${f.data}`;
}

/** +CDS in text mode. */
export function cdsText(pdu: string): string {
  return `+CDS: ${reportFields(pdu) ?? ''}`;
}

/** A text-mode AT+CMGS body as user data, by the DCS of AT+CSMP (27.005 3.3.2): GSM-7 text in
 *  the TE character set, or hex for UCS-2 and 8-bit. Null when it does not fit one message. */
export function textBodyToUserData(body: string, dcs: number, cscs: string): { userData: UserData; text: string | null } | null {
  const alphabet = (dcs & 0x0c) >> 2;
  if (alphabet === 0) {
    const text = fromCharset(body, cscs);
    if (text === null || !isGsm7(text)) return null;
    const septets = gsm7Septets(text)!;
    if (septets.length > 160) return null;
    return { userData: { dcs, header: null, body: septets }, text };
  }
  if (!/^(?:[0-9A-Fa-f]{2})*$/.test(body) || body.length / 2 > 140) return null;
  const octets = Uint8Array.from(Buffer.from(body, 'hex'));
  if (alphabet === 2) {
    if (octets.length % 2) return null;
    return { userData: { dcs, header: null, body: octets }, text: ucs2ToText(octets) };
  }
  return { userData: { dcs, header: null, body: octets }, text: null };
}
