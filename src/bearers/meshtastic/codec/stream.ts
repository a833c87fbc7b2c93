// Framing of the Meshtastic stream API, the same over USB serial (115200 baud) and TCP
// (port 4403): docs/protocols/meshtastic.md 2.1. Pure: no I/O, timers or logging
// (docs/style.md habit 1). A frame is
//
//   94 C3 <length high> <length low> <length bytes of protobuf>
//
// (a ToRadio from the host, a FromRadio from the device), no checksum. Bytes outside frames
// are the device's debug log as text lines.

export const START1 = 0x94;
export const START2 = 0xc3;
export const HEADER_BYTES = 4;
/** MAX_TO_FROM_RADIO_SIZE: a longer announced length is invalid (2.1). */
export const MAX_FRAME_PAYLOAD = 512;
export const SERIAL_BAUD = 115200;
/** SERVER_API_DEFAULT_PORT. */
export const TCP_PORT = 4403;
/** Longest debug text line kept; a longer one is cut into pieces of this size. */
export const MAX_TEXT_LINE = 512;

/** 32 x C3 (START2): sent before the first want_config_id, then wait 100 ms; it forces the
 *  device's parser to resynchronise (2.1). Shared: do not write into it. */
export const WAKE_BYTES: Uint8Array = new Uint8Array(32).fill(START2);

/** One frame on the wire. Throws RangeError when the payload passes MAX_FRAME_PAYLOAD: the
 *  device would drop such a frame, so sending one is the caller's bug (an encoded ToRadio
 *  whose Data.payload stays within 233 bytes is far below the limit). */
export function encodeFrame(payload: Uint8Array): Uint8Array {
  if (payload.length > MAX_FRAME_PAYLOAD) {
    throw new RangeError(`a Meshtastic stream frame carries at most ${MAX_FRAME_PAYLOAD} bytes, got ${payload.length}`);
  }
  const out = new Uint8Array(HEADER_BYTES + payload.length);
  out[0] = START1;
  out[1] = START2;
  out[2] = payload.length >> 8;
  out[3] = payload.length & 0xff;
  out.set(payload, HEADER_BYTES);
  return out;
}

export type StreamEvent =
  /** A frame's protobuf body (a copy the caller owns). */
  | { type: 'frame'; payload: Uint8Array }
  /** A line of the device's debug output, without its line end and control characters. */
  | { type: 'text'; line: string }
  /** A header announced more than MAX_FRAME_PAYLOAD bytes: it was dropped and the search for
   *  the next frame resumed right after its first byte. */
  | { type: 'oversize'; length: number };

/** What the decoder has seen and thrown away; counters only grow (reset() keeps them). */
export interface StreamCounts {
  frames: number;
  textLines: number;
  /** Headers whose length passed MAX_FRAME_PAYLOAD. */
  oversize: number;
  /** 94 not followed by C3: taken as text. */
  falseStarts: number;
  /** Control bytes and ANSI escape sequences left out of text lines. */
  droppedTextBytes: number;
  /** Text lines cut at MAX_TEXT_LINE. */
  longLines: number;
  /** Half-received frames thrown away by reset(). */
  discardedPartial: number;
}

const NEWLINE = 0x0a;
const ESC = 0x1b;
const TAB = 0x09;

// Text filter states: plain text, after ESC, inside an ANSI CSI sequence (ESC [ ... final).
const TEXT = 0;
const AFTER_ESC = 1;
const IN_CSI = 2;

const utf8 = new TextDecoder('utf-8', { fatal: false });

/** Incremental decoder: push() takes chunks cut anywhere and returns what they completed, in
 *  order. Never throws; holds at most one frame and one text line (bufferedBytes). A corrupt
 *  length within 512 swallows the bytes after it until that many have come (there is no
 *  checksum): the driver calls reset() after a silence, as for KISS. */
export class StreamDecoder {
  readonly counts: StreamCounts = {
    frames: 0, textLines: 0, oversize: 0, falseStarts: 0, droppedTextBytes: 0, longLines: 0, discardedPartial: 0,
  };
  readonly #frame = new Uint8Array(HEADER_BYTES + MAX_FRAME_PAYLOAD);
  /** Bytes of the frame in progress (header included); 0 = hunting for START1. */
  #have = 0;
  /** Total bytes of the frame in progress, known once the header is complete. */
  #need = 0;
  readonly #line = new Uint8Array(MAX_TEXT_LINE);
  #lineLength = 0;
  #textState = TEXT;

  push(chunk: Uint8Array): StreamEvent[] {
    const events: StreamEvent[] = [];
    for (let i = 0; i < chunk.length; i++) this.#byte(chunk[i], events);
    return events;
  }

  /** Bytes held: the frame in progress plus the unfinished text line. Never more than
   *  HEADER_BYTES + MAX_FRAME_PAYLOAD + MAX_TEXT_LINE. */
  get bufferedBytes(): number {
    return this.#have + this.#lineLength;
  }

  /** True while a frame has begun and not yet completed. */
  get midFrame(): boolean {
    return this.#have > 0;
  }

  /** Throws away a half-received frame (the driver calls it after a silence, or when the
   *  connection is reopened). The unfinished text line is kept. */
  reset(): void {
    if (this.#have > 0) this.counts.discardedPartial++;
    this.#have = 0;
    this.#need = 0;
  }

  #byte(b: number, events: StreamEvent[]): void {
    const have = this.#have;
    if (have === 0) {
      if (b === START1) {
        this.#frame[0] = b;
        this.#have = 1;
      } else {
        this.#text(b, events);
      }
      return;
    }
    if (have === 1) {
      if (b !== START2) {
        // Not a header: the 94 was text (it is also a UTF-8 continuation byte, as in "—").
        this.counts.falseStarts++;
        this.#have = 0;
        this.#text(START1, events);
        this.#byte(b, events);
        return;
      }
      this.#frame[1] = b;
      this.#have = 2;
      return;
    }
    if (have < HEADER_BYTES) {
      this.#frame[have] = b;
      this.#have = have + 1;
      if (this.#have < HEADER_BYTES) return;
      const length = (this.#frame[2] << 8) | this.#frame[3];
      if (length > MAX_FRAME_PAYLOAD) {
        // Drop the 94 only and scan again from the byte after it: a valid frame may begin
        // inside the bogus header (2.1: "drop it and search for the next 94").
        this.counts.oversize++;
        events.push({ type: 'oversize', length });
        const c3 = this.#frame[1];
        const hi = this.#frame[2];
        const lo = this.#frame[3];
        this.#have = 0;
        this.#byte(c3, events);
        this.#byte(hi, events);
        this.#byte(lo, events);
        return;
      }
      this.#need = HEADER_BYTES + length;
      if (length === 0) this.#emitFrame(events);
      return;
    }
    this.#frame[have] = b;
    this.#have = have + 1;
    if (this.#have === this.#need) this.#emitFrame(events);
  }

  #emitFrame(events: StreamEvent[]): void {
    events.push({ type: 'frame', payload: this.#frame.slice(HEADER_BYTES, this.#need) });
    this.counts.frames++;
    this.#have = 0;
    this.#need = 0;
  }

  #text(b: number, events: StreamEvent[]): void {
    if (this.#textState === AFTER_ESC) {
      this.#textState = b === 0x5b ? IN_CSI : TEXT; // '[' opens a CSI sequence (colours)
      this.counts.droppedTextBytes++;
      return;
    }
    if (this.#textState === IN_CSI) {
      if (b >= 0x40 && b <= 0x7e) this.#textState = TEXT; // the final byte, e.g. 'm'
      this.counts.droppedTextBytes++;
      if (b !== NEWLINE) return;
      this.#textState = TEXT;
    }
    if (b === NEWLINE) {
      this.#endLine(events);
      return;
    }
    if (b === ESC) {
      this.#textState = AFTER_ESC;
      this.counts.droppedTextBytes++;
      return;
    }
    if ((b < 0x20 && b !== TAB) || b === 0x7f) {
      this.counts.droppedTextBytes++; // CR, NUL, bells and other control bytes
      return;
    }
    if (this.#lineLength === MAX_TEXT_LINE) {
      this.counts.longLines++;
      this.#endLine(events);
    }
    this.#line[this.#lineLength++] = b;
  }

  #endLine(events: StreamEvent[]): void {
    if (this.#lineLength === 0) return;
    const line = utf8.decode(this.#line.subarray(0, this.#lineLength));
    this.#lineLength = 0;
    this.counts.textLines++;
    events.push({ type: 'text', line });
  }
}
