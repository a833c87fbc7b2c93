// Hex text and an octet cursor for the SMS PDU codecs (docs/protocols/sms.md 4.8). Pure.
// Decoders are total (docs/protocols/sms.md 4.8): the cursor throws PduError, which only the
// decoders' entry points catch and turn into `{ ok: false, error }`; any other exception is a
// bug and is left to surface (the fuzz test would find it).

/** What every decoder answers. `error` names the field, the octet (0-based, counted from the
 *  first octet of the hex given) and what was found. */
export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

/** A decoding failure at a known octet; never escapes a decoder's entry point. Not an Error
 *  subclass on purpose: capturing a stack costs more than decoding, and the fuzz test throws
 *  it hundreds of thousands of times. */
export class PduError {
  readonly message: string;
  /** null when the fault is in the hex text itself, before any octet. */
  readonly octet: number | null;
  constructor(octet: number | null, message: string) {
    this.message = octet === null ? message : `${message} at octet ${octet}`;
    this.octet = octet;
  }
}

/** Runs a decoder, turning PduError into `{ ok: false }`. */
export function decodeWith<T>(run: () => T): Decoded<T> {
  try {
    return { ok: true, value: run() };
  } catch (e) {
    if (e instanceof PduError) return { ok: false, error: e.message };
    throw e;
  }
}

// Nibble value of each character code, -1 for anything that is not hex.
const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  NIBBLE['0123456789ABCDEF'.charCodeAt(i)] = i;
  NIBBLE['0123456789abcdef'.charCodeAt(i)] = i;
}

/** Hex text (as +CMGR/+CMGL/+CMT/+CDS give it) to octets. Whitespace around is trimmed;
 *  inside it is an error, like an odd number of digits or a character that is not hex. */
export function hexToOctets(text: string): Decoded<Uint8Array> {
  if (typeof text !== 'string') return { ok: false, error: `PDU must be a hex string, got ${typeof text}` };
  const hex = text.trim();
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < hex.length; i++) {
    const c = hex.charCodeAt(i);
    const v = c < 128 ? NIBBLE[c] : -1;
    if (v < 0) return { ok: false, error: `PDU is not hex: ${JSON.stringify(hex[i])} at character ${i}` };
    if (i % 2 === 0) out[i >> 1] = v << 4;
    else out[i >> 1] |= v;
  }
  if (hex.length % 2 !== 0) return { ok: false, error: `PDU has an odd number of hex digits (${hex.length})` };
  return { ok: true, value: out };
}

/** Octets as upper-case hex without separators (what AT+CMGS takes). */
export function octetsToHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s.toUpperCase();
}

/** Reads octets front to back; every read past the end throws PduError naming the field. */
export class OctetReader {
  readonly bytes: Uint8Array;
  pos = 0;
  /** Added to positions in error messages (the SMSC prefix's length when reading a TPDU). */
  readonly base: number;
  constructor(bytes: Uint8Array, base = 0) {
    this.bytes = bytes;
    this.base = base;
  }
  get remaining(): number {
    return this.bytes.length - this.pos;
  }
  /** The absolute octet number of the next read, for messages. */
  get at(): number {
    return this.base + this.pos;
  }
  fail(message: string, at = this.at): never {
    throw new PduError(at, message);
  }
  u8(field: string): number {
    if (this.pos >= this.bytes.length) this.fail(`PDU ends before ${field}`);
    return this.bytes[this.pos++];
  }
  take(n: number, field: string): Uint8Array {
    if (n > this.remaining) this.fail(`PDU ends inside ${field}: ${n} octets needed, ${this.remaining} left`);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  rest(): Uint8Array {
    const out = this.bytes.subarray(this.pos);
    this.pos = this.bytes.length;
    return out;
  }
}
