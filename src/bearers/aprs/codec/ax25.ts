// AX.25 UI frames as APRS sends them (docs/protocols/aprs.md 1; AX.25 2.2 sections 3 and 6.1.2),
// and the TNC2 monitor text APRS-IS carries (docs/protocols/aprs.md 3). Pure: no I/O.

/** Control field of an unnumbered information (UI) frame, poll bit clear. */
export const UI_CONTROL = 0x03;
/** Protocol id "no layer 3", the one APRS uses. */
export const PID_NO_LAYER3 = 0xf0;
/** At most eight digipeaters follow the source (AX.25 2.2 section 3.12.1; 2.0 allowed eight too). */
export const MAX_DIGIPEATERS = 8;
/** Largest information field an APRS frame carries (APRS 1.0.1 chapter 4: 256 bytes). */
export const MAX_INFO = 256;

export interface Ax25Address {
  /** 1 to 6 upper-case letters and digits. */
  call: string;
  /** 0 to 15. */
  ssid: number;
  /** A digipeater's has-been-repeated (H) bit; for the destination and source, their C bit. */
  flag: boolean;
}

export interface UiFrame {
  destination: Ax25Address;
  source: Ax25Address;
  path: Ax25Address[];
  info: Uint8Array;
}

const CALL = /^[A-Z0-9]{1,6}$/;

/** "N0CALL-7" (a trailing "*" marks a repeated digipeater) as an address; null when the text is
 *  not one AX.25 can carry (longer than six characters, lower case, an SSID above 15). */
export function parseAddress(text: string): Ax25Address | null {
  const m = /^([A-Z0-9]{1,6})(?:-(\d{1,2}))?(\*)?$/.exec(text);
  if (!m) return null;
  const ssid = m[2] === undefined ? 0 : Number(m[2]);
  if (ssid > 15 || (m[2] !== undefined && m[2].length === 2 && m[2][0] === '0')) return null;
  return { call: m[1], ssid, flag: m[3] === '*' };
}

/** "N0CALL-7", or "N0CALL" for SSID 0. */
export function formatAddress(a: Pick<Ax25Address, 'call' | 'ssid'>): string {
  return a.ssid === 0 ? a.call : `${a.call}-${a.ssid}`;
}

/** Seven bytes: six characters shifted left one bit (spaces pad), then the SSID byte
 *  C/H-bit, two reserved bits set, SSID in bits 4-1, and the extension bit on the last. */
function writeAddress(out: Uint8Array, at: number, a: Ax25Address, last: boolean): void {
  if (!CALL.test(a.call) || !Number.isInteger(a.ssid) || a.ssid < 0 || a.ssid > 15) throw new RangeError(`not an AX.25 address: ${a.call}-${a.ssid}`);
  for (let i = 0; i < 6; i++) out[at + i] = (i < a.call.length ? a.call.charCodeAt(i) : 0x20) << 1;
  out[at + 6] = (a.flag ? 0x80 : 0) | 0x60 | (a.ssid << 1) | (last ? 1 : 0);
}

/** A UI frame's bytes (no flags, no FCS: a KISS TNC adds those). The destination's C bit set
 *  and the source's clear make it a command frame (AX.25 2.2 section 6.1.2). */
export function encodeUi(frame: Omit<UiFrame, 'destination' | 'source'> & { destination: Omit<Ax25Address, 'flag'>; source: Omit<Ax25Address, 'flag'> }): Uint8Array {
  if (frame.path.length > MAX_DIGIPEATERS) throw new RangeError(`at most ${MAX_DIGIPEATERS} digipeaters`);
  if (frame.info.length > MAX_INFO) throw new RangeError(`information field of ${frame.info.length} bytes; at most ${MAX_INFO}`);
  const n = 2 + frame.path.length;
  const out = new Uint8Array(n * 7 + 2 + frame.info.length);
  writeAddress(out, 0, { ...frame.destination, flag: true }, false);
  writeAddress(out, 7, { ...frame.source, flag: false }, frame.path.length === 0);
  frame.path.forEach((d, i) => writeAddress(out, 14 + i * 7, d, i === frame.path.length - 1));
  out[n * 7] = UI_CONTROL;
  out[n * 7 + 1] = PID_NO_LAYER3;
  out.set(frame.info, n * 7 + 2);
  return out;
}

function readAddress(bytes: Uint8Array, at: number): Ax25Address | null {
  let call = '';
  let padded = false;
  for (let i = 0; i < 6; i++) {
    const b = bytes[at + i];
    if (b & 1) return null;
    const c = b >> 1;
    if (c === 0x20) {
      padded = true;
      continue;
    }
    const ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a);
    if (!ok || padded) return null;
    call += String.fromCharCode(c);
  }
  if (call === '') return null;
  const s = bytes[at + 6];
  return { call, ssid: (s >> 1) & 0x0f, flag: (s & 0x80) !== 0 };
}

/** Why a frame is not an APRS UI frame, or the frame. */
export type UiDecode = { ok: true; frame: UiFrame } | { ok: false; error: string };

/** Reads a frame as a KISS TNC hands it over (no FCS). Only UI frames with PID F0 are APRS. */
export function decodeUi(bytes: Uint8Array): UiDecode {
  const addresses: Ax25Address[] = [];
  let at = 0;
  for (;;) {
    if (at + 7 > bytes.length) return { ok: false, error: 'address field cut short' };
    const a = readAddress(bytes, at);
    if (!a) return { ok: false, error: `address ${addresses.length + 1} is not a callsign` };
    addresses.push(a);
    const last = (bytes[at + 6] & 1) === 1;
    at += 7;
    if (last) break;
    if (addresses.length === 2 + MAX_DIGIPEATERS) return { ok: false, error: `more than ${MAX_DIGIPEATERS} digipeaters` };
  }
  if (addresses.length < 2) return { ok: false, error: 'no source address' };
  if (at + 2 > bytes.length) return { ok: false, error: 'no control and PID' };
  if (bytes[at] !== UI_CONTROL) return { ok: false, error: `control 0x${bytes[at].toString(16)} is not a UI frame` };
  if (bytes[at + 1] !== PID_NO_LAYER3) return { ok: false, error: `PID 0x${bytes[at + 1].toString(16)} is not "no layer 3"` };
  const info = bytes.slice(at + 2);
  if (info.length > MAX_INFO) return { ok: false, error: `information field of ${info.length} bytes` };
  return { ok: true, frame: { destination: addresses[0], source: addresses[1], path: addresses.slice(2), info } };
}

/** A packet as TNC2 monitor text: SOURCE>DEST,PATH:info. APRS-IS paths hold words AX.25 cannot
 *  (q-constructs, TCPIP*, server names), so they stay strings here. */
export interface Tnc2Packet {
  source: string;
  destination: string;
  path: string[];
  info: string;
}

const ADDRESS_TEXT = /^[A-Za-z0-9-]{1,9}\*?$/;

/** One APRS-IS line (without its CR LF); null when it is not a packet (a `#` comment, junk). */
export function parseTnc2(line: string): Tnc2Packet | null {
  if (line.startsWith('#')) return null;
  const colon = line.indexOf(':');
  const gt = line.indexOf('>');
  if (gt <= 0 || colon < gt) return null;
  const source = line.slice(0, gt);
  const [destination, ...path] = line.slice(gt + 1, colon).split(',');
  if (!/^[A-Za-z0-9-]{1,9}$/.test(source) || !ADDRESS_TEXT.test(destination) || destination.endsWith('*')) return null;
  if (path.length > MAX_DIGIPEATERS + 2 || !path.every((p) => ADDRESS_TEXT.test(p))) return null;
  return { source, destination, path, info: line.slice(colon + 1) };
}

export function formatTnc2(p: Tnc2Packet): string {
  return `${p.source}>${[p.destination, ...p.path].join(',')}:${p.info}`;
}

/** A UI frame as TNC2 text: the last repeated digipeater is marked with `*` (the usual mark
 *  for "heard from here"), and the information field is read as UTF-8. */
export function uiToTnc2(frame: UiFrame): Tnc2Packet {
  let lastRepeated = -1;
  frame.path.forEach((d, i) => {
    if (d.flag) lastRepeated = i;
  });
  return {
    source: formatAddress(frame.source),
    destination: formatAddress(frame.destination),
    path: frame.path.map((d, i) => formatAddress(d) + (i === lastRepeated ? '*' : '')),
    info: new TextDecoder().decode(frame.info),
  };
}
