import { createHash, type Hash, hkdfSync, randomBytes } from 'node:crypto';
import { encode } from '@msgpack/msgpack';
import { concat } from '../../shared/codec/bytes.ts';
import { HASH_LENGTH } from './constants.ts';
import { fullHash, truncatedHash } from './identity.ts';

// LXMF stamps (docs/protocols/reticulum.md 7.5; LXMF/LXStamper.py, LXMessage.get_stamp and
// validate_stamp): proof of work a recipient may ask of messages to it, by announcing a stamp
// cost. A stamp is 32 bytes such that SHA-256(workblock + stamp) has at least `cost` leading
// zero bits, where the workblock is 768,000 bytes derived from the message id. Pure and
// synchronous: generateStamp runs about 2^cost hash attempts, so callers keep costs small or
// call it off the main path.

export const STAMP_SIZE = HASH_LENGTH;
/** HKDF rounds of 256 bytes each making a message stamp's workblock (WORKBLOCK_EXPAND_ROUNDS). */
export const WORKBLOCK_EXPAND_ROUNDS = 3000;
/** Rounds of a propagation stamp's workblock, made from the transient id (WORKBLOCK_EXPAND_ROUNDS_PN). */
export const WORKBLOCK_EXPAND_ROUNDS_PN = 1000;

/** The workblock: for n = 0 .. rounds-1, HKDF-SHA256 of the message id with salt
 *  SHA-256(message id + msgpack(n)), no info, 256 bytes; concatenated (stamp_workblock). */
export function stampWorkblock(messageId: Uint8Array, rounds: number = WORKBLOCK_EXPAND_ROUNDS): Uint8Array {
  const out = new Uint8Array(rounds * 256);
  for (let n = 0; n < rounds; n++) {
    const salt = fullHash(concat(messageId, encode(n)));
    out.set(new Uint8Array(hkdfSync('sha256', messageId, salt, new Uint8Array(0), 256)), n * 256);
  }
  return out;
}

/** Leading zero bits of SHA-256(workblock + stamp) (stamp_value). */
export function stampValue(workblock: Uint8Array, stamp: Uint8Array): number {
  return leadingZeros(createHash('sha256').update(workblock).update(stamp).digest());
}

/** Whether the stamp meets the cost: the hash, read as a big-endian number, is at most
 *  2^(256 - cost) (stamp_valid). */
export function stampValid(stamp: Uint8Array, cost: number, workblock: Uint8Array): boolean {
  return meets(createHash('sha256').update(workblock).update(stamp).digest(), cost);
}

/** A stamp for the message id at the cost, or null after maxAttempts (default 2^(cost+4),
 *  sixteen times the expected number). The hash state after the workblock is computed once
 *  and copied per attempt, so an attempt costs one short hash, not 768 kB of hashing. */
export function generateStamp(
  messageId: Uint8Array,
  cost: number,
  options: { maxAttempts?: number; random?: () => Uint8Array; workblock?: Uint8Array } = {},
): Uint8Array | null {
  if (!Number.isInteger(cost) || cost < 0 || cost > 255) throw new RangeError(`a stamp cost is 0 to 255, got ${cost}`);
  const base: Hash = createHash('sha256').update(options.workblock ?? stampWorkblock(messageId));
  const random = options.random ?? (() => randomBytes(STAMP_SIZE));
  const attempts = options.maxAttempts ?? 2 ** Math.min(cost + 4, 40);
  for (let i = 0; i < attempts; i++) {
    const stamp = random();
    if (meets(base.copy().update(stamp).digest(), cost)) return stamp;
  }
  return null;
}

/** generateStamp in slices of `sliceAttempts`, yielding to the event loop between slices, so
 *  minutes of work on a slow CPU do not stall the radio or the API. Candidates are 24 random
 *  bytes and an 8-byte counter (any 32 bytes may be a stamp). Resolves null after maxAttempts
 *  (default 2^(cost+4)) or when `cancelled()` answers true. */
export async function generateStampAsync(
  material: Uint8Array,
  cost: number,
  options: { rounds?: number; maxAttempts?: number; sliceAttempts?: number; cancelled?: () => boolean } = {},
): Promise<{ stamp: Uint8Array; attempts: number } | null> {
  if (!Number.isInteger(cost) || cost < 0 || cost > 255) throw new RangeError(`a stamp cost is 0 to 255, got ${cost}`);
  const base: Hash = createHash('sha256').update(stampWorkblock(material, options.rounds ?? WORKBLOCK_EXPAND_ROUNDS));
  const attempts = options.maxAttempts ?? 2 ** Math.min(cost + 4, 40);
  const slice = options.sliceAttempts ?? 4096;
  const candidate = new Uint8Array(STAMP_SIZE);
  candidate.set(randomBytes(STAMP_SIZE - 8));
  const counter = new DataView(candidate.buffer, STAMP_SIZE - 8, 8);
  for (let done = 0; done < attempts;) {
    const end = Math.min(attempts, done + slice);
    for (; done < end; done++) {
      counter.setUint32(0, Math.floor(done / 0x1_0000_0000));
      counter.setUint32(4, done >>> 0);
      if (meets(base.copy().update(candidate).digest(), cost)) return { stamp: candidate.slice(), attempts: done + 1 };
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (options.cancelled?.()) return null;
  }
  return null;
}

/** The stamp a ticket stands in for: truncated hash of ticket + message id (LXMessage.get_stamp). */
export function ticketStamp(ticket: Uint8Array, messageId: Uint8Array): Uint8Array {
  return truncatedHash(concat(ticket, messageId));
}

function leadingZeros(h: Uint8Array): number {
  let bits = 0;
  for (const byte of h) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}

function meets(h: Uint8Array, cost: number): boolean {
  if (cost <= 0) return true;
  // At least `cost` leading zeros, or exactly 2^(256 - cost): a one bit at `cost - 1`, zeros after.
  const zeros = leadingZeros(h);
  if (zeros >= cost) return true;
  if (zeros !== cost - 1) return false;
  for (let bit = cost; bit < 256; bit++) if (h[bit >> 3] & (0x80 >> (bit & 7))) return false;
  return true;
}
