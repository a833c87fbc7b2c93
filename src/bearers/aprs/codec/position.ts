// APRS positions: uncompressed and compressed, with and without a timestamp (docs/protocols/
// aprs.md 2.2 to 2.4; APRS 1.0.1 chapters 6, 8 and 9). Pure.

export interface AprsPosition {
  latitude: number;
  longitude: number;
  /** Symbol table (`/`, `\` or an overlay character) and symbol code. */
  symbolTable: string;
  symbol: string;
  altitude_m?: number;
  course_deg?: number;
  speed_kmh?: number;
  compressed: boolean;
  comment: string;
}

const FEET = 0.3048;
const KNOT_KMH = 1.852;

/** "4903.50N" and "07201.75W": degrees, minutes and hundredths; spaces (position ambiguity)
 *  read as zeros. Null when out of range. */
const readLat = (s: string) => readDegrees(s, /^(\d{2})([\d ]{2})\.([\d ]{2})([NS])$/, 90, 'S');
const readLon = (s: string) => readDegrees(s, /^(\d{3})([\d ]{2})\.([\d ]{2})([EW])$/, 180, 'W');

function readDegrees(s: string, form: RegExp, max: number, negative: string): number | null {
  const m = form.exec(s);
  if (!m) return null;
  const v = Number(m[1]) + Number(`${m[2]}.${m[3]}`.replaceAll(' ', '0')) / 60;
  if (v > max || Number(m[2].replaceAll(' ', '0')) >= 60) return null;
  return m[4] === negative ? -v : v;
}

const TABLE = /^[/\\A-Z0-9]$/;

/** The data extension and altitude in a comment: `ccc/sss` course and speed (knots) right
 *  after the symbol, `/A=nnnnnn` feet anywhere. */
function extras(comment: string, p: AprsPosition): AprsPosition {
  let rest = comment;
  const cs = /^(\d{3})\/(\d{3})/.exec(rest);
  if (cs) {
    const course = Number(cs[1]);
    if (course >= 1 && course <= 360) p.course_deg = course;
    p.speed_kmh = Number(cs[2]) * KNOT_KMH;
    rest = rest.slice(7);
  }
  const alt = /\/A=(-\d{5}|\d{6})/.exec(rest);
  if (alt) {
    p.altitude_m = Number(alt[1]) * FEET;
    rest = rest.slice(0, alt.index) + rest.slice(alt.index + 9);
  }
  p.comment = rest;
  return p;
}

/** `DDMM.mmN/DDDMM.mmW$` then a comment; null when it is not one. */
export function decodeUncompressed(s: string): AprsPosition | null {
  if (s.length < 19) return null;
  const latitude = readLat(s.slice(0, 8));
  const longitude = readLon(s.slice(9, 18));
  if (latitude === null || longitude === null || !TABLE.test(s[8])) return null;
  return extras(s.slice(19), { latitude, longitude, symbolTable: s[8], symbol: s[18], compressed: false, comment: '' });
}

const b91 = (s: string): number | null => {
  let v = 0;
  for (const c of s) {
    const d = c.charCodeAt(0) - 33;
    if (d < 0 || d > 90) return null;
    v = v * 91 + d;
  }
  return v;
};

/** `/YYYYXXXX$csT` then a comment; null when it is not one. */
export function decodeCompressed(s: string): AprsPosition | null {
  if (s.length < 13 || !/^[/\\A-Za-j]$/.test(s[0])) return null;
  const y = b91(s.slice(1, 5));
  const x = b91(s.slice(5, 9));
  if (y === null || x === null) return null;
  const latitude = 90 - y / 380926;
  const longitude = -180 + x / 190463;
  if (latitude < -90 || latitude > 90 || longitude < -180 || longitude > 180) return null;
  // a-j are overlay digits 0-9 in the compressed form.
  const table = /[a-j]/.test(s[0]) ? String.fromCharCode(s.charCodeAt(0) - 0x61 + 0x30) : s[0];
  const p: AprsPosition = { latitude, longitude, symbolTable: table, symbol: s[9], compressed: true, comment: s.slice(13) };
  const c = s.charCodeAt(10) - 33;
  const sp = s.charCodeAt(11) - 33;
  const t = s.charCodeAt(12) - 33;
  if (s[10] !== ' ' && c >= 0 && c <= 90 && sp >= 0 && sp <= 90 && t >= 0 && t <= 90) {
    if (((t >> 3) & 3) === 2) p.altitude_m = 1.002 ** (c * 91 + sp) * FEET;
    else if (c <= 89) {
      if (c > 0) p.course_deg = c * 4;
      p.speed_kmh = (1.08 ** sp - 1) * KNOT_KMH;
    }
  }
  const alt = /\/A=(-\d{5}|\d{6})/.exec(p.comment);
  if (alt && p.altitude_m === undefined) p.altitude_m = Number(alt[1]) * FEET;
  return p;
}

/** Either form: a compressed one starts with its table and a base-91 digit, never a digit pair. */
export function decodePosition(s: string): AprsPosition | null {
  return /^\d/.test(s) ? decodeUncompressed(s) : decodeCompressed(s);
}

export type AprsTimestamp =
  | { form: 'dhm-utc' | 'dhm-local'; day: number; hour: number; minute: number }
  | { form: 'hms-utc'; hour: number; minute: number; second: number };

/** Seven characters: `DDHHMMz`, `DDHHMM/` or `HHMMSSh`. */
export function decodeTimestamp(s: string): AprsTimestamp | null {
  const m = /^(\d{2})(\d{2})(\d{2})([z/h])$/.exec(s);
  if (!m) return null;
  const [a, b, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (m[4] === 'h') return a < 24 && b < 60 && c < 60 ? { form: 'hms-utc', hour: a, minute: b, second: c } : null;
  if (a < 1 || a > 31 || b > 23 || c > 59) return null;
  return { form: m[4] === 'z' ? 'dhm-utc' : 'dhm-local', day: a, hour: b, minute: c };
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

/** `DDHHMMz` of an epoch time (UTC). */
export function encodeTimestamp(atMs: number): string {
  const d = new Date(atMs);
  return `${pad(d.getUTCDate(), 2)}${pad(d.getUTCHours(), 2)}${pad(d.getUTCMinutes(), 2)}z`;
}

/** Degrees as DDMM.mm; hundredths of a minute rounded, carrying into minutes and degrees. */
function dm(value: number, degWidth: number): string {
  let hundredths = Math.round(Math.abs(value) * 6000);
  const deg = Math.floor(hundredths / 6000);
  hundredths -= deg * 6000;
  return `${pad(deg, degWidth)}${pad(Math.floor(hundredths / 100), 2)}.${pad(hundredths % 100, 2)}`;
}

export interface PositionInput {
  latitude: number;
  longitude: number;
  symbolTable: string;
  symbol: string;
  altitude_m?: number;
  comment?: string;
}

/** The uncompressed position body `DDMM.mmN/DDDMM.mmW$` with altitude and comment. */
export function encodeUncompressed(p: PositionInput): string {
  if (!(Math.abs(p.latitude) <= 90) || !(Math.abs(p.longitude) <= 180)) throw new RangeError('latitude or longitude out of range');
  if (!TABLE.test(p.symbolTable) || !/^[\x21-\x7e]$/.test(p.symbol)) throw new RangeError('symbol table must be /, \\ or an overlay; symbol one printable character');
  const lat = `${dm(p.latitude, 2)}${p.latitude < 0 ? 'S' : 'N'}`;
  const lon = `${dm(p.longitude, 3)}${p.longitude < 0 ? 'W' : 'E'}`;
  const alt = p.altitude_m === undefined ? '' : `/A=${altitudeFeet(p.altitude_m)}`;
  return `${lat}${p.symbolTable}${lon}${p.symbol}${alt}${p.comment ?? ''}`;
}

function altitudeFeet(m: number): string {
  const ft = Math.max(-99_999, Math.min(999_999, Math.round(m / FEET)));
  return ft < 0 ? `-${pad(-ft, 5)}` : pad(ft, 6);
}

/** A position report: `!`/`=` without timestamp, `/`/`@` with one; the second of each pair
 *  says the station takes messages. */
export function encodePositionReport(p: PositionInput, options: { messaging: boolean; atMs?: number }): string {
  const dti = options.atMs === undefined ? (options.messaging ? '=' : '!') : options.messaging ? '@' : '/';
  return dti + (options.atMs === undefined ? '' : encodeTimestamp(options.atMs)) + encodeUncompressed(p);
}
