// TP-SCTS and TP-DT: seven swapped semi-octets YY MM DD hh mm ss TZ (3GPP TS 23.040
// 9.2.3.11; docs/protocols/sms.md 4.8). Pure.

import { type OctetReader, PduError } from './octets.ts';

export interface SmsTimestamp {
  /** Local time of the SC with its offset: "2024-03-05T14:30:00+01:00". */
  local: string;
  /** The instant: "2024-03-05T13:30:00.000Z". */
  utc: string;
  /** Offset from UTC in minutes (a multiple of 15). */
  offsetMinutes: number;
}

const swapped = (b: number) => (b & 0x0f) * 10 + (b >> 4);
const validBcd = (b: number) => (b & 0x0f) <= 9 && b >> 4 <= 9;
const pad = (n: number) => String(n).padStart(2, '0');

/** Reads seven octets. Years are 2000 + YY. The time zone counts quarter hours; its sign is
 *  bit 3 of the seventh octet, which is the top bit of the tens digit (the first semi-octet). */
export function readTimestamp(r: OctetReader, field: string): SmsTimestamp {
  const start = r.at;
  const b = r.take(7, field);
  for (let i = 0; i < 6; i++) if (!validBcd(b[i])) r.fail(`${field}: octet ${b[i].toString(16).padStart(2, '0').toUpperCase()} is not two decimal semi-octets`, start + i);
  const tz = b[6];
  if ((tz & 0x07) > 9 || tz >> 4 > 9) r.fail(`${field}: time zone octet ${tz.toString(16).toUpperCase()} is not decimal`, start + 6);
  const [yy, mo, dd, hh, mi, ss] = Array.from(b.subarray(0, 6), swapped);
  const quarters = (tz & 0x07) * 10 + (tz >> 4);
  const offsetMinutes = (tz & 0x08 ? -1 : 1) * quarters * 15;
  const year = 2000 + yy;
  const days = new Date(Date.UTC(year, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12) r.fail(`${field}: month ${mo}`, start + 1);
  if (dd < 1 || dd > days) r.fail(`${field}: day ${dd} of month ${mo}`, start + 2);
  if (hh > 23) r.fail(`${field}: hour ${hh}`, start + 3);
  if (mi > 59) r.fail(`${field}: minute ${mi}`, start + 4);
  if (ss > 59) r.fail(`${field}: second ${ss}`, start + 5);
  // Real offsets lie within -12:00 and +14:00; 23.040 allows up to 79 quarters, so keep any.
  const abs = Math.abs(offsetMinutes);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const local = `${year}-${pad(mo)}-${pad(dd)}T${pad(hh)}:${pad(mi)}:${pad(ss)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  const utc = new Date(Date.UTC(year, mo - 1, dd, hh, mi, ss) - offsetMinutes * 60_000).toISOString();
  return { local, utc, offsetMinutes };
}

/** Seven octets for an instant shown at `offsetMinutes` (a multiple of 15, within +-79
 *  quarters), for the simulator's DELIVER and STATUS-REPORT PDUs. */
export function encodeTimestamp(instant: Date, offsetMinutes = 0): Uint8Array {
  if (!Number.isInteger(offsetMinutes / 15) || Math.abs(offsetMinutes / 15) > 79) throw new RangeError(`offsetMinutes must be a multiple of 15 within +-1185, got ${offsetMinutes}`);
  const t = new Date(instant.getTime() + offsetMinutes * 60_000);
  const year = t.getUTCFullYear();
  if (Number.isNaN(year) || year < 2000 || year > 2099) throw new RangeError(`timestamp year must be 2000-2099, got ${year}`);
  const quarters = Math.abs(offsetMinutes / 15);
  const fields = [year - 2000, t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()];
  const out = fields.map((n) => (n % 10 << 4) | Math.floor(n / 10));
  out.push(((quarters % 10) << 4) | Math.floor(quarters / 10) | (offsetMinutes < 0 ? 0x08 : 0));
  return Uint8Array.from(out);
}

/** Like readTimestamp, but a timestamp that is present and malformed (not decimal, month 13,
 *  ...) gives null and a warning instead of failing the whole PDU: the message itself is
 *  still good, and losing it for a broken clock would be worse. A PDU too short for seven
 *  octets still fails. */
export function readTimestampOrNull(r: OctetReader, field: string, warnings: string[]): SmsTimestamp | null {
  const start = r.pos;
  r.take(7, field);
  r.pos = start;
  try {
    return readTimestamp(r, field);
  } catch (e) {
    r.pos = start + 7;
    if (e instanceof PduError) {
      warnings.push(e.message);
      return null;
    }
    throw e;
  }
}
