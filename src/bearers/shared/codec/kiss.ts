import { concat } from './bytes.ts';

// KISS framing as the RNode firmware speaks it (docs/protocols/rnode.md 1.2; RF:Framing.h). Pure: no
// sockets, timers or logging (docs/style.md habit 1). The half-frame discard after silence
// (100 ms serial, 1250 ms BLE, 1500 ms TCP) is the driver's job: it calls reset().

export const FEND = 0xc0;
export const FESC = 0xdb;
export const TFEND = 0xdc;
export const TFESC = 0xdd;

/** Largest payload one frame may carry: HW_MTU 508 (docs/protocols/rnode.md 1.2). */
export const KISS_MAX_PAYLOAD = 508;

export interface KissFrame {
  command: number;
  payload: Uint8Array;
}

/** What the decoder threw away and why; counters only ever grow (reset() keeps them). */
export interface KissErrorCounts {
  /** Frames whose payload passed KISS_MAX_PAYLOAD: dropped whole. */
  oversize: number;
  /** FESC followed by anything but TFEND/TFESC: the frame is dropped. */
  badEscape: number;
  /** Bytes seen outside any frame (before the first FEND, or after a reset). */
  unframedBytes: number;
  /** Half-received frames thrown away by reset(). */
  discardedPartial: number;
}

/** Escapes a payload: FESC first becomes FESC TFESC, FEND becomes FESC TFEND. */
export function escapeKiss(payload: Uint8Array): Uint8Array {
  let extra = 0;
  for (const b of payload) if (b === FEND || b === FESC) extra++;
  const out = new Uint8Array(payload.length + extra);
  let i = 0;
  for (const b of payload) {
    if (b === FESC) {
      out[i++] = FESC;
      out[i++] = TFESC;
    } else if (b === FEND) {
      out[i++] = FESC;
      out[i++] = TFEND;
    } else out[i++] = b;
  }
  return out;
}

/** One frame on the wire: FEND, command, escaped payload, FEND. The command byte goes
 *  unescaped, as the firmware reads it, so it may not be FEND or FESC. Callers check the
 *  payload size against KISS_MAX_PAYLOAD (the driver refuses longer frames with an error). */
export function encodeFrame(command: number, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  if (!Number.isInteger(command) || command < 0 || command > 0xff || command === FEND || command === FESC) {
    throw new RangeError(`KISS command must be a byte other than C0 and DB, got ${command}`);
  }
  const body = escapeKiss(payload);
  const out = new Uint8Array(body.length + 3);
  out[0] = FEND;
  out[1] = command;
  out.set(body, 2);
  out[out.length - 1] = FEND;
  return out;
}

/** Several frames written as one buffer (the detect burst, a configuration run). */
export function encodeFrames(frames: readonly KissFrame[]): Uint8Array {
  return concat(...frames.map((f) => encodeFrame(f.command, f.payload)));
}

/** Streaming decoder: push() takes any chunk and returns the frames it completed. Any FEND
 *  ends the current frame and starts the next (consecutive frames may share one FEND); an
 *  empty FEND FEND pair is just padding. Bad input is counted, never thrown. */
export class KissDecoder {
  readonly errors: KissErrorCounts = { oversize: 0, badEscape: 0, unframedBytes: 0, discardedPartial: 0 };
  readonly #buffer = new Uint8Array(KISS_MAX_PAYLOAD);
  #length = 0;
  #inFrame = false;
  #command: number | null = null;
  #escape = false;
  #oversize = false;
  #corrupt = false;

  push(chunk: Uint8Array): KissFrame[] {
    const frames: KissFrame[] = [];
    for (const byte of chunk) {
      if (byte === FEND) {
        this.#finishFrame(frames);
        this.#inFrame = true;
        continue;
      }
      if (!this.#inFrame) {
        this.errors.unframedBytes++;
        continue;
      }
      if (this.#command === null) {
        this.#command = byte;
        continue;
      }
      if (this.#corrupt || this.#oversize) continue;
      let value = byte;
      if (this.#escape) {
        this.#escape = false;
        if (byte === TFEND) value = FEND;
        else if (byte === TFESC) value = FESC;
        else {
          this.#corrupt = true;
          continue;
        }
      } else if (byte === FESC) {
        this.#escape = true;
        continue;
      }
      if (this.#length === KISS_MAX_PAYLOAD) {
        this.#oversize = true;
        continue;
      }
      this.#buffer[this.#length++] = value;
    }
    return frames;
  }

  /** True while a frame has begun (command byte seen) and not yet ended. */
  get midFrame(): boolean {
    return this.#command !== null;
  }

  /** Payload bytes held for the frame in progress; never more than KISS_MAX_PAYLOAD. */
  get bufferedBytes(): number {
    return this.#length;
  }

  /** Throws away a half-received frame and waits for the next FEND (the driver calls this
   *  after a silence; docs/protocols/rnode.md 1.2). */
  reset(): void {
    if (this.#command !== null) this.errors.discardedPartial++;
    this.#clearFrame();
    this.#inFrame = false;
  }

  #finishFrame(frames: KissFrame[]): void {
    if (this.#command !== null) {
      // A FESC right before the closing FEND is an unfinished escape: the frame is damaged.
      if (this.#escape) this.#corrupt = true;
      if (this.#oversize) this.errors.oversize++;
      else if (this.#corrupt) this.errors.badEscape++;
      else {
        frames.push({ command: this.#command, payload: this.#buffer.slice(0, this.#length) });
      }
    }
    this.#clearFrame();
  }

  #clearFrame(): void {
    this.#length = 0;
    this.#command = null;
    this.#escape = false;
    this.#oversize = false;
    this.#corrupt = false;
  }
}

/** A TNC's command byte (KISS, "Frame format"): the port (0-15) in the high nibble, the
 *  command (0 = a data frame) in the low one. A multi-port TNC is addressed by it; the RNode
 *  speaks port 0 only, with commands of its own. */
export function kissCommand(port: number, command: number): number {
  if (!Number.isInteger(port) || port < 0 || port > 15 || !Number.isInteger(command) || command < 0 || command > 15) throw new RangeError(`KISS port and command are 0-15, got ${port} and ${command}`);
  return (port << 4) | command;
}

/** The port and command of a TNC's command byte. */
export function kissPort(byte: number): { port: number; command: number } {
  return { port: byte >> 4, command: byte & 0x0f };
}
