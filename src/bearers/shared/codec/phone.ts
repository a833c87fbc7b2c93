// Phone numbers as people write them, made comparable (ITU-T E.164). Pure. Used by the SMS
// codec for addresses, and by the senders policy to compare senders.

export type NormalizedNumber = { ok: true; number: string; kind: 'e164' | 'short' } | { ok: false; reason: string };

/** A phone number as people write it to E.164 ("+4915..."), or a short code as it is.
 *  Spaces, dashes, dots, slashes, parentheses and a "(0)" trunk hint are dropped; "00" becomes
 *  "+"; a national number with its trunk 0 takes `defaultCountryCode`; 2-8 digits without a
 *  leading 0 are a short code. E.164 numbers have 7-15 digits and no country code starts
 *  with 0 (ITU-T E.164 section 6). */
export function normalizeNumber(raw: string, defaultCountryCode?: string | number): NormalizedNumber {
  let cc: string | undefined;
  if (defaultCountryCode !== undefined) {
    cc = String(defaultCountryCode).replace(/^\+/, '');
    if (!/^[1-9][0-9]{0,2}$/.test(cc)) throw new RangeError(`defaultCountryCode must be 1-3 digits not starting with 0, got ${JSON.stringify(defaultCountryCode)}`);
  }
  if (typeof raw !== 'string') return { ok: false, reason: 'not a string' };
  const cleaned = raw.trim().replace(/\(0\)/g, '').replace(/[\s\-./()]/g, '');
  if (cleaned === '') return { ok: false, reason: 'empty' };
  if (!/^\+?[0-9]+$/.test(cleaned)) return { ok: false, reason: `${JSON.stringify(raw)} has characters other than digits and a leading +` };
  let e164: string;
  if (cleaned.startsWith('+')) e164 = cleaned;
  else if (cleaned.startsWith('00')) e164 = `+${cleaned.slice(2)}`;
  else if (cleaned.startsWith('0')) {
    if (cc === undefined) return { ok: false, reason: `${JSON.stringify(raw)} is a national number (leading 0) and no default country code is set` };
    e164 = `+${cc}${cleaned.slice(1)}`;
  } else if (cleaned.length <= 8) return { ok: true, number: cleaned, kind: 'short' };
  else return { ok: false, reason: `${JSON.stringify(raw)} has no country code: write it as +<country code><number>` };
  const digits = e164.slice(1);
  if (digits.startsWith('0')) return { ok: false, reason: `${JSON.stringify(raw)}: a country code never starts with 0` };
  if (digits.length < 7) return { ok: false, reason: `${JSON.stringify(raw)}: ${digits.length} digits is too short for an international number (7-15)` };
  if (digits.length > 15) return { ok: false, reason: `${JSON.stringify(raw)}: ${digits.length} digits is too long for an international number (7-15)` };
  return { ok: true, number: e164, kind: 'e164' };
}
