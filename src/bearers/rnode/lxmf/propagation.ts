import type { Clock, TimerHandle } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/log.ts';
import type { DriverState, SendResult } from '../../bearer.ts';
import { toHex } from '../../shared/codec/bytes.ts';
import type { Announce } from '../reticulum/announce.ts';
import type { Identity } from '../reticulum/identity.ts';
import { fullHash, publicIdentity, type PublicIdentity } from '../reticulum/identity.ts';
import { LINK_MDU } from '../reticulum/link.ts';
import {
  decodePropagationAppData, encodeGetRequestData, MESSAGE_GET_PATH, openPropagated, type PropagatedMessage, propagatedForm, propagationContainer,
  type PropagationNodeInfo, readFetchedMessages, readTransientIds,
} from '../reticulum/propagation.ts';
import { generateStampAsync, WORKBLOCK_EXPAND_ROUNDS_PN } from '../reticulum/stamp.ts';
import type { ResourceSender } from './direct.ts';
import { acceptMessage, type InboundContext } from './inbound.ts';
import type { LinkSession, LinkTable } from './links.ts';
import type { LxmfPeer } from './peers.ts';
import type { LinkRequests } from './requests.ts';

// The bridge as a client of one LXMF propagation node (docs/reticulum.md, "Propagation node";
// LXMF/LXMRouter.py request_messages_from_propagation_node, message_list_response,
// message_get_response; LXMessage PROPAGATED). Messages for peers that cannot be reached
// directly are left on the node with a propagation stamp at its cost; the bridge's own messages
// are listed, fetched, stored once and purged from the node at start and on a schedule.

export interface PropagationOptions {
  interfaceName: string;
  clock: Clock;
  log: Logger;
  state: DriverState;
  identity: Identity;
  address: Uint8Array;
  /** The node's lxmf.propagation destination hash (32 hex digits). */
  node: string;
  syncIntervalS: number;
  maxStampCost: number;
  links: LinkTable;
  requests: LinkRequests;
  resources: ResourceSender;
  inbound: InboundContext;
  proofTimeoutMs: number;
  /** Asks the network for the node's path (its owner answers with an announce). */
  requestPath(destination: Uint8Array): Promise<unknown>;
  waitForAnnounce(address: string, ms: number): Promise<void>;
}

interface KnownNode extends PropagationNodeInfo {
  identity: PublicIdentity;
  via: Uint8Array | null;
  hops: number;
}

const NODE_KEY = 'lxmf-pn-node';
const SEEN_KEY = 'lxmf-pn-seen';
/** Transient ids remembered as stored (so a message the node still lists is purged, not stored again). */
const SEEN_KEPT = 2000;
/** Transient ids asked for per fetch and purged per request: what fits one link packet. */
const IDS_PER_REQUEST = 10;
/** How long a sync waits for the node's answer to our path request. */
const PATH_WAIT_MS = 15_000;
const LIST_TIMEOUT_MS = 60_000;
/** A fetch answer may be a resource: the airtime budget and its retries. */
const FETCH_TIMEOUT_MS = 240_000;
/** Rounds of fetching per sync; more messages wait for the next sync. */
const MAX_FETCH_ROUNDS = 10;
/** A sync that failed is tried again this soon (not waiting a whole interval). */
const RETRY_SYNC_MS = 120_000;
/** Propagated forms kept, so a retry offers the node the same transient id (it keeps one). */
const FORMS_KEPT = 1000;

export class PropagationClient {
  readonly #o: PropagationOptions;
  #node: KnownNode | null;
  #seen: string[];
  readonly #seenSet: Set<string>;
  readonly #forms = new Map<string, { form: PropagatedMessage; stamp: Uint8Array; cost: number }>();
  #timer: TimerHandle | null = null;
  #syncing: Promise<void> | null = null;
  #stopped = false;
  readonly counters = { propagated_out: 0, propagation_syncs: 0, propagation_sync_failures: 0, propagated_in: 0, propagated_duplicates: 0, propagation_stamps: 0, propagation_stamp_ms: 0 };
  lastSyncAt: string | null = null;
  lastSyncError: string | null = null;

  constructor(options: PropagationOptions) {
    this.#o = options;
    this.#node = loadNode(options.state);
    this.#seen = loadSeen(options.state);
    this.#seenSet = new Set(this.#seen);
  }

  get node(): string {
    return this.#o.node;
  }

  /** A valid lxmf.propagation announce; kept when it is our node's. */
  heard(announce: Announce, hops: number): void {
    if (toHex(announce.destinationHash) !== this.#o.node) return;
    const info = decodePropagationAppData(announce.appData);
    if (!info.ok) {
      this.#o.log.warn('lxmf.propagation_announce_unreadable', { interface: this.#o.interfaceName, node: this.#o.node, reason: info.reason });
      return;
    }
    const { ok: _, ...facts } = info;
    this.#node = { ...facts, identity: announce.identity, via: announce.transportId, hops };
    this.#o.state.set(NODE_KEY, JSON.stringify({ ...facts, public_key: toHex(announce.identity.publicKey), via: announce.transportId ? toHex(announce.transportId) : null }));
  }

  // ---- schedule ---------------------------------------------------------------------------------

  /** The interface is up: sync now, then every syncIntervalS. */
  online(): void {
    this.#stopped = false;
    this.#schedule(0);
  }

  offline(): void {
    this.#stopped = true;
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = null;
  }

  #schedule(ms: number): void {
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = null;
      void this.sync().then((ok) => {
        if (!this.#stopped) this.#schedule(ok ? this.#o.syncIntervalS * 1000 : Math.min(RETRY_SYNC_MS, this.#o.syncIntervalS * 1000));
      });
    }, ms);
  }

  // ---- sending --------------------------------------------------------------------------------

  /** Leaves a packed message for `peer` on the node: a stamp at the node's cost, then one link
   *  packet or a resource. Ok once the node proved it (LXMF's "sent" for propagated messages). */
  async deliver(peer: LxmfPeer, packed: Uint8Array, messageHash: Uint8Array): Promise<SendResult> {
    const o = this.#o;
    if (this.#stopped) return { ok: false, retryable: true, error: 'ERR_LXMF_STOPPED: the interface stopped' };
    const node = await this.#known();
    if (!node) return { ok: false, retryable: true, error: `ERR_LXMF_PROPAGATION: the propagation node ${o.node} has not announced and did not answer a path request` };
    if (!node.enabled) return { ok: false, retryable: true, error: `ERR_LXMF_PROPAGATION: the propagation node ${o.node} announces that it does not propagate now` };
    if (node.stampCost > o.maxStampCost) {
      return { ok: false, retryable: false, error: `ERR_LXMF_PROPAGATION_COST: the propagation node asks for stamp cost ${node.stampCost}, above this interface's propagation_max_stamp_cost ${o.maxStampCost}` };
    }
    const key = toHex(messageHash);
    let entry = this.#forms.get(key);
    if (!entry || entry.cost !== node.stampCost) {
      const form = propagatedForm(packed, peer.identity, { ratchet: peer.ratchet });
      const began = performance.now();
      const stamp = await generateStampAsync(form.transientId, node.stampCost, { rounds: WORKBLOCK_EXPAND_ROUNDS_PN, cancelled: () => this.#stopped });
      const ms = Math.round(performance.now() - began);
      if (!stamp) return { ok: false, retryable: true, error: `ERR_LXMF_PROPAGATION: no stamp at cost ${node.stampCost} found (or the interface stopped)` };
      this.counters.propagation_stamps++;
      this.counters.propagation_stamp_ms += ms;
      o.log.info('lxmf.propagation_stamp', { interface: o.interfaceName, cost: node.stampCost, ms, attempts: stamp.attempts });
      entry = { form, stamp: stamp.stamp, cost: node.stampCost };
      this.#forms.set(key, entry);
      if (this.#forms.size > FORMS_KEPT) this.#forms.delete(this.#forms.keys().next().value!);
    }
    const container = propagationContainer(entry.form, entry.stamp, o.clock.now() / 1000);
    if (container.length > o.resources.maxBytes && container.length > LINK_MDU) {
      return { ok: false, retryable: false, error: `ERR_LXMF_TOO_LARGE: ${container.length} bytes for the node is more than one resource of ours carries (${o.resources.maxBytes})` };
    }
    if (container.length > node.transferLimitKb * 1000) {
      return { ok: false, retryable: false, error: `ERR_LXMF_TOO_LARGE: ${container.length} bytes is more than the node takes per transfer (${node.transferLimitKb} kB)` };
    }
    const link = await this.#link(node);
    if (typeof link === 'string') return { ok: false, retryable: true, error: `ERR_LXMF_PROPAGATION: no link to the propagation node: ${link}` };
    const r = container.length <= LINK_MDU ? await o.links.sendProven(link, container, o.proofTimeoutMs) : await o.resources.send(link, container);
    if (!r.ok) return { ok: false, retryable: true, error: `ERR_LXMF_PROPAGATION: the node did not take the message: ${r.error}` };
    this.counters.propagated_out++;
    return { ok: true, meta: { proof: 'node', method: 'propagated', propagation_node: o.node, stamp_cost: entry.cost, to_name: peer.displayName } };
  }

  // ---- syncing --------------------------------------------------------------------------------

  /** Lists our messages on the node, fetches the new ones, stores each once, and purges what we
   *  hold. One sync at a time; answers whether it completed. */
  sync(): Promise<boolean> {
    if (!this.#syncing) this.#syncing = this.#sync().finally(() => { this.#syncing = null; });
    return this.#syncing.then(() => this.lastSyncError === null);
  }

  async #sync(): Promise<void> {
    const o = this.#o;
    this.counters.propagation_syncs++;
    const failed = (why: string) => {
      this.counters.propagation_sync_failures++;
      this.lastSyncError = why;
      o.log.warn('lxmf.propagation_sync_failed', { interface: o.interfaceName, node: o.node, reason: why });
    };
    const node = await this.#known();
    if (!node) return failed('the node has not announced and did not answer a path request');
    const link = await this.#link(node);
    if (typeof link === 'string') return failed(`no link: ${link}`);
    await o.links.identify(link);
    let stored = 0;
    try {
      for (let round = 0; round < MAX_FETCH_ROUNDS; round++) {
        const listed = await o.requests.request(link, MESSAGE_GET_PATH, encodeGetRequestData(null, null), LIST_TIMEOUT_MS);
        if (!listed.ok) return failed(`listing: ${listed.error}`);
        const ids = readTransientIds(listed.response);
        if (!ids.ok) return failed(`listing: ${ids.reason}`);
        const haves = ids.ids.filter((id) => this.#seenSet.has(toHex(id)));
        const wants = ids.ids.filter((id) => !this.#seenSet.has(toHex(id))).slice(0, IDS_PER_REQUEST);
        if (wants.length > 0) {
          const limitKb = Math.floor(o.resources.maxBytes / 1000);
          const got = await o.requests.request(link, MESSAGE_GET_PATH, encodeGetRequestData(wants, null, limitKb), FETCH_TIMEOUT_MS);
          if (!got.ok) return failed(`fetching: ${got.error}`);
          const messages = readFetchedMessages(got.response);
          if (!messages.ok) return failed(`fetching: ${messages.reason}`);
          for (const data of messages.messages) {
            const r = await this.#store(data, link);
            if (r === 'stored') stored++;
            // Purged unless the database did not take it: then it stays on the node for the next sync.
            if (r !== 'not_stored') haves.push(fullHash(data));
          }
        }
        for (let i = 0; i < haves.length; i += IDS_PER_REQUEST) {
          const purged = await o.requests.request(link, MESSAGE_GET_PATH, encodeGetRequestData(null, haves.slice(i, i + IDS_PER_REQUEST)), LIST_TIMEOUT_MS);
          if (!purged.ok) return failed(`purging: ${purged.error}`);
        }
        if (wants.length === 0 || ids.ids.length <= haves.length) break;
      }
    } finally {
      void o.links.teardown(link, 'propagation sync done');
    }
    this.lastSyncAt = new Date(o.clock.now()).toISOString();
    this.lastSyncError = null;
    o.log.info('lxmf.propagation_synced', { interface: o.interfaceName, node: o.node, stored });
  }

  /** One fetched message: opened, checked and stored once. 'dropped' is one that never opens
   *  or whose signature fails: purged, as LXMF clients do, rather than fetched again. */
  async #store(data: Uint8Array, link: LinkSession): Promise<'stored' | 'duplicate' | 'dropped' | 'not_stored'> {
    const o = this.#o;
    const id = toHex(fullHash(data));
    if (this.#seenSet.has(id)) {
      this.counters.propagated_duplicates++;
      return 'duplicate';
    }
    const m = openPropagated(o.identity, o.address, data);
    if (!m.ok) {
      o.log.warn('lxmf.propagated_dropped', { interface: o.interfaceName, code: m.code, reason: m.reason });
      this.#remember(id);
      return 'dropped';
    }
    const r = await acceptMessage(o.inbound, m.message, { hops: link.hops, meta: {}, method: 'propagated', prove: () => {} });
    if (r === 'not_stored') return r;
    this.#remember(id);
    if (r === 'bad_signature') return 'dropped';
    this.counters.propagated_in++;
    return 'stored';
  }

  #remember(id: string): void {
    if (this.#seenSet.has(id)) return;
    this.#seen.push(id);
    this.#seenSet.add(id);
    while (this.#seen.length > SEEN_KEPT) this.#seenSet.delete(this.#seen.shift()!);
    this.#o.state.set(SEEN_KEY, JSON.stringify(this.#seen));
  }

  // ---- the node -------------------------------------------------------------------------------

  /** The node's key and settings: known, or asked for with a path request. */
  async #known(): Promise<KnownNode | null> {
    if (this.#node) return this.#node;
    await this.#o.requestPath(Buffer.from(this.#o.node, 'hex'));
    await this.#o.waitForAnnounce(this.#o.node, PATH_WAIT_MS);
    return this.#node;
  }

  async #link(node: KnownNode): Promise<LinkSession | string> {
    return this.#o.links.activeTo(this.#o.node) ?? this.#o.links.open({ address: this.#o.node, identity: node.identity, via: node.via, hops: node.hops });
  }

  stats(): Record<string, unknown> {
    const n = this.#node;
    return {
      propagation_node: this.#o.node,
      propagation_node_known: n !== null,
      ...(n ? { propagation_stamp_cost: n.stampCost, propagation_node_name: n.name, propagation_transfer_limit_kb: n.transferLimitKb } : {}),
      propagation_last_sync_at: this.lastSyncAt,
      propagation_last_sync_error: this.lastSyncError,
      ...this.counters,
    };
  }
}

function loadNode(state: DriverState): KnownNode | null {
  const raw = state.get(NODE_KEY);
  if (!raw) return null;
  try {
    const s = JSON.parse(raw) as PropagationNodeInfo & { public_key: string; via: string | null };
    const identity = publicIdentity(Buffer.from(s.public_key, 'hex'));
    if (!identity) return null;
    const { public_key: _k, via, ...facts } = s;
    return { ...facts, identity, via: via ? Buffer.from(via, 'hex') : null, hops: 1 };
  } catch {
    return null;
  }
}

function loadSeen(state: DriverState): string[] {
  try {
    const v = JSON.parse(state.get(SEEN_KEY) ?? '[]') as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').slice(-SEEN_KEPT) : [];
  } catch {
    return [];
  }
}
