// GSM 7-bit packing and UCS-2 for SMS user data (3GPP TS 23.038 section 6.1.2.1, 23.040
// 9.2.3.24; docs/protocols/sms.md 4.4 and 4.8). The alphabet tables are
// src/bearers/shared/codec/gsm7.ts; this file only packs, unpacks and maps codes back to text. Pure.

import { GSM7_DEFAULT_ALPHABET, GSM7_ESCAPE, GSM7_EXTENSION_TABLE } from '../../shared/codec/gsm7.ts';

const EXTENSION_BY_CODE = new Map<number, string>(Object.entries(GSM7_EXTENSION_TABLE).map(([ch, code]) => [code, ch]));

/** Packs septets LSB first, eight into seven octets (23.038 6.1.2.1.1). `fillBits` zero bits
 *  come first: the septet alignment after a user data header (23.040 9.2.3.24; 0-6). */
export function packSeptets(septets: Uint8Array, fillBits = 0): Uint8Array {
  if (!Number.isInteger(fillBits) || fillBits < 0 || fillBits > 6) throw new RangeError(`fillBits must be 0-6, got ${fillBits}`);
  const out = new Uint8Array(Math.ceil((fillBits + septets.length * 7) / 8));
  let bit = fillBits;
  for (const s of septets) {
    if (s > 0x7f) throw new RangeError(`septet must be 0x00-0x7F, got 0x${s.toString(16)}`);
    const i = bit >> 3;
    const shift = bit & 7;
    out[i] |= (s << shift) & 0xff;
    if (shift > 1) out[i + 1] |= s >> (8 - shift);
    bit += 7;
  }
  return out;
}

/** Unpacks `count` septets after `fillBits` bits. Bits past the end of `octets` read as zero
 *  (callers check the length first). */
export function unpackSeptets(octets: Uint8Array, count: number, fillBits = 0): Uint8Array {
  const out = new Uint8Array(count);
  let bit = fillBits;
  for (let n = 0; n < count; n++) {
    const i = bit >> 3;
    const shift = bit & 7;
    let v = (octets[i] ?? 0) >> shift;
    if (shift > 1) v |= (octets[i + 1] ?? 0) << (8 - shift);
    out[n] = v & 0x7f;
    bit += 7;
  }
  return out;
}

/** Septet codes to text through the default alphabet and, after 0x1B, the extension table
 *  (23.038 6.2.1.1). An extension code the table lacks shows the default alphabet's character
 *  for that code (23.038 6.2.1.1: "shall display ... the character shown in the main ... table");
 *  ESC ESC and a lone ESC at the end show a space (23.038: reserved, "display a space"). */
export function septetsToText(septets: Uint8Array): string {
  let out = '';
  for (let i = 0; i < septets.length; i++) {
    const s = septets[i] & 0x7f;
    if (s !== GSM7_ESCAPE) {
      out += GSM7_DEFAULT_ALPHABET[s];
      continue;
    }
    if (i + 1 >= septets.length) {
      out += ' ';
      continue;
    }
    const code = septets[++i] & 0x7f;
    out += EXTENSION_BY_CODE.get(code) ?? (code === GSM7_ESCAPE ? ' ' : GSM7_DEFAULT_ALPHABET[code]);
  }
  return out;
}

/** Text as UCS-2 big-endian (23.038 6.2.3). JavaScript strings are UTF-16 code units, so a
 *  character outside the BMP becomes its surrogate pair, which is what phones send. */
export function textToUcs2(text: string): Uint8Array {
  const out = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    const u = text.charCodeAt(i);
    out[2 * i] = u >> 8;
    out[2 * i + 1] = u & 0xff;
  }
  return out;
}

/** UCS-2 big-endian to text; an odd last octet is ignored (callers reject it first). A lone
 *  surrogate is kept as it is: the other half may be in the next part of a concatenated
 *  message from a sender that split a pair, and joining the parts' text mends it. */
export function ucs2ToText(octets: Uint8Array): string {
  let out = '';
  const units: number[] = [];
  for (let i = 0; i + 1 < octets.length; i += 2) {
    units.push((octets[i] << 8) | octets[i + 1]);
    if (units.length === 4096) out += String.fromCharCode(...units.splice(0));
  }
  return out + String.fromCharCode(...units);
}
