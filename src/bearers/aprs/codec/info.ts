// The APRS information field by its data type identifier (docs/protocols/aprs.md 2; APRS 1.0.1
// chapter 5): messages, positions, Mic-E, objects, items, status, telemetry, third-party.
// decodeInfo never throws: whatever it cannot read is `other`. Pure.

import { parseTnc2, type Tnc2Packet } from './ax25.ts';
import { type AprsMessage, decodeMessage } from './message.ts';
import { decodeMicE, type MicE } from './mic-e.ts';
import { type AprsPosition, type AprsTimestamp, decodePosition, decodeTimestamp, encodeTimestamp, encodeUncompressed, type PositionInput } from './position.ts';

export type AprsInfo =
  | AprsMessage
  | { type: 'position'; position: AprsPosition; timestamp: AprsTimestamp | null; messaging: boolean }
  | { type: 'mic-e'; position: MicE }
  | { type: 'object'; name: string; live: boolean; timestamp: AprsTimestamp; position: AprsPosition }
  | { type: 'item'; name: string; live: boolean; position: AprsPosition }
  | { type: 'status'; text: string; timestamp: AprsTimestamp | null }
  | { type: 'telemetry'; sequence: string; analog: number[]; digital: string | null }
  | { type: 'third-party'; packet: Tnc2Packet }
  | { type: 'other'; dti: string };

/** Reads an information field. `destination`: the packet's destination callsign without SSID
 *  (Mic-E keeps its latitude there). */
export function decodeInfo(destination: string, info: string): AprsInfo {
  const dti = info.slice(0, 1);
  const other: AprsInfo = { type: 'other', dti };
  switch (dti) {
    case ':':
      return decodeMessage(info) ?? other;
    case '!':
    case '=': {
      const position = decodePosition(info.slice(1));
      return position ? { type: 'position', position, timestamp: null, messaging: dti === '=' } : other;
    }
    case '/':
    case '@': {
      const timestamp = decodeTimestamp(info.slice(1, 8));
      const position = timestamp && decodePosition(info.slice(8));
      return position ? { type: 'position', position, timestamp, messaging: dti === '@' } : other;
    }
    case '`':
    case "'": {
      const position = decodeMicE(destination, info);
      return position ? { type: 'mic-e', position } : other;
    }
    case ';': {
      // `;NAME_____*DDHHMMz` and a position: nine name characters, `*` live or `_` killed.
      if (info.length < 18 || (info[10] !== '*' && info[10] !== '_')) return other;
      const timestamp = decodeTimestamp(info.slice(11, 18));
      const position = timestamp && decodePosition(info.slice(18));
      const name = info.slice(1, 10).trimEnd();
      return position && name !== '' ? { type: 'object', name, live: info[10] === '*', timestamp, position } : other;
    }
    case ')': {
      // `)NAME!` (3 to 9 characters, `!` live or `_` killed) and a position.
      const m = /^\)([\x20-\x7e]{3,9}?)([!_])/.exec(info);
      if (!m || /[!_]/.test(m[1])) return other;
      const position = decodePosition(info.slice(m[0].length));
      return position ? { type: 'item', name: m[1], live: m[2] === '!', position } : other;
    }
    case '>': {
      const timestamp = decodeTimestamp(info.slice(1, 8));
      return timestamp && timestamp.form === 'dhm-utc' ? { type: 'status', text: info.slice(8), timestamp } : { type: 'status', text: info.slice(1), timestamp: null };
    }
    case 'T':
      return decodeTelemetry(info) ?? other;
    case '}': {
      const packet = parseTnc2(info.slice(1));
      return packet ? { type: 'third-party', packet } : other;
    }
    default:
      return other;
  }
}

/** `T#sss,a1,a2,a3,a4,a5,bbbbbbbb`: a sequence (digits or MIC), five analog values (the 1.2
 *  addendum allows decimals), eight digital bits. */
function decodeTelemetry(info: string): AprsInfo | null {
  const m = /^T#(MIC|\d{1,5}),?((?:-?\d+(?:\.\d+)?,?){0,5})([01]{8})?/.exec(info);
  if (!m) return null;
  const analog = m[2].split(',').filter((v) => v !== '').map(Number);
  if (analog.length === 0 || analog.some((v) => !Number.isFinite(v))) return null;
  return { type: 'telemetry', sequence: m[1], analog, digital: m[3] ?? null };
}

/** An object report: `;NAME_____*DDHHMMz` and an uncompressed position. */
export function encodeObject(name: string, p: PositionInput, atMs: number, live = true): string {
  if (name.length < 1 || name.length > 9 || !/^[\x20-\x7e]+$/.test(name)) throw new RangeError('an object name is 1 to 9 printable characters');
  return `;${name.padEnd(9, ' ')}${live ? '*' : '_'}${encodeTimestamp(atMs)}${encodeUncompressed(p)}`;
}

/** A status report, with the time it was made: `>DDHHMMztext`. */
export function encodeStatus(text: string, atMs?: number): string {
  if (/[|~\x00-\x1f\x7f]/.test(text)) throw new RangeError('status text may not hold |, ~ or control characters');
  return `>${atMs === undefined ? '' : encodeTimestamp(atMs)}${text}`;
}
