// TP-DA / TP-OA / TP-RA addresses, the SMSC prefix and phone number normalisation
// (3GPP TS 23.040 9.1.2.3 and 9.1.2.5, 27.005 section 3 <pdu>; docs/protocols/sms.md 4.8). Pure.

import { gsm7Septets } from '../../shared/codec/gsm7.ts';
import { type AddressKind, LIMITS, TON_NAMES, TYPE_OF_ADDRESS } from './constants.ts';
import type { OctetReader } from './octets.ts';
import { packSeptets, septetsToText, unpackSeptets } from './septets.ts';

export interface SmsAddress {
  /** "+" and digits for an international number, the digits otherwise, the text of an
   *  alphanumeric sender. Semi-octets A-E read as * # a b c (23.040 9.1.2.3). */
  address: string;
  kind: AddressKind;
  /** The type-of-address octet as received. */
  typeOfAddress: number;
}

// Semi-octet values 0-9 are digits; A-E are * # a b c; F is the filler (23.040 9.1.2.3).
const SEMI_OCTET_CHARS = '0123456789*#abc';
const NUMBER = /^\+?[0-9*#]+$/;

/** Digits to swapped semi-octets, an odd count padded with F: "31641600986" -> 13 46 61 00 89 F6. */
export function encodeSemiOctets(digits: string): Uint8Array {
  const out = new Uint8Array(Math.ceil(digits.length / 2));
  for (let i = 0; i < digits.length; i++) {
    const v = SEMI_OCTET_CHARS.indexOf(digits[i]);
    if (v < 0) throw new RangeError(`"${digits[i]}" is not a semi-octet digit (0-9 * # a b c)`);
    out[i >> 1] |= i % 2 === 0 ? v : v << 4;
  }
  if (digits.length % 2 === 1) out[out.length - 1] |= 0xf0;
  return out;
}

/** `count` semi-octets back to digits. A filler (F) before the last one is an error; the
 *  filler nibble of an odd count is not checked (23.040 asks for 1111, networks vary). */
function readSemiOctets(r: OctetReader, count: number, field: string): string {
  const start = r.at;
  const bytes = r.take(Math.ceil(count / 2), field);
  let out = '';
  for (let i = 0; i < count; i++) {
    const v = i % 2 === 0 ? bytes[i >> 1] & 0x0f : bytes[i >> 1] >> 4;
    if (v === 0x0f) r.fail(`${field}: filler semi-octet F inside the number (digit ${i + 1} of ${count})`, start + (i >> 1));
    out += SEMI_OCTET_CHARS[v];
  }
  return out;
}

/** A TP-DA (or TP-OA) field: length in semi-octets, type of address, value. "+<digits>" is
 *  international (0x91); other digits unknown/ISDN (0x81); anything else an alphanumeric
 *  sender (0xD0, GSM-7 packed, at most 11 septets). */
export function encodeAddress(value: string): Uint8Array {
  if (NUMBER.test(value)) {
    const international = value.startsWith('+');
    const digits = international ? value.slice(1) : value;
    if (digits.length > LIMITS.ADDRESS_SEMI_OCTETS) throw new RangeError(`address has ${digits.length} digits, at most ${LIMITS.ADDRESS_SEMI_OCTETS}`);
    const toa = international ? TYPE_OF_ADDRESS.INTERNATIONAL : TYPE_OF_ADDRESS.UNKNOWN;
    return Uint8Array.of(digits.length, toa, ...encodeSemiOctets(digits));
  }
  const septets = gsm7Septets(value);
  if (septets === null || value.length === 0) throw new RangeError(`address ${JSON.stringify(value)} is neither a number nor GSM-7 text`);
  // The length counts the semi-octets the packed septets use (23.040 9.1.2.5).
  const semiOctets = Math.ceil((septets.length * 7) / 4);
  if (semiOctets > LIMITS.ADDRESS_SEMI_OCTETS) throw new RangeError(`alphanumeric address takes ${septets.length} septets, at most 11`);
  return Uint8Array.of(semiOctets, TYPE_OF_ADDRESS.ALPHANUMERIC, ...packSeptets(septets));
}

/** Reads a TP-OA / TP-DA / TP-RA field. */
export function readAddress(r: OctetReader, field: string): SmsAddress {
  const lengthAt = r.at;
  const length = r.u8(`${field} length`);
  if (length > LIMITS.ADDRESS_SEMI_OCTETS) r.fail(`${field} length ${length} exceeds ${LIMITS.ADDRESS_SEMI_OCTETS} semi-octets`, lengthAt);
  const toa = r.u8(`${field} type of address`);
  const kind = TON_NAMES[(toa >> 4) & 0x07];
  if (kind === 'alphanumeric') {
    const octets = r.take(Math.ceil(length / 2), field);
    return { address: septetsToText(unpackSeptets(octets, Math.floor((length * 4) / 7))), kind, typeOfAddress: toa };
  }
  const digits = readSemiOctets(r, length, field);
  return { address: kind === 'international' && digits.length > 0 ? `+${digits}` : digits, kind, typeOfAddress: toa };
}

/** The SMSC prefix of a 27.005 PDU: `00` (use the SMSC stored in the modem, AT+CSCA) when
 *  `smsc` is null, else length in octets (type + digits), type, digits. */
export function encodeSmsc(smsc: string | null): Uint8Array {
  if (smsc === null) return Uint8Array.of(0);
  if (!NUMBER.test(smsc)) throw new RangeError(`SMSC ${JSON.stringify(smsc)} must be digits, optionally starting with +`);
  const international = smsc.startsWith('+');
  const digits = encodeSemiOctets(international ? smsc.slice(1) : smsc);
  if (digits.length + 1 > LIMITS.SMSC_OCTETS) throw new RangeError(`SMSC has more than ${2 * (LIMITS.SMSC_OCTETS - 1)} digits`);
  return Uint8Array.of(digits.length + 1, international ? TYPE_OF_ADDRESS.INTERNATIONAL : TYPE_OF_ADDRESS.UNKNOWN, ...digits);
}

/** Reads the SMSC prefix; null for `00`. The digit count follows from the octet count, the
 *  last high nibble F meaning odd. */
export function readSmsc(r: OctetReader): SmsAddress | null {
  const lengthAt = r.at;
  const length = r.u8('SMSC length');
  if (length === 0) return null;
  if (length > LIMITS.SMSC_OCTETS) r.fail(`SMSC length ${length} exceeds ${LIMITS.SMSC_OCTETS} octets`, lengthAt);
  const toa = r.u8('SMSC type of address');
  const kind = TON_NAMES[(toa >> 4) & 0x07];
  const octets = length - 1;
  const odd = octets > 0 && r.bytes[r.pos + octets - 1] !== undefined && r.bytes[r.pos + octets - 1] >> 4 === 0x0f;
  const digits = readSemiOctets(r, octets * 2 - (odd ? 1 : 0), 'SMSC');
  return { address: kind === 'international' && digits.length > 0 ? `+${digits}` : digits, kind, typeOfAddress: toa };
}

export { normalizeNumber, type NormalizedNumber } from '../../shared/codec/phone.ts';
