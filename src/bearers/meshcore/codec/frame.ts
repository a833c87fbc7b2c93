import { FRAME_START, HEADER_BYTES, MAX_FRAME_SIZE } from './constants.ts';

// Framing of the MeshCore companion protocol over USB serial (115200 baud) and TCP (port
// 5000): docs/protocols/meshcore.md 6.1. Pure: no I/O, timers or logging (docs/style.md
// habit 1). A frame is
//
//   <direction> <length low> <length high> <length bytes>
//
// with direction '<' (3C) from the host and '>' (3E) from the radio, no checksum. There is no
// debug text on the companion's port; any byte outside a frame is noise and is counted.

export type Direction = 'to-radio' | 'from-radio';

const START: Record<Direction, number> = { 'to-radio': FRAME_START.TO_RADIO, 'from-radio': FRAME_START.FROM_RADIO };

/** One frame on the wire. Throws RangeError for an empty body or one longer than
 *  MAX_FRAME_SIZE: the firmware ignores a zero length and cuts a longer frame, so sending one
 *  is the caller's bug. */
export function encodeFrame(direction: Direction, body: Uint8Array): Uint8Array {
  if (body.length === 0 || body.length > MAX_FRAME_SIZE) {
    throw new RangeError(`a MeshCore frame carries 1 to ${MAX_FRAME_SIZE} bytes, got ${body.length}`);
  }
  const out = new Uint8Array(HEADER_BYTES + body.length);
  out[0] = START[direction];
  out[1] = body.length & 0xff;
  out[2] = body.length >> 8;
  out.set(body, HEADER_BYTES);
  return out;
}

export type FrameEvent =
  /** A frame's body (a copy the caller owns). */
  | { type: 'frame'; body: Uint8Array }
  /** A header announced more than the decoder's maximum: dropped, and the search for the next
   *  frame resumed right after its direction byte. */
  | { type: 'oversize'; length: number }
  /** A header announced length 0: dropped (the firmware and meshcore.js ignore it too). */
  | { type: 'empty' };

/** What the decoder has seen and thrown away; counters only grow (reset() keeps them). */
export interface FrameCounts {
  frames: number;
  oversize: number;
  empty: number;
  /** Bytes outside frames (noise, or frames of the other direction's start byte). */
  skippedBytes: number;
  /** Half-received frames thrown away by reset(). */
  discardedPartial: number;
}

export interface FrameDecoderOptions {
  /** Largest body accepted; default MAX_FRAME_SIZE (the firmware's). */
  maxFrame?: number;
}

/**
 * Incremental decoder for one direction: push() takes chunks cut anywhere and returns what
 * they completed, in order. Never throws; holds at most one frame. A corrupt length within
 * the maximum swallows the bytes after it until that many have come (there is no checksum):
 * the driver calls reset() after a silence or a reconnect.
 */
export class FrameDecoder {
  readonly counts: FrameCounts = { frames: 0, oversize: 0, empty: 0, skippedBytes: 0, discardedPartial: 0 };
  readonly #start: number;
  readonly #max: number;
  readonly #frame: Uint8Array;
  /** Bytes of the frame in progress, header included; 0 = hunting for the start byte. */
  #have = 0;
  #need = 0;

  constructor(direction: Direction, options: FrameDecoderOptions = {}) {
    this.#start = START[direction];
    this.#max = Math.max(1, Math.min(0xffff, options.maxFrame ?? MAX_FRAME_SIZE));
    this.#frame = new Uint8Array(HEADER_BYTES + this.#max);
  }

  push(chunk: Uint8Array): FrameEvent[] {
    const events: FrameEvent[] = [];
    for (let i = 0; i < chunk.length; i++) this.#byte(chunk[i], events);
    return events;
  }

  /** Bytes held by the frame in progress (never more than HEADER_BYTES + the maximum). */
  get bufferedBytes(): number {
    return this.#have;
  }

  get midFrame(): boolean {
    return this.#have > 0;
  }

  /** Throws away a half-received frame (after a silence, or when the link is reopened). */
  reset(): void {
    if (this.#have > 0) this.counts.discardedPartial++;
    this.#have = 0;
    this.#need = 0;
  }

  #byte(b: number, events: FrameEvent[]): void {
    const have = this.#have;
    if (have === 0) {
      if (b === this.#start) {
        this.#frame[0] = b;
        this.#have = 1;
      } else {
        this.counts.skippedBytes++;
      }
      return;
    }
    if (have < HEADER_BYTES) {
      this.#frame[have] = b;
      this.#have = have + 1;
      if (this.#have < HEADER_BYTES) return;
      const length = this.#frame[1] | (this.#frame[2] << 8);
      if (length === 0 || length > this.#max) {
        // Drop the direction byte only and scan the two length bytes again: a real frame may
        // begin inside a bogus header (6.1).
        if (length === 0) {
          this.counts.empty++;
          events.push({ type: 'empty' });
        } else {
          this.counts.oversize++;
          events.push({ type: 'oversize', length });
        }
        this.counts.skippedBytes++;
        const lo = this.#frame[1];
        const hi = this.#frame[2];
        this.#have = 0;
        this.#byte(lo, events);
        this.#byte(hi, events);
        return;
      }
      this.#need = HEADER_BYTES + length;
      return;
    }
    this.#frame[have] = b;
    this.#have = have + 1;
    if (this.#have === this.#need) {
      events.push({ type: 'frame', body: this.#frame.slice(HEADER_BYTES, this.#need) });
      this.counts.frames++;
      this.#have = 0;
      this.#need = 0;
    }
  }
}
