// TP-UDL + TP-UD for every TPDU that carries them (3GPP TS 23.040 9.2.3.16, 9.2.3.24;
// docs/protocols/sms.md 4.4 and 4.8). Pure.

import { LIMITS } from './constants.ts';
import type { DataCoding } from './dcs.ts';
import type { OctetReader } from './octets.ts';
import { septetsToText, ucs2ToText, unpackSeptets } from './septets.ts';
import { readUdh, udhSeptets, type UserDataHeader } from './udh.ts';

export interface UserData {
  /** TP-UDL as received: septets for uncompressed GSM-7, octets otherwise. */
  udl: number;
  udh: UserDataHeader | null;
  /** The text for GSM-7 and UCS-2 (header excluded); null for 8-bit, compressed or unknown. */
  text: string | null;
  /** The octets after the header for 8-bit, compressed or unknown codings; null for text. */
  data: Uint8Array | null;
}

/** Reads TP-UDL and TP-UD. Octets after the user data are ignored (some modems pad). */
export function readUserData(r: OctetReader, coding: DataCoding, udhi: boolean): UserData {
  const udlAt = r.at;
  const udl = r.u8('TP-UDL');
  const septetsMode = coding.alphabet === 'gsm7' && !coding.compressed;
  const max = septetsMode ? LIMITS.USER_DATA_SEPTETS : LIMITS.USER_DATA_OCTETS;
  if (udl > max) r.fail(`TP-UDL ${udl} exceeds ${max} ${septetsMode ? 'septets' : 'octets'}`, udlAt);
  const udOctets = septetsMode ? Math.ceil((udl * 7) / 8) : udl;
  if (udOctets > r.remaining) {
    r.fail(`TP-UDL ${udl} ${septetsMode ? `septets needs ${udOctets} octets` : 'octets'} but only ${r.remaining} follow`, udlAt);
  }
  const udStart = r.pos;
  const udh = udhi ? readUdh(r, udOctets) : null;
  const headerOctets = udh ? udh.octets : 0;
  if (septetsMode) {
    const { septets, fillBits } = udhSeptets(headerOctets);
    if (udh && septets > udl) r.fail(`user data header takes ${septets} septets, TP-UDL is ${udl}`, udlAt);
    const packed = r.bytes.subarray(udStart + headerOctets, udStart + udOctets);
    r.pos = udStart + udOctets;
    return { udl, udh, text: septetsToText(unpackSeptets(packed, udl - (udh ? septets : 0), udh ? fillBits : 0)), data: null };
  }
  const body = r.bytes.subarray(udStart + headerOctets, udStart + udOctets);
  r.pos = udStart + udOctets;
  if (coding.alphabet === 'ucs2' && !coding.compressed) {
    if (body.length % 2 !== 0) r.fail(`UCS-2 user data has an odd number of octets (${body.length})`, udStart + headerOctets);
    return { udl, udh, text: ucs2ToText(body), data: null };
  }
  return { udl, udh, text: null, data: body.slice() };
}
