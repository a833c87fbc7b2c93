// Choosing the encoding and splitting a message into parts (3GPP TS 23.040 9.2.3.24.1,
// 23.038; docs/protocols/sms.md 4.4). Pure.

import { GSM7_EXTENSION_TABLE, gsm7Septets, isGsm7 } from '../../shared/codec/gsm7.ts';
import { DCS, LIMITS } from './constants.ts';
import { packSeptets, textToUcs2 } from './septets.ts';
import { encodeConcatUdh, udhSeptets } from './udh.ts';

export type SmsEncoding = 'gsm7' | 'ucs2' | '8bit';

/** One part ready for encodeSubmit / encodeDeliver. */
export interface SmsPart {
  dcs: number;
  /** TP-UDHI: the user data starts with a header (the concatenation element). */
  udhi: boolean;
  /** TP-UDL: septets (header and fill included) for GSM-7, octets otherwise. */
  udl: number;
  /** TP-UD: header, fill bits and packed body. */
  userData: Uint8Array;
  /** The text this part carries; null for 8-bit data. */
  text: string | null;
}

export interface MessagePlan {
  encoding: SmsEncoding;
  /** Septets (GSM-7), UTF-16 code units (UCS-2) or octets (8-bit) of the whole message. */
  units: number;
  parts: SmsPart[];
}

export type PlanResult = { ok: true; plan: MessagePlan } | { ok: false; error: string; partsNeeded: number | null };

export interface PlanOptions {
  /** 'auto' (default): GSM-7 when every character has a code, else UCS-2. */
  encoding?: 'auto' | 'gsm7' | 'ucs2';
  /** Most parts allowed (1-255, default 255); more gives `{ ok: false }`. */
  maxParts?: number;
  /** Concatenation reference, the same in every part; the bearer picks a fresh one per
   *  message. Default 0. */
  reference?: number;
  /** 8 (IE 00, default: 153 GSM-7 / 67 UCS-2 / 134 octets a part) or 16 (IE 08: 152 / 66 / 133). */
  referenceBits?: 8 | 16;
}

interface Unit {
  /** Where the character starts in the text, and what it costs. */
  at: number;
  cost: number;
}

/** Plans a text message: the encoding, the exact number of parts and each part's user data.
 *  An extension character (2 septets) or a surrogate pair (2 units) is never split. */
export function planMessage(text: string, options: PlanOptions = {}): PlanResult {
  const { maxParts, reference, referenceBits } = checkOptions(options);
  const mode = options.encoding ?? 'auto';
  if (mode !== 'auto' && mode !== 'gsm7' && mode !== 'ucs2') throw new RangeError(`encoding must be auto, gsm7 or ucs2, got ${mode}`);
  const gsm = mode === 'gsm7' || (mode === 'auto' && isGsm7(text));
  const units: Unit[] = [];
  let i = 0;
  for (const ch of text) {
    if (gsm) {
      const septets = gsm7Septets(ch);
      if (septets === null) return { ok: false, error: `character ${JSON.stringify(ch)} at index ${i} has no GSM-7 code`, partsNeeded: null };
      units.push({ at: i, cost: GSM7_EXTENSION_TABLE[ch] === undefined ? 1 : 2 });
    } else units.push({ at: i, cost: ch.length });
    i += ch.length;
  }
  const single = gsm ? LIMITS.USER_DATA_SEPTETS : LIMITS.USER_DATA_OCTETS / 2;
  const headerOctets = referenceBits === 8 ? 6 : 7;
  const perPart = gsm
    ? LIMITS.USER_DATA_SEPTETS - udhSeptets(headerOctets).septets
    : Math.floor((LIMITS.USER_DATA_OCTETS - headerOctets) / 2);
  const chunks = cut(units, single, perPart);
  const total = units.reduce((n, u) => n + u.cost, 0);
  const encoding: SmsEncoding = gsm ? 'gsm7' : 'ucs2';
  if (chunks.length > maxParts) return tooMany(encoding, total, chunks.length, maxParts);
  const parts = chunks.map(([from, to], n) => {
    const chunkText = text.slice(units[from]?.at ?? 0, units[to]?.at ?? text.length);
    const concat = chunks.length > 1 ? encodeConcatUdh({ reference, referenceBits, total: chunks.length, sequence: n + 1 }) : new Uint8Array(0);
    if (gsm) {
      const septets = gsm7Septets(chunkText) as Uint8Array;
      const { septets: hs, fillBits } = udhSeptets(concat.length);
      return part(DCS.GSM7, concat, packSeptets(septets, concat.length ? fillBits : 0), (concat.length ? hs : 0) + septets.length, chunkText);
    }
    const body = textToUcs2(chunkText);
    return part(DCS.UCS2, concat, body, concat.length + body.length, chunkText);
  });
  return { ok: true, plan: { encoding, units: total, parts } };
}

/** Plans 8-bit data (DCS 04): 140 octets in one part, 134 (133 with a 16-bit reference) a part. */
export function planData(data: Uint8Array, options: Omit<PlanOptions, 'encoding'> = {}): PlanResult {
  const { maxParts, reference, referenceBits } = checkOptions(options);
  const perPart = LIMITS.USER_DATA_OCTETS - (referenceBits === 8 ? 6 : 7);
  const count = data.length <= LIMITS.USER_DATA_OCTETS ? 1 : Math.ceil(data.length / perPart);
  if (count > maxParts) return tooMany('8bit', data.length, count, maxParts);
  const parts = Array.from({ length: count }, (_, n) => {
    const concat = count > 1 ? encodeConcatUdh({ reference, referenceBits, total: count, sequence: n + 1 }) : new Uint8Array(0);
    const body = count > 1 ? data.subarray(n * perPart, (n + 1) * perPart) : data;
    return part(DCS.DATA_8BIT, concat, body, concat.length + body.length, null);
  });
  return { ok: true, plan: { encoding: '8bit', units: data.length, parts } };
}

/** Index ranges [from, to) of units per part: all in one when the total fits `single`,
 *  else greedily `perPart` each. */
function cut(units: Unit[], single: number, perPart: number): [number, number][] {
  const total = units.reduce((n, u) => n + u.cost, 0);
  if (total <= single) return [[0, units.length]];
  const out: [number, number][] = [];
  let from = 0;
  let used = 0;
  for (let k = 0; k < units.length; k++) {
    if (used + units[k].cost > perPart) {
      out.push([from, k]);
      from = k;
      used = 0;
    }
    used += units[k].cost;
  }
  out.push([from, units.length]);
  return out;
}

function part(dcs: number, header: Uint8Array, body: Uint8Array, udl: number, text: string | null): SmsPart {
  const userData = new Uint8Array(header.length + body.length);
  userData.set(header);
  userData.set(body, header.length);
  return { dcs, udhi: header.length > 0, udl, userData, text };
}

function tooMany(encoding: SmsEncoding, units: number, needed: number, maxParts: number): PlanResult {
  const what = encoding === 'gsm7' ? 'GSM-7 septets' : encoding === 'ucs2' ? 'UCS-2 characters' : 'octets';
  return { ok: false, error: `message of ${units} ${what} needs ${needed} parts, at most ${maxParts} allowed`, partsNeeded: needed };
}

function checkOptions(o: Omit<PlanOptions, 'encoding'>): { maxParts: number; reference: number; referenceBits: 8 | 16 } {
  const maxParts = o.maxParts ?? LIMITS.MAX_PARTS;
  const referenceBits = o.referenceBits ?? 8;
  const reference = o.reference ?? 0;
  if (!Number.isInteger(maxParts) || maxParts < 1 || maxParts > LIMITS.MAX_PARTS) throw new RangeError(`maxParts must be 1-255, got ${maxParts}`);
  if (referenceBits !== 8 && referenceBits !== 16) throw new RangeError(`referenceBits must be 8 or 16, got ${referenceBits}`);
  const maxRef = referenceBits === 8 ? 0xff : 0xffff;
  if (!Number.isInteger(reference) || reference < 0 || reference > maxRef) throw new RangeError(`reference must be 0-${maxRef}, got ${reference}`);
  return { maxParts, reference, referenceBits };
}
