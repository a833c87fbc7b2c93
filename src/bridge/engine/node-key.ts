// The one spelling of a mesh node's address that `until_heard` is matched by (docs/routing.md,
// "Until heard"): a Meshtastic node can be written `!0000beef`, `!beef`, `0xbeef`, `48879` or
// `!0000BEEF`, while heard frames always name it `!%08x`. Other addresses (an RNode or
// MeshCore name) are compared trimmed and in lower case.

const HEX = /^(?:!|0x)([0-9a-f]{1,8})$/i;
const DECIMAL = /^[0-9]{1,10}$/;

export function nodeKey(address: string): string {
  const a = address.trim();
  const hex = HEX.exec(a);
  if (hex) return `!${hex[1].toLowerCase().padStart(8, '0')}`;
  if (DECIMAL.test(a) && Number(a) <= 0xffffffff) return `!${Number(a).toString(16).padStart(8, '0')}`;
  return a.toLowerCase();
}
