import { randomFillSync } from 'node:crypto';

// Prefixed, time-sortable ids (docs/design.md section 5): "<prefix>_" + 10 Crockford base32
// characters of milliseconds since the epoch + 16 of randomness (ULID layout). Sorting ids as
// strings sorts them by creation time, which keyset pagination relies on.

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export type IdPrefix = 'ifc' | 'rul' | 'msg' | 'dlv' | 'fbl' | 'ctc' | 'grp' | 'key' | 'req' | 'evt' | 'brg' | 'ten';

let lastMs = -1;
let lastRandom: number[] = [];

// Randomness drawn 4 KiB at a time: one call into OpenSSL per 256 ids instead of one per id
// (a message and its deliveries take several ids, CPU per message).
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

function random16(): number[] {
  if (poolAt + 16 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const out = new Array<number>(16);
  for (let i = 0; i < 16; i++) out[i] = pool[poolAt + i] & 31;
  poolAt += 16;
  return out;
}

/** A new id at `nowMs`, the injected clock's time (never Date.now(): a test's fake clock and the
 *  real one must not mix, and ids never go back in time within a process). */
export function newId(prefix: IdPrefix, nowMs: number): string {
  let random: number[];
  if (nowMs <= lastMs) {
    // Same (or earlier) millisecond: increment the previous randomness so ids stay strictly
    // increasing within one process.
    nowMs = lastMs;
    random = increment(lastRandom);
  } else {
    random = random16();
  }
  lastMs = nowMs;
  lastRandom = random;
  let tail = '';
  for (const d of random) tail += CROCKFORD[d];
  return `${prefix}_${encodeTime(nowMs)}${tail}`;
}

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function increment(digits: number[]): number[] {
  const next = digits.slice();
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] < 31) {
      next[i]++;
      return next;
    }
    next[i] = 0;
  }
  return next;
}

export function isoNow(nowMs: number): string {
  return new Date(nowMs).toISOString();
}

/** The millisecond an id was minted at (its first 10 characters after the prefix). */
export function idTime(id: string): number {
  const at = id.indexOf('_') + 1;
  let ms = 0;
  for (let i = at; i < at + 10; i++) ms = ms * 32 + CROCKFORD.indexOf(id[i]);
  return ms;
}

/** The smallest possible id of `prefix` minted at `ms` or later: `id >= idFloor(...)` in SQL
 *  selects the rows made since. */
export function idFloor(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${encodeTime(Math.max(0, Math.floor(ms)))}`;
}
