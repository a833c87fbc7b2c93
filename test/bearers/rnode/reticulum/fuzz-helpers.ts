import * as assert from 'uvu/assert';
import { rng } from '../../../helpers/rng.ts';

// Helpers for fuzz-packet.test.ts and fuzz-lxmf.test.ts: seeded fuzz of every Reticulum and
// LXMF decoder (docs/style.md habit 2). 10^6 random or mutated inputs each, none may throw, and every refusal carries a code and a reason. The
// decoders are pure functions, so "usable afterwards" means the fixtures still decode the
// same at the end. Signature checks and key agreements cost about 0.1-0.3 ms each on a small
// machine; the mutation mix keeps the inputs that get that far to a few percent, which is
// where the structure checks in front of them are tested hardest anyway.

// FUZZ_TIMING=1 prints each run's time and outcome counts.

export { rng };

export const N = 1_000_000;

/** Random bytes (length below maxLength) or, with probability `mutated`, a seed with 1-3
 *  byte changes, insertions, deletions or a truncation. Random inputs are cut from a pool
 *  the seeded generator filled once (drawing each byte anew costs more than decoding it);
 *  when `header` is set, most random inputs get a clear IFAC bit and hops below 128, so they
 *  reach the checks behind the packet header. */
export function inputs(seed: number, seeds: Uint8Array[], mutated: number, maxLength: number, header = false): () => Uint8Array {
  const random = rng(seed);
  const byte = () => Math.floor(random() * 256);
  const pool = Uint8Array.from({ length: 1 << 20 }, byte);
  return () => {
    if (random() >= mutated) {
      const at = Math.floor(random() * (pool.length - maxLength));
      const out = pool.slice(at, at + Math.floor(random() * maxLength));
      if (header && out.length > 1 && random() < 0.8) {
        out[0] &= 0x7f;
        out[1] &= 0x7f;
      }
      return out;
    }
    const base = Array.from(seeds[Math.floor(random() * seeds.length)]);
    for (let m = 1 + Math.floor(random() * 3); m > 0; m--) {
      const at = Math.floor(random() * base.length);
      const op = random();
      if (op < 0.55) base[at] = byte();
      else if (op < 0.7) base.splice(at, 0, byte());
      else if (op < 0.85) base.splice(at, 1);
      else base.length = at;
    }
    return Uint8Array.from(base);
  };
}

export type Outcome = { ok: boolean; code?: string; reason?: string };

export function run(name: string, next: () => Uint8Array, decode: (b: Uint8Array) => Outcome | null): Record<string, number> {
  const counts: Record<string, number> = {};
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const input = next();
    let r: Outcome | null;
    try {
      r = decode(input);
    } catch (e) {
      throw new Error(`${name} threw on input ${i} (${Buffer.from(input).toString('hex')}): ${(e as Error).message}`);
    }
    const key = r === null ? 'null' : r.ok ? 'ok' : r.code!;
    if (r && !r.ok) assert.ok(r.code && r.reason, `${name}: a refusal without code or reason`);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  if (process.env.FUZZ_TIMING) console.log(name, Math.round(performance.now() - t0), 'ms', JSON.stringify(counts));
  return counts;
}

