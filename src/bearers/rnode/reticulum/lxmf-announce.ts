import { decode, encode } from '@msgpack/msgpack';
import { LXMF_SF_COMPRESSION } from './constants.ts';
import { type Failure, fail } from './errors.ts';
import { skipObject } from './msgpack.ts';

// The app data of an lxmf.delivery announce (docs/protocols/reticulum.md 4.3; LXMF/LXMRouter.py
// get_announce_app_data, LXMF/LXMF.py display_name_from_app_data and friends). Current LXMF
// sends msgpack [display name as bytes or nil, stamp cost or nil, supported functions]; old
// versions sent the display name alone as UTF-8. LXMF tells the two apart by the first byte:
// a msgpack fixarray (0x90-0x9f) or array 16 (0xdc) is the new form.

export interface LxmfPeerInfo {
  /** UTF-8 name with NULs removed and whitespace trimmed, as LXMF shows it; null if absent or
   *  not valid UTF-8. */
  displayName: string | null;
  /** The proof-of-work cost the peer asks of messages to it; null for none. */
  stampCost: number | null;
  /** Whether the peer takes compressed resources: LXMF assumes so when the list is missing. */
  supportsCompression: boolean;
  /** True for the old bare-name form. */
  legacy: boolean;
}

export type LxmfPeerInfoResult = ({ ok: true } & LxmfPeerInfo) | Failure;

/** Our announce app data. We list no supported functions: we take no resources, so we do not
 *  claim compression (an absent list would be read as "supports compression"). LXMF only
 *  announces a stamp cost between 1 and 254. */
export function encodeLxmfAppData(displayName: string | null, stampCost: number | null = null): Uint8Array {
  const name = displayName == null ? null : new TextEncoder().encode(displayName);
  const cost = stampCost != null && Number.isInteger(stampCost) && stampCost > 0 && stampCost < 255 ? stampCost : null;
  return encode([name, cost, []]);
}

/** Reads either form; null or empty app data is a peer without a name. */
export function decodeLxmfAppData(appData: Uint8Array | null): LxmfPeerInfoResult {
  if (!appData || appData.length === 0) return { ok: true, displayName: null, stampCost: null, supportsCompression: true, legacy: false };
  const first = appData[0];
  if (!((first >= 0x90 && first <= 0x9f) || first === 0xdc)) {
    return { ok: true, displayName: utf8(appData), stampCost: null, supportsCompression: true, legacy: true };
  }
  if (skipObject(appData, 0) !== appData.length) return fail('ERR_LXMF_APP_DATA', 'the announce app data is not one whole msgpack array');
  let list: unknown;
  try {
    list = decode(appData, { mapKeyConverter: (k) => (typeof k === 'number' ? k : String(k)) });
  } catch {
    return fail('ERR_LXMF_APP_DATA', 'the announce app data array does not decode');
  }
  const items = list as unknown[];
  const name = items[0];
  const cost = items[1];
  const functions = items[2];
  return {
    ok: true,
    displayName: name instanceof Uint8Array ? utf8(name) : typeof name === 'string' ? clean(name) : null,
    stampCost: typeof cost === 'number' && Number.isInteger(cost) ? cost : null,
    supportsCompression: Array.isArray(functions) ? functions.includes(LXMF_SF_COMPRESSION) : true,
    legacy: false,
  };
}

function utf8(b: Uint8Array): string | null {
  try {
    return clean(new TextDecoder('utf-8', { fatal: true }).decode(b));
  } catch {
    return null;
  }
}

function clean(s: string): string {
  return s.replaceAll('\u0000', '').trim();
}
