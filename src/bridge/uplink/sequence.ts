import type { Range } from '../../hubwire/topics.ts';

// The bridge's arithmetic of sequence numbers (docs/hub.md, "Acknowledgements"):
// wire seq = local seq (the outbox's key) + offset. Pure functions, no I/O.

/** The local seqs an ack says are stored: everything up to upto, and (upto, high] outside
 *  the gaps, less the offset; numbers that map below 1 are not ours. */
export function storedLocal(ack: { upto: number; high: number; missing: Range[] }, offset: number): Range[] {
  const stored: Range[] = [];
  if (ack.upto - offset >= 1) stored.push([1, ack.upto - offset]);
  let next = ack.upto + 1;
  for (const [lo, hi] of [...ack.missing, [ack.high + 1, ack.high + 1] as Range]) {
    const end = Math.min(lo - 1, ack.high);
    if (end >= next && end - offset >= 1) stored.push([Math.max(next - offset, 1), end - offset]);
    next = Math.max(next, hi + 1);
  }
  return stored;
}

/** [lo, hi] without the given ranges (any order, may overlap). */
export function subtract([lo, hi]: Range, minus: Range[]): Range[] {
  const out: Range[] = [];
  let next = lo;
  for (const [a, b] of [...minus].sort((x, y) => x[0] - y[0])) {
    if (b < next) continue;
    if (a > hi) break;
    if (a > next) out.push([next, a - 1]);
    next = Math.max(next, b + 1);
    if (next > hi) break;
  }
  if (next <= hi) out.push([next, hi]);
  return out;
}

/** The ranges cut off above max (acks are applied only up to what was published). */
export function clampTo(ranges: Range[], max: number): Range[] {
  const out: Range[] = [];
  for (const [lo, hi] of ranges) if (lo <= max) out.push([lo, Math.min(hi, max)]);
  return out;
}
