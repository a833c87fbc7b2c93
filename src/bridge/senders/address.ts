import { normalizeNumber } from '../../bearers/shared/codec/phone.ts';
import { nodeKey } from '../engine/node-key.ts';

// One spelling per sender: `!beef`, `0xBEEF`, `!0000beef` are one Meshtastic
// node (`!%08x`, as heard frames name it, engine/node-key.ts); `+49 151 …`, `0049151…` and
// `+49151…` are one phone number (E.164, bearers/shared/codec/phone.ts). Everything else is
// compared trimmed and in lower case. A bare decimal (`48879`) is either a node number or an
// SMS short code: it is kept as written and, as a blocklist or allowlist entry, matches both.

const HEX_NODE = /^(?:!|0x)[0-9a-f]{1,8}$/i;
const DECIMAL = /^[0-9]{1,10}$/;
const PHONE = /^(?:\+|00)[0-9\s\-./()]+$/;

/** The canonical form of an address: the key of `senders` rows and token buckets. */
export function senderKey(address: string): string {
  const a = address.trim();
  if (HEX_NODE.test(a)) return nodeKey(a);
  if (PHONE.test(a)) {
    const n = normalizeNumber(a);
    if (n.ok) return n.number;
  }
  return a.toLowerCase();
}

/** Every canonical address a written address (a policy entry, a path parameter) may stand for. */
export function senderKeys(address: string): string[] {
  const a = address.trim();
  if (DECIMAL.test(a) && Number(a) <= 0xffffffff) return [a, nodeKey(a)];
  return [senderKey(a)];
}
