// A structural msgpack reader: where each object starts and ends, without building values.
// LXMF needs the exact bytes of parts of its payload (the message hash covers the payload as
// the sender packed it, minus any stamp), which a value-level decoder cannot give back.
// Values themselves are decoded with @msgpack/msgpack. Never throws: -1 or null means
// malformed or cut short. Format: the msgpack specification, "Formats".

/** Nesting deeper than this is refused (a cheap guard; LXMF payloads nest a few levels). */
const MAX_DEPTH = 64;

/** Offset just past the object that starts at `at`, or -1. */
export function skipObject(b: Uint8Array, at: number, depth = 0): number {
  if (at >= b.length || depth > MAX_DEPTH) return -1;
  const t = b[at];
  if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) return at + 1;
  if (t >= 0x80 && t <= 0x8f) return skipMany(b, at + 1, 2 * (t & 0x0f), depth);
  if (t >= 0x90 && t <= 0x9f) return skipMany(b, at + 1, t & 0x0f, depth);
  if (t >= 0xa0 && t <= 0xbf) return within(b, at + 1 + (t & 0x1f));
  switch (t) {
    case 0xc4: case 0xd9: return sized(b, at, 1, 0); // bin 8, str 8
    case 0xc5: case 0xda: return sized(b, at, 2, 0); // bin 16, str 16
    case 0xc6: case 0xdb: return sized(b, at, 4, 0); // bin 32, str 32
    case 0xc7: return sized(b, at, 1, 1); // ext 8: length, type, data
    case 0xc8: return sized(b, at, 2, 1);
    case 0xc9: return sized(b, at, 4, 1);
    case 0xca: return within(b, at + 5); // float 32
    case 0xcb: return within(b, at + 9); // float 64
    case 0xcc: case 0xd0: return within(b, at + 2);
    case 0xcd: case 0xd1: return within(b, at + 3);
    case 0xce: case 0xd2: return within(b, at + 5);
    case 0xcf: case 0xd3: return within(b, at + 9);
    case 0xd4: return within(b, at + 3); // fixext 1: type + 1
    case 0xd5: return within(b, at + 4);
    case 0xd6: return within(b, at + 6);
    case 0xd7: return within(b, at + 10);
    case 0xd8: return within(b, at + 18);
    case 0xdc: case 0xde: {
      const n = readUint(b, at + 1, 2);
      return n < 0 ? -1 : skipMany(b, at + 3, t === 0xde ? 2 * n : n, depth);
    }
    case 0xdd: case 0xdf: {
      const n = readUint(b, at + 1, 4);
      return n < 0 ? -1 : skipMany(b, at + 5, t === 0xdf ? 2 * n : n, depth);
    }
    default: return -1; // 0xc1 is never used
  }
}

/** An array header at `at`: its element count and where the first element starts. */
export function readArrayHeader(b: Uint8Array, at: number): { count: number; next: number } | null {
  return readHeader(b, at, 0x90, 0xdc);
}

/** A map header at `at`: its pair count and where the first key starts. */
export function readMapHeader(b: Uint8Array, at: number): { count: number; next: number } | null {
  return readHeader(b, at, 0x80, 0xde);
}

/** The header bytes msgpack uses for an array of `count` elements (smallest form). */
export function arrayHeader(count: number): Uint8Array {
  return containerHeader(count, 0x90, 0xdc);
}

export function mapHeader(count: number): Uint8Array {
  return containerHeader(count, 0x80, 0xde);
}

function readHeader(b: Uint8Array, at: number, fix: number, wide16: number): { count: number; next: number } | null {
  if (at >= b.length) return null;
  const t = b[at];
  if (t >= fix && t <= fix + 0x0f) return { count: t & 0x0f, next: at + 1 };
  const width = t === wide16 ? 2 : t === wide16 + 1 ? 4 : 0;
  if (!width) return null;
  const count = readUint(b, at + 1, width);
  return count < 0 ? null : { count, next: at + 1 + width };
}

function containerHeader(count: number, fix: number, wide16: number): Uint8Array {
  if (count < 16) return Uint8Array.of(fix + count);
  if (count < 0x10000) return Uint8Array.of(wide16, count >> 8, count & 0xff);
  return Uint8Array.of(wide16 + 1, (count >>> 24) & 0xff, (count >> 16) & 0xff, (count >> 8) & 0xff, count & 0xff);
}

function skipMany(b: Uint8Array, at: number, count: number, depth: number): number {
  for (let i = 0; i < count; i++) {
    at = skipObject(b, at, depth + 1);
    if (at < 0) return -1;
  }
  return at;
}

/** A length-prefixed object: `width` bytes of length, `extra` bytes (an ext type), the data. */
function sized(b: Uint8Array, at: number, width: number, extra: number): number {
  const n = readUint(b, at + 1, width);
  return n < 0 ? -1 : within(b, at + 1 + width + extra + n);
}

function readUint(b: Uint8Array, at: number, width: number): number {
  if (at + width > b.length) return -1;
  let n = 0;
  for (let i = 0; i < width; i++) n = n * 256 + b[at + i];
  return n;
}

function within(b: Uint8Array, end: number): number {
  return end <= b.length ? end : -1;
}
