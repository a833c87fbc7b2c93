// Shared by the SMS codec tests: hex with spaces and comments, and a seeded generator.
import { rng } from '../../../helpers/rng.ts';

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

export { rng };
