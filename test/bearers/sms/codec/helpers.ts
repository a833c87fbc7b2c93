// Shared by the SMS codec tests: hex with spaces and comments, and a seeded generator.

/** "07 91 ... // comment" lines joined into one hex string; `//` comments and spaces dropped. */
export function pdu(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/\/\/.*$/, ''))
    .join('')
    .replace(/\s+/g, '')
    .toUpperCase();
}

export const toHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0').toUpperCase()).join('');
export const fromHex = (s: string) => Uint8Array.from(pdu(s).match(/../g) ?? [], (x) => parseInt(x, 16));

/** mulberry32: a small seeded generator so a failing run can be repeated exactly. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
