// User data header (3GPP TS 23.040 9.2.3.24; docs/protocols/sms.md 4.4): UDHL, then
// information elements IEI, IEDL, data. Pure.

import { IEI } from './constants.ts';
import type { OctetReader } from './octets.ts';

export interface Concatenation {
  reference: number;
  referenceBits: 8 | 16;
  total: number;
  sequence: number;
}

export interface UserDataHeader {
  /** Every element in order, known or not. */
  elements: { iei: number; data: Uint8Array }[];
  concat: Concatenation | null;
  /** Application port addressing (IE 04 / 05): noted, the bearer decides what to do. */
  ports: { destination: number; originator: number; bits: 8 | 16 } | null;
  /** Known elements that were ignored, and why (23.040 9.2.3.24.1: a zero total or a
   *  sequence of zero or past the total makes the receiver ignore the element). */
  ignored: string[];
  /** Octets the header takes, UDHL included. */
  octets: number;
}

/** Reads the header at the start of the user data; `udOctets` is how much user data there
 *  is, so a UDHL past it is an error. */
export function readUdh(r: OctetReader, udOctets: number): UserDataHeader {
  const udhlAt = r.at;
  const udhl = r.u8('UDHL');
  if (udhl + 1 > udOctets) r.fail(`UDHL ${udhl} runs past the user data (${udOctets} octets)`, udhlAt);
  const end = r.pos + udhl;
  const header: UserDataHeader = { elements: [], concat: null, ports: null, ignored: [], octets: udhl + 1 };
  while (r.pos < end) {
    const ieAt = r.at;
    const iei = r.u8('IEI');
    if (r.pos >= end) r.fail(`user data header ends inside IE ${hex(iei)}`, ieAt);
    const len = r.u8('IEDL');
    if (r.pos + len > end) r.fail(`IE ${hex(iei)} length ${len} runs past the user data header`, ieAt + 1);
    const data = r.take(len, `IE ${hex(iei)}`);
    header.elements.push({ iei, data });
    readElement(header, iei, data);
  }
  return header;
}

function readElement(h: UserDataHeader, iei: number, d: Uint8Array): void {
  const want = { [IEI.CONCAT_8]: 3, [IEI.CONCAT_16]: 4, [IEI.PORTS_8]: 2, [IEI.PORTS_16]: 4 }[iei];
  if (want === undefined) return; // unknown IEs are skipped (23.040 9.2.3.24)
  if (d.length !== want) return void h.ignored.push(`IE ${hex(iei)} has length ${d.length}, expected ${want}`);
  if (iei === IEI.CONCAT_8 || iei === IEI.CONCAT_16) {
    const sixteen = iei === IEI.CONCAT_16;
    const reference = sixteen ? (d[0] << 8) | d[1] : d[0];
    const total = d[sixteen ? 2 : 1];
    const sequence = d[sixteen ? 3 : 2];
    if (total === 0) return void h.ignored.push(`IE ${hex(iei)}: total 0`);
    if (sequence === 0 || sequence > total) return void h.ignored.push(`IE ${hex(iei)}: sequence ${sequence} of ${total}`);
    if (h.concat) return void h.ignored.push(`IE ${hex(iei)}: a second concatenation element`);
    h.concat = { reference, referenceBits: sixteen ? 16 : 8, total, sequence };
  } else {
    const sixteen = iei === IEI.PORTS_16;
    h.ports = sixteen
      ? { destination: (d[0] << 8) | d[1], originator: (d[2] << 8) | d[3], bits: 16 }
      : { destination: d[0], originator: d[1], bits: 8 };
  }
}

/** UDHL and the concatenation element: `05 00 03 ref total seq` or `06 08 04 refHi refLo
 *  total seq` (docs/protocols/sms.md 4.4). */
export function encodeConcatUdh(c: Concatenation): Uint8Array {
  for (const [name, v, max] of [['total', c.total, 255], ['sequence', c.sequence, c.total], ['reference', c.reference, c.referenceBits === 16 ? 0xffff : 0xff]] as const) {
    if (!Number.isInteger(v) || v < (name === 'reference' ? 0 : 1) || v > max) throw new RangeError(`concatenation ${name} must be an integer ${name === 'reference' ? 0 : 1}-${max}, got ${v}`);
  }
  return c.referenceBits === 16
    ? Uint8Array.of(6, IEI.CONCAT_16, 4, c.reference >> 8, c.reference & 0xff, c.total, c.sequence)
    : Uint8Array.of(5, IEI.CONCAT_8, 3, c.reference, c.total, c.sequence);
}

/** Septets a header of `octets` octets (UDHL included) takes in GSM-7 user data, and the fill
 *  bits that start the text on a septet boundary (23.040 9.2.3.24: 6 octets -> 7 septets, 1 fill bit). */
export function udhSeptets(octets: number): { septets: number; fillBits: number } {
  const septets = Math.ceil((octets * 8) / 7);
  return { septets, fillBits: septets * 7 - octets * 8 };
}

const hex = (n: number) => n.toString(16).padStart(2, '0').toUpperCase();
