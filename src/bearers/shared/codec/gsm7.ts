// GSM 7-bit default alphabet and extension table (docs/protocols/sms.md 4.4). Pure: the
// SMS driver counts and packs septets with it, the strip_non_gsm7 transform folds text into it.

/** The default alphabet in code order, 0x00 to 0x7F. Position 0x1B is the escape to the
 *  extension table, not a character; it holds ESC here only to keep the positions right. */
export const GSM7_DEFAULT_ALPHABET =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';

/** Escape septet: the next septet is read from the extension table (docs/protocols/sms.md 4.4). */
export const GSM7_ESCAPE = 0x1b;

/** The extension table's characters and their codes after the escape (docs/protocols/sms.md 4.4):
 *  form feed, ^ { } \ [ ~ ] | and the euro sign. Each costs two septets on the air. */
export const GSM7_EXTENSION_TABLE: Readonly<Record<string, number>> = {
  '\f': 0x0a,
  '^': 0x14,
  '{': 0x28,
  '}': 0x29,
  '\\': 0x2f,
  '[': 0x3c,
  '~': 0x3d,
  ']': 0x3e,
  '|': 0x40,
  '€': 0x65,
};

const BASIC = new Map<string, number>();
for (let code = 0; code < 0x80; code++) if (code !== GSM7_ESCAPE) BASIC.set(GSM7_DEFAULT_ALPHABET[code], code);
const GSM7 = new Set([...BASIC.keys(), ...Object.keys(GSM7_EXTENSION_TABLE)]);

// What phone keyboards and word processors produce most often, folded to a GSM look-alike
// instead of "?": typographic quotes, dashes, ellipsis, non-breaking spaces, tab, backtick.
const GSM7_FOLD: Record<string, string> = {
  '\u2018': "'", '\u2019': "'", '\u201A': "'", '\u201B': "'", '\u2032': "'", '`': "'", '\u00B4': "'",
  '\u201C': '"', '\u201D': '"', '\u201E': '"', '\u201F': '"', '\u2033': '"', '\u00AB': '"', '\u00BB': '"',
  '\u2010': '-', '\u2011': '-', '\u2012': '-', '\u2013': '-', '\u2014': '-', '\u2015': '-', '\u2212': '-',
  '\u2026': '...', '\u00A0': ' ', '\u2007': ' ', '\u202F': ' ', '\t': ' ', '\u2022': '*',
};

/** One character in GSM-7: itself, a fold, its unaccented base letter, or "?". */
function gsm7Char(ch: string): string {
  if (GSM7.has(ch)) return ch;
  const folded = GSM7_FOLD[ch];
  if (folded !== undefined) return folded;
  // A combining mark left alone after NFC ("q" + U+0301): its base is already out; drop it.
  if (/^[\u0300-\u036f]$/.test(ch)) return '';
  // "á" is not GSM but "a" is: decompose (NFD) and keep the base when only combining marks
  // (U+0300..U+036F) follow it.
  const decomposed = ch.normalize('NFD');
  const base = decomposed[0];
  if (decomposed.length > 1 && GSM7.has(base) && /^[\u0300-\u036f]+$/.test(decomposed.slice(1))) return base;
  return '?';
}

/** Text folded into GSM-7: look-alikes folded, accents dropped, anything else "?". */
export function toGsm7(text: string): string {
  let out = '';
  // Compose first so a decomposed "é" (e + U+0301) meets the GSM "é" rather than two pieces.
  for (const ch of text.normalize('NFC')) out += gsm7Char(ch);
  return out;
}

/** True when every character is in the default alphabet or the extension table. */
export function isGsm7(text: string): boolean {
  for (const ch of text) if (!GSM7.has(ch)) return false;
  return true;
}

/** Septets the text takes in GSM-7: one per default-alphabet character, two per extension
 *  character (escape + code; docs/protocols/sms.md 4.4). Null when a character has no
 *  GSM-7 code: run toGsm7 first, or send UCS-2. */
export function gsm7SeptetCount(text: string): number | null {
  let n = 0;
  for (const ch of text) {
    if (BASIC.has(ch)) n += 1;
    else if (GSM7_EXTENSION_TABLE[ch] !== undefined) n += 2;
    else return null;
  }
  return n;
}

/** The text as unpacked septet codes (0x00-0x7F), extension characters as 0x1B + code; null
 *  when a character has no GSM-7 code. Packing eight septets into seven octets is the PDU
 *  encoder's job. */
export function gsm7Septets(text: string): Uint8Array | null {
  const count = gsm7SeptetCount(text);
  if (count === null) return null;
  const out = new Uint8Array(count);
  let i = 0;
  for (const ch of text) {
    const code = BASIC.get(ch);
    if (code !== undefined) out[i++] = code;
    else {
      out[i++] = GSM7_ESCAPE;
      out[i++] = GSM7_EXTENSION_TABLE[ch];
    }
  }
  return out;
}
