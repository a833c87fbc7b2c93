// Little-endian field helpers for the companion protocol's frame bodies (docs/protocols/
// meshcore.md 6.2: integers little-endian, strings UTF-8). A Reader never throws: reading past
// the end sets `short`, and decoders report such a frame as malformed.

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: false });

export const utf8 = (s: string): Uint8Array => encoder.encode(s);
export const fromUtf8 = (b: Uint8Array): string => decoder.decode(b);

export class Reader {
  #at: number;
  short = false;
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array, start = 1) {
    this.bytes = bytes;
    this.#at = start;
  }
  get remaining(): number {
    return Math.max(0, this.bytes.length - this.#at);
  }
  #take(n: number): number {
    const at = this.#at;
    if (at + n > this.bytes.length) {
      this.short = true;
      this.#at = this.bytes.length;
      return -1;
    }
    this.#at = at + n;
    return at;
  }
  u8(): number {
    const at = this.#take(1);
    return at < 0 ? 0 : this.bytes[at];
  }
  i8(): number {
    const v = this.u8();
    return v >= 0x80 ? v - 0x100 : v;
  }
  u16(): number {
    const at = this.#take(2);
    return at < 0 ? 0 : this.bytes[at] | (this.bytes[at + 1] << 8);
  }
  u32(): number {
    const at = this.#take(4);
    if (at < 0) return 0;
    const b = this.bytes;
    return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
  }
  i32(): number {
    return this.u32() | 0;
  }
  bytesOf(n: number): Uint8Array {
    const at = this.#take(n);
    return at < 0 ? new Uint8Array(n) : this.bytes.slice(at, at + n);
  }
  /** A fixed field of `n` bytes holding a NUL-terminated (or full-length) UTF-8 string. */
  cstring(n: number): string {
    const field = this.bytesOf(n);
    const end = field.indexOf(0);
    return fromUtf8(end < 0 ? field : field.subarray(0, end));
  }
  /** The rest of the frame. */
  rest(): Uint8Array {
    const at = this.#at;
    this.#at = this.bytes.length;
    return this.bytes.slice(at);
  }
}

export class Writer {
  readonly #parts: number[] = [];
  u8(v: number): this {
    this.#parts.push(v & 0xff);
    return this;
  }
  i8(v: number): this {
    return this.u8(v < 0 ? v + 0x100 : v);
  }
  u16(v: number): this {
    this.#parts.push(v & 0xff, (v >>> 8) & 0xff);
    return this;
  }
  u32(v: number): this {
    const x = v >>> 0;
    this.#parts.push(x & 0xff, (x >>> 8) & 0xff, (x >>> 16) & 0xff, x >>> 24);
    return this;
  }
  i32(v: number): this {
    return this.u32(v | 0);
  }
  bytes(b: Uint8Array): this {
    for (const x of b) this.#parts.push(x);
    return this;
  }
  /** `b` cut or NUL-padded to exactly `n` bytes. */
  fixed(b: Uint8Array, n: number): this {
    for (let i = 0; i < n; i++) this.#parts.push(i < b.length ? b[i] : 0);
    return this;
  }
  /** A string in a fixed field of `n` bytes, always NUL-terminated (so at most n - 1 bytes
   *  of text, cut at a character boundary), as the firmware's StrHelper::strzcpy writes it. */
  cstring(s: string, n: number): this {
    return this.fixed(cutUtf8(utf8(s), n - 1), n);
  }
  done(): Uint8Array {
    return Uint8Array.from(this.#parts);
  }
}

/** The longest prefix of `b` of at most `max` bytes that ends on a UTF-8 character boundary. */
export function cutUtf8(b: Uint8Array, max: number): Uint8Array {
  if (b.length <= max) return b;
  let end = max;
  while (end > 0 && (b[end] & 0xc0) === 0x80) end--;
  return b.subarray(0, end);
}

export const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
