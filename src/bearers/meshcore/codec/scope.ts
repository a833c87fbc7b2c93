import { createHash, createHmac } from 'node:crypto';
import { utf8 } from './bytes.ts';
import type { FloodScope } from './commands.ts';
import { SCOPE_NAME_FIELD_SIZE, TRANSPORT_KEY_SIZE } from './constants.ts';

// MeshCore flood scopes (regions; docs/protocols/meshcore.md 6.12): how a region's name
// becomes its transport key, how a packet's transport code is made from the key, and which
// names a region may have. Pure.

/** What a scope is written as, by an operator or in a delivery's address: a region name
 *  (`de-by` or `#de-by`), or `*` for none (unscoped). */
export type ScopeChoice = { type: 'region'; scope: FloodScope } | { type: 'unscoped' };

/** The key of a public ("hashtag") region: the first 16 bytes of SHA-256 over "#" and the
 *  name (TransportKeyStore::getAutoKeyFor, called with "#name" by RegionMap and MyMesh.cpp).
 *  A leading '#' in `name` is that '#', not part of the name. */
export function regionKey(name: string): Uint8Array {
  const bare = name.startsWith('#') ? name.slice(1) : name;
  return new Uint8Array(createHash('sha256').update(utf8(`#${bare}`)).digest().subarray(0, TRANSPORT_KEY_SIZE));
}

/** TransportKey::calcTransportCode: HMAC-SHA256 keyed with the 16-byte key over the payload
 *  type and the payload, its first two bytes read little-endian; 0000 and FFFF are reserved
 *  and become 0001 and FFFE. A repeater matches a scoped flood by recomputing this for each
 *  region it allows (RegionMap::findMatch). */
export function transportCode(key: Uint8Array, payloadType: number, payload: Uint8Array): number {
  const mac = createHmac('sha256', key).update(Uint8Array.of(payloadType & 0xff)).update(payload).digest();
  const code = mac[0] | (mac[1] << 8);
  if (code === 0) return 1;
  if (code === 0xffff) return 0xfffe;
  return code;
}

/** RegionMap::is_name_char: letters, digits, accented characters, '-', '$' and '#'. */
const isNameChar = (c: number) => c === 0x2d || c === 0x24 || c === 0x23 || (c >= 0x30 && c <= 0x39) || c >= 0x41;

/** Why `name` cannot be a region name, or null. The firmware keeps at most 30 bytes of it
 *  (the 31-byte field with its NUL); repeaters refuse names with other characters. */
export function regionNameProblem(name: string): string | null {
  const bare = name.startsWith('#') ? name.slice(1) : name;
  const bytes = utf8(bare);
  if (bytes.length === 0) return 'a region name must not be empty';
  if (bytes.length > SCOPE_NAME_FIELD_SIZE - 1) return `a region name has at most ${SCOPE_NAME_FIELD_SIZE - 1} bytes (got ${bytes.length})`;
  if (bare.startsWith('$')) return 'a private region ($name) has no key derived from its name: give its key as well';
  if (!bytes.every(isNameChar)) return 'a region name has letters, digits, \'-\', \'$\' and \'#\' only (as MeshCore repeaters take it)';
  return null;
}

/** `text` as a scope choice: `*` is unscoped, anything else a public region whose key comes
 *  from its name. The name is kept without its '#', as the firmware keeps its built-in
 *  default (MyMesh.cpp DEFAULT_FLOOD_SCOPE_NAME). */
export function parseScope(text: string): ScopeChoice | { type: 'invalid'; problem: string } {
  const t = text.trim();
  if (t === '*') return { type: 'unscoped' };
  const problem = regionNameProblem(t);
  if (problem) return { type: 'invalid', problem };
  const name = t.startsWith('#') ? t.slice(1) : t;
  return { type: 'region', scope: { name, key: regionKey(name) } };
}
