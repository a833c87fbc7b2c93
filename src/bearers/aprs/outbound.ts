import type { OutboundFrame } from '../bearer.ts';
import { fixOf } from '../shared/codec/position-json.ts';
import { encodeObject } from './codec/info.ts';
import { encodeMessage, MAX_MESSAGE_TEXT } from './codec/message.ts';
import { encodePositionReport, type PositionInput } from './codec/position.ts';

// What one outbound frame becomes on APRS (docs/aprs.md, "What is sent"): text to a callsign is a
// message that wants an acknowledgement; text to a bulletin name (BLN0-BLN9, BLNA-BLNZ) is a
// bulletin without one; a position to the interface's own callsign is the station's position,
// to any other name an object of that name. Pure.

export type Outgoing =
  | { type: 'message'; addressee: string; text: string }
  | { type: 'bulletin'; info: string }
  | { type: 'position'; info: string }
  | { type: 'refused'; error: string };

const ADDRESSEE = /^[A-Z0-9]{1,6}(-(1[0-5]|[1-9]))?$/;
const BULLETIN = /^BLN[0-9A-Z]$/;

/** A text as an APRS message may carry it: `{` (which starts the id), `|` and `~` (reserved)
 *  and control characters are replaced by look-alikes rather than refused. */
export function messageText(text: string): string {
  return text.replace(/\{/g, '(').replace(/\|/g, '/').replace(/~/g, '-').replace(/[\x00-\x1f\x7f]+/g, ' ').trim();
}

export function outgoing(frame: OutboundFrame, callsign: string, symbol: string, nowMs: number): Outgoing {
  const to = frame.to.trim().toUpperCase();
  if (frame.kind === 'text' || (frame.kind === 'data' && frame.text !== null)) {
    const text = messageText(frame.text ?? new TextDecoder().decode(frame.payload));
    if (text === '') return { type: 'refused', error: 'ERR_APRS_EMPTY: the message has no text to send' };
    const length = [...text].length;
    if (length > MAX_MESSAGE_TEXT) return { type: 'refused', error: `ERR_APRS_TOO_LONG: ${length} characters is more than the ${MAX_MESSAGE_TEXT} one APRS message carries (add a split transform to the rule)` };
    if (BULLETIN.test(to)) return { type: 'bulletin', info: encodeMessage(to, text, null) };
    if (!ADDRESSEE.test(to)) return { type: 'refused', error: `ERR_APRS_ADDRESS: "${frame.to}" is not a callsign (1 to 6 letters and digits, SSID -1 to -15) or a bulletin name BLN0-BLNZ` };
    return { type: 'message', addressee: to, text };
  }
  if (frame.kind === 'position') {
    const p = positionOf(frame.payload, symbol);
    if (!p) return { type: 'refused', error: 'ERR_APRS_POSITION: the position has no latitude and longitude' };
    if (to === callsign.toUpperCase()) return { type: 'position', info: encodePositionReport(p, { messaging: true }) };
    const name = frame.to.trim();
    if (name.length < 1 || name.length > 9 || !/^[\x20-\x7e]+$/.test(name)) return { type: 'refused', error: `ERR_APRS_ADDRESS: an APRS object is named by 1 to 9 printable characters; "${frame.to}" is not one` };
    return { type: 'position', info: encodeObject(name, p, nowMs) };
  }
  return { type: 'refused', error: `ERR_APRS_KIND: a ${frame.kind} frame has no APRS form; APRS carries text messages and positions` };
}

/** A stored position (the bridge's position JSON) as an APRS position with `symbol`. */
function positionOf(payload: Uint8Array, symbol: string): PositionInput | null {
  const fix = fixOf(payload);
  if (!fix) return null;
  return { latitude: fix.latitude, longitude: fix.longitude, symbolTable: symbol[0], symbol: symbol[1], ...(fix.altitude_m !== undefined ? { altitude_m: fix.altitude_m } : {}) };
}
