import { decode, encode } from '@msgpack/msgpack';
import { concat, equalBytes } from '../../shared/codec/bytes.ts';
import { HASH_LENGTH, LXMF_DESTINATION_LENGTH, LXMF_PROPAGATION_NAME } from './constants.ts';
import { decryptFor, encryptFor } from './crypto.ts';
import { nameHash } from './destination.ts';
import { type Failure, fail } from './errors.ts';
import { fullHash, type Identity, type PublicIdentity } from './identity.ts';
import { type LxmfResult, unpackOpportunistic } from './lxmf.ts';
import { skipObject } from './msgpack.ts';
import { STAMP_SIZE } from './stamp.ts';

// LXMF propagation nodes, the parts a client needs (docs/protocols/reticulum.md 13;
// LXMF/LXMRouter.py get_propagation_node_app_data, message_get_request, propagation_packet;
// LXMF/LXMessage.py pack for PROPAGATED; LXMF/LXMF.py pn_announce_data_is_valid). A message for
// the node is the packed message with its first 16 bytes (the recipient) kept in the clear and
// the rest encrypted to the recipient, then the propagation stamp; the node takes
// msgpack [time, [that]]. Pure apart from the encryption's randomness; decoders never throw.

/** Name hash of "lxmf.propagation": the name a propagation node announces. */
export const LXMF_PROPAGATION_NAME_HASH: Uint8Array = nameHash(LXMF_PROPAGATION_NAME);
/** The request path for listing, fetching and purging a client's messages (LXMPeer.MESSAGE_GET_PATH). */
export const MESSAGE_GET_PATH = '/get';
/** Errors a node answers instead of a list (LXMPeer.ERROR_*). */
export const PN_ERROR: Record<number, string> = {
  0xf0: 'the node needs our identity first (no identification on the link)',
  0xf1: 'the node does not allow us (it requires authentication)',
  0xf3: 'invalid peering key',
  0xf4: 'invalid data',
  0xf5: 'invalid stamp',
  0xf6: 'throttled',
  0xfd: 'not found',
  0xfe: 'timeout',
};

export interface PropagationNodeInfo {
  /** The node's clock when it announced (Unix seconds). */
  timebase: number;
  /** false when the node announces that it stopped propagating. */
  enabled: boolean;
  /** Largest transfer it takes from a client, in kilobytes (1000 bytes). */
  transferLimitKb: number;
  syncLimitKb: number;
  /** The stamp cost it asks, the flexibility below it that it still accepts, and its peering cost. */
  stampCost: number;
  stampFlexibility: number;
  peeringCost: number;
  /** The node's name from its metadata (key 1), when given. */
  name: string | null;
}

export type PropagationNodeInfoResult = ({ ok: true } & PropagationNodeInfo) | Failure;

/** A propagation node's announce app data: msgpack [legacy flag, timebase, enabled, transfer
 *  limit (kB), sync limit (kB), [stamp cost, flexibility, peering cost], metadata map]; shorter
 *  arrays are older LXMF versions, which are refused (pn_announce_data_is_valid). */
export function decodePropagationAppData(appData: Uint8Array | null): PropagationNodeInfoResult {
  if (!appData || skipObject(appData, 0) !== appData.length) return fail('ERR_LXMF_APP_DATA', 'propagation node app data is one msgpack array');
  let v: unknown;
  try {
    v = decode(appData, { useBigInt64: false, mapKeyConverter: (k) => (typeof k === 'string' || typeof k === 'number' ? k : String(k)) });
  } catch {
    return fail('ERR_LXMF_APP_DATA', 'propagation node app data does not decode');
  }
  if (!Array.isArray(v) || v.length < 7) return fail('ERR_LXMF_APP_DATA', 'propagation node app data has 7 elements (older LXMF nodes send fewer)');
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? Math.trunc(x) : null);
  const [, timebase, enabled, transfer, sync, costs, metadata] = v as unknown[];
  const cost = Array.isArray(costs) ? costs.map(num) : [];
  if (num(timebase) === null || typeof enabled !== 'boolean' || num(transfer) === null || num(sync) === null) {
    return fail('ERR_LXMF_APP_DATA', 'timebase, enabled flag and limits must be numbers and a boolean');
  }
  if (cost.length < 3 || cost.slice(0, 3).some((c) => c === null || c < 0 || c > 255)) return fail('ERR_LXMF_APP_DATA', 'stamp costs are [cost, flexibility, peering cost], each 0 to 255');
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata) || metadata instanceof Uint8Array) return fail('ERR_LXMF_APP_DATA', 'the metadata is a map');
  const rawName = (metadata as Record<string, unknown>)['1'];
  let name: string | null = null;
  if (rawName instanceof Uint8Array) {
    try {
      name = new TextDecoder('utf-8', { fatal: true }).decode(rawName).replaceAll('\u0000', '').trim() || null;
    } catch {
      name = null;
    }
  }
  return { ok: true, timebase: num(timebase)!, enabled, transferLimitKb: num(transfer)!, syncLimitKb: num(sync)!, stampCost: cost[0]!, stampFlexibility: cost[1]!, peeringCost: cost[2]!, name };
}

export interface PropagatedMessage {
  /** Recipient hash (16) + the rest of the packed message encrypted to the recipient. */
  lxmfData: Uint8Array;
  /** SHA-256 of lxmfData: the id the node stores it under, and what its stamp is made for. */
  transientId: Uint8Array;
}

/** The propagated form of a packed message (LXMessage.pack, PROPAGATED): the recipient hash in
 *  the clear, the rest encrypted to the recipient (to its ratchet when it announced one). */
export function propagatedForm(packed: Uint8Array, recipient: PublicIdentity, options: { ratchet?: Uint8Array | null } = {}): PropagatedMessage {
  const lxmfData = concat(packed.subarray(0, LXMF_DESTINATION_LENGTH), encryptFor(recipient, packed.subarray(LXMF_DESTINATION_LENGTH), { ratchet: options.ratchet ?? null }));
  return { lxmfData, transientId: fullHash(lxmfData) };
}

/** What goes to the node: msgpack [time (float64), [lxmf data + stamp]] (LXMessage.propagation_packed). */
export function propagationContainer(message: PropagatedMessage, stamp: Uint8Array, timeS: number): Uint8Array {
  return encode([timeS, [concat(message.lxmfData, stamp)]], { forceIntegerToFloat: true });
}

/** A list of transient ids (the node's answer to a list request): an array of 32-byte ids.
 *  A number instead is one of the node's errors (PN_ERROR). */
export function readTransientIds(response: unknown): { ok: true; ids: Uint8Array[] } | Failure {
  if (typeof response === 'number') return fail('ERR_LXMF_PROPAGATION', PN_ERROR[response] ?? `error ${response}`);
  if (!Array.isArray(response)) return fail('ERR_LXMF_PROPAGATION', 'the message list is not an array');
  const ids: Uint8Array[] = [];
  for (const id of response) {
    if (!(id instanceof Uint8Array) || id.length !== HASH_LENGTH) return fail('ERR_LXMF_PROPAGATION', `a transient id is ${HASH_LENGTH} bytes`);
    ids.push(id.slice());
  }
  return { ok: true, ids };
}

/** The messages of a fetch answer: an array of lxmf data (the node strips the stamps). */
export function readFetchedMessages(response: unknown): { ok: true; messages: Uint8Array[] } | Failure {
  if (typeof response === 'number') return fail('ERR_LXMF_PROPAGATION', PN_ERROR[response] ?? `error ${response}`);
  if (!Array.isArray(response)) return fail('ERR_LXMF_PROPAGATION', 'the fetched messages are not an array');
  const messages = response.filter((m): m is Uint8Array => m instanceof Uint8Array).map((m) => m.slice());
  return messages.length === response.length ? { ok: true, messages } : fail('ERR_LXMF_PROPAGATION', 'a fetched message is not bytes');
}

/** The packed data of a list / fetch / purge request: [wants or nil, haves or nil] and, when
 *  fetching, the most we take in kilobytes (message_get_request). */
export function encodeGetRequestData(wants: Uint8Array[] | null, haves: Uint8Array[] | null, limitKb: number | null = null): Uint8Array {
  return encode(limitKb === null ? [wants, haves] : [wants, haves, limitKb]);
}

/** Opens one fetched message for us (LXMRouter.lxmf_propagation): the first 16 bytes must be our
 *  address, the rest decrypts with our identity to the packed message's remainder. */
export function openPropagated(identity: Identity, address: Uint8Array, lxmfData: Uint8Array): LxmfResult {
  if (lxmfData.length <= LXMF_DESTINATION_LENGTH) return fail('ERR_LXMF_TRUNCATED', 'a propagated message is longer than its recipient hash');
  if (!equalBytes(lxmfData.subarray(0, LXMF_DESTINATION_LENGTH), address)) return fail('ERR_LXMF_DESTINATION', 'a propagated message for another destination');
  const opened = decryptFor(identity, lxmfData.subarray(LXMF_DESTINATION_LENGTH));
  if (!opened) return fail('ERR_LXMF_DECRYPT', 'the propagated message does not decrypt with our keys');
  return unpackOpportunistic(address, opened.plaintext);
}

/** Bytes a message adds beyond its lxmf data on the way to a node: the stamp. */
export const PROPAGATION_STAMP_SIZE = STAMP_SIZE;
