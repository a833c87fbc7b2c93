// Meshtastic node numbers and their text forms (docs/protocols/meshtastic.md 2.5). A node
// number is a u32; its text form is "!" and 8 lower-case hex digits.

/** mesh.proto: MeshPacket.to for "everyone on the channel" (`^all`). */
export const BROADCAST = 0xffffffff;

const isU32 = (n: number) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff;

/** "!a1b2c3d4". Throws RangeError for a value that is not a u32 (a caller's bug). */
export function formatNodeId(num: number): string {
  if (!isU32(num)) throw new RangeError(`a Meshtastic node number is an integer 0..0xffffffff, got ${num}`);
  return `!${num.toString(16).padStart(8, '0')}`;
}

export function isBroadcast(num: number): boolean {
  return num === BROADCAST;
}

const HEX = /^[0-9a-f]{1,8}$/i;
const DECIMAL = /^[0-9]{1,10}$/;

/** The node number a user or an API client wrote, or null when it is none:
 *  - "!a1b2c3d4" or "0xa1b2c3d4" (1 to 8 hex digits, any case; more are refused rather
 *    than cut, unlike the Python client, which keeps the last 8),
 *  - a decimal u32 ("2712847316"),
 *  - "^all" or "broadcast" for BROADCAST,
 *  - "^local" for the attached node, when its number is given as `local`.
 *  Surrounding white space is ignored. */
export function parseNodeAddress(text: string, local?: number): number | null {
  const s = text.trim();
  const lower = s.toLowerCase();
  if (lower === '^all' || lower === 'broadcast') return BROADCAST;
  if (lower === '^local') return local !== undefined && isU32(local) ? local : null;
  let digits: string | null = null;
  if (s.startsWith('!')) digits = s.slice(1);
  else if (lower.startsWith('0x')) digits = s.slice(2);
  if (digits !== null) return HEX.test(digits) ? parseInt(digits, 16) : null;
  if (!DECIMAL.test(s)) return null;
  const n = Number(s);
  return isU32(n) ? n : null;
}
