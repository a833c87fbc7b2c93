// Mic-E positions (docs/protocols/aprs.md 2.5; APRS 1.0.1 chapter 10): latitude, three message
// bits and three flags ride in the destination address; longitude, speed, course and symbol in
// the information field. Decode only: the bridge sends plain positions. Pure.

import type { AprsPosition } from './position.ts';

/** The eight standard Mic-E messages, by the three message bits A B C (1 = set). */
export const MIC_E_MESSAGES = ['Emergency', 'Priority', 'Special', 'Committed', 'Returning', 'In Service', 'En Route', 'Off Duty'] as const;

export interface MicE extends AprsPosition {
  /** The standard message, a custom one ("Custom-0" ... "Custom-6"), or "Emergency". */
  status: string;
}

/** One destination character: its latitude digit (null for an ambiguous space), its message
 *  bit (0, 1 standard, or 1 custom) and whether it is in the upper (P-Z) set. */
function destDigit(c: string): { digit: number | null; bit: 0 | 1; custom: boolean; upper: boolean } | null {
  const x = c.charCodeAt(0);
  if (x >= 0x30 && x <= 0x39) return { digit: x - 0x30, bit: 0, custom: false, upper: false };
  if (x >= 0x41 && x <= 0x4a) return { digit: x - 0x41, bit: 1, custom: true, upper: false };
  if (c === 'K') return { digit: null, bit: 1, custom: true, upper: false };
  if (c === 'L') return { digit: null, bit: 0, custom: false, upper: false };
  if (x >= 0x50 && x <= 0x59) return { digit: x - 0x50, bit: 1, custom: false, upper: true };
  if (c === 'Z') return { digit: null, bit: 1, custom: false, upper: true };
  return null;
}

/** Reads a Mic-E packet: `destination` is the destination callsign (SSID dropped), `info`
 *  the information field from its `` ` `` or `'`. Null when it is not one. */
export function decodeMicE(destination: string, info: string): MicE | null {
  if (destination.length !== 6 || info.length < 9 || (info[0] !== '`' && info[0] !== "'")) return null;
  const d = [...destination].map(destDigit);
  if (d.some((x) => x === null)) return null;
  const dd = d as NonNullable<ReturnType<typeof destDigit>>[];
  // The flags live in characters 4-6 only; there, A-K are not allowed.
  if (dd.slice(3).some((x) => x.custom)) return null;
  const digits = dd.map((x) => x.digit ?? 0);
  const deg = digits[0] * 10 + digits[1];
  const min = digits[2] * 10 + digits[3] + (digits[4] * 10 + digits[5]) / 100;
  if (deg > 89 || min >= 60) return null;
  let latitude = deg + min / 60;
  if (!dd[3].upper) latitude = -latitude;
  const b = [...info.slice(1, 9)].map((c) => c.charCodeAt(0) - 28);
  let lonDeg = b[0] + (dd[4].upper ? 100 : 0);
  if (lonDeg >= 180 && lonDeg <= 189) lonDeg -= 80;
  else if (lonDeg >= 190 && lonDeg <= 199) lonDeg -= 190;
  // Minutes 0-9 are sent as 60-69, so the byte stays printable; 10-59 as themselves.
  let lonMin = b[1];
  if (lonMin < 10 || lonMin > 69) return null;
  if (lonMin >= 60) lonMin -= 60;
  const hundredths = b[2];
  if (lonDeg < 0 || lonDeg > 179 || lonMin < 0 || lonMin > 59 || hundredths < 0 || hundredths > 99) return null;
  let longitude = lonDeg + (lonMin + hundredths / 100) / 60;
  if (dd[5].upper) longitude = -longitude;
  const sp = b[3];
  const dc = b[4];
  const se = b[5];
  if (sp < 0 || dc < 0 || se < 0) return null;
  let speedKnots = sp * 10 + Math.floor(dc / 10);
  let course = (dc % 10) * 100 + se;
  if (speedKnots >= 800) speedKnots -= 800;
  if (course >= 400) course -= 400;
  const symbol = info[7];
  const symbolTable = info[8];
  if (!/^[/\\A-Z0-9]$/.test(symbolTable)) return null;
  const bits = dd.slice(0, 3).map((x) => x.bit);
  const index = bits[0] * 4 + bits[1] * 2 + bits[2];
  const custom = dd.slice(0, 3).some((x) => x.custom);
  const standard = dd.slice(0, 3).some((x) => x.bit === 1 && !x.custom);
  const status = index === 0 ? 'Emergency' : custom && standard ? 'Unknown' : custom ? `Custom-${7 - index}` : MIC_E_MESSAGES[index];
  const p: MicE = { latitude, longitude, symbolTable, symbol, compressed: false, comment: '', status, speed_kmh: speedKnots * 1.852 };
  if (course >= 1 && course <= 360) p.course_deg = course;
  let comment = info.slice(9);
  // A type byte may precede the altitude; the altitude is three base-91 digits and `}`, metres
  // above -10000.
  const alt = /^[\x20-\x7e]?([\x21-\x7b]{3})\}/.exec(comment);
  if (alt) {
    const [x, y, z] = [...alt[1]].map((c) => c.charCodeAt(0) - 33);
    p.altitude_m = x * 8281 + y * 91 + z - 10000;
    comment = comment.slice(alt[0].length);
  }
  p.comment = comment;
  return p;
}
