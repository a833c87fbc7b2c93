import { hostname } from 'node:os';
import type { Clock, TimerHandle } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/log.ts';
import type { BearerEvents, DriverState, OutboundFrame, SendResult } from '../../bearer.ts';
import { validateAnnounce } from '../reticulum/announce.ts';
import { Announcer } from './announcer.ts';
import { equalBytes, toHex } from '../../shared/codec/bytes.ts';
import { CONTEXT, DESTINATION_TYPE, LXMF_DELIVERY_NAME, PACKET_TYPE } from '../reticulum/constants.ts';
import { decryptFor, encryptFor } from '../reticulum/crypto.ts';
import { LXMF_DELIVERY_NAME_HASH, lxmfDeliveryHash } from '../reticulum/destination.ts';
import { generateIdentity, identityFromPrivateKey, type Identity } from '../reticulum/identity.ts';
import {
  LXMF_OPPORTUNISTIC_MAX_CONTENT, type LxmfFields, opportunisticPlaintext, packMessage, unpackOpportunistic, verifyMessage,
} from '../reticulum/lxmf.ts';
import { decodeLxmfAppData } from '../reticulum/lxmf-announce.ts';
import { decodePacket, encodePacket, type Packet } from '../reticulum/packet.ts';
import { createProof, proofDestination, validateProof } from '../reticulum/proof.ts';
import { PeerBook, type LxmfPeer } from './peers.ts';
import { DirectDelivery } from './direct.ts';
import { acceptMessage, type InboundContext } from './inbound.ts';
import { LinkTable } from './links.ts';
import { resourceBudgetBytes, Transfers } from './transfers.ts';
import { LXMF_PROPAGATION_NAME_HASH } from '../reticulum/propagation.ts';
import { PropagationClient } from './propagation.ts';
import { LinkRequests } from './requests.ts';

// The bridge as an LXMF endpoint on a Reticulum network (docs/reticulum.md): a leaf node that
// announces its lxmf.delivery destination, takes LXMF messages addressed to it (one encrypted
// packet each, "opportunistic" delivery), proves every packet it accepts, and sends its own
// messages the same way, counting one delivered only when the recipient's proof comes back.
// Links (DIRECT, resources) and one propagation node are in their own files; it does no
// transport (it forwards nothing). The bearer
// under it (an RNode in reticulum mode) only moves packets: transmit() puts one on the air,
// onPacket() hands over one heard.

export interface LxmfEndpointOptions {
  interfaceName: string;
  clock: Clock;
  log: Logger;
  events: BearerEvents;
  state: DriverState;
  /** Puts one Reticulum packet on the air. */
  transmit(packet: Uint8Array): Promise<SendResult>;
  /** The name announced with our address (default: the host name). */
  displayName: string | null;
  announceIntervalS: number;
  /** The interface's bit rate: announces stay within 2 % of it (Reticulum's announce cap). */
  bitrateBps: number;
  /** How long a sent message may wait for its proof (default 60 s). */
  proofTimeoutMs?: number;
  /** How long a send to an address we have no key for waits for the answer to our path
   *  request before it fails retryable (default 0: it fails at once, the request still goes). */
  pathWaitMs?: number;
  /** A propagation node to leave messages on for peers we cannot reach, and to sync from. */
  propagation?: { node: string; syncIntervalS: number; maxStampCost: number } | null;
}

export { ANNOUNCE_CAP } from './announcer.ts';
const DEFAULT_PROOF_TIMEOUT_MS = 60_000;
/** Send timestamps remembered (see #timestampFor). */
const TIMESTAMPS_KEPT = 10_000;
const IDENTITY_KEY = 'reticulum-identity';
/** A packed message around n content bytes (255 < n < 65536, empty title, no fields): 16 + 16
 *  (hashes) + 64 (signature) + 1 (array) + 9 (float64 time) + 2 (empty title) + 3 (bin 16
 *  header) + 1 (empty map). */
const LXMF_PACKED_OVERHEAD = 112;

interface WaitingProof {
  packetHash: Uint8Array;
  peer: LxmfPeer;
  sentMs: number;
  resolve(result: SendResult): void;
  timer: TimerHandle;
}

export class LxmfEndpoint {
  readonly identity: Identity;
  readonly address: Uint8Array;
  readonly displayName: string;
  readonly #o: LxmfEndpointOptions;
  readonly #peers: PeerBook;
  /** Waiting for a proof, by the hex of the truncated packet hash the proof is addressed to. */
  readonly #waiting = new Map<string, WaitingProof>();
  /** The timestamp each delivery was first packed with, so a retry is the same LXMF message
   *  (the hash covers timestamp and content: the recipient keeps one). The parts of a split
   *  delivery share it (their contents differ). Kept after success too, since a retry of a
   *  split delivery resends every part. In memory: after a restart a retry is a new message
   *  (at least once). */
  readonly #timestamps = new Map<string, number>();
  readonly #announcer: Announcer;
  readonly #links: LinkTable;
  readonly #direct: DirectDelivery;
  readonly #transfers: Transfers;
  readonly #inbound: InboundContext;
  readonly #requests: LinkRequests;
  readonly #propagation: PropagationClient | null;
  readonly counters = {
    announces_sent: 0, announces_heard: 0, announces_invalid: 0, packets_in: 0, packets_out: 0, packets_malformed: 0,
    packets_other_destination: 0, packets_ignored: 0, messages_in: 0, messages_unverified: 0, messages_out: 0, proofs_sent: 0,
    proofs_received: 0, proofs_invalid: 0, bad_signatures: 0, undecryptable: 0,
    path_requests_heard: 0, path_responses_sent: 0, path_requests_sent: 0, messages_direct_in: 0, messages_direct_out: 0,
    resources_out: 0, resources_in: 0, resources_failed: 0, resource_parts_resent: 0,
  };

  constructor(options: LxmfEndpointOptions) {
    this.#o = options;
    this.identity = loadIdentity(options.state, options.log);
    this.address = lxmfDeliveryHash(this.identity);
    this.displayName = options.displayName ?? hostname();
    this.#peers = new PeerBook(options.state);
    this.#announcer = new Announcer({
      interfaceName: options.interfaceName, clock: options.clock, log: options.log, identity: this.identity, address: this.address,
      displayName: this.displayName, announceIntervalS: options.announceIntervalS, bitrateBps: options.bitrateBps,
      transmit: options.transmit, counters: this.counters,
    });
    this.#inbound = { interfaceName: options.interfaceName, log: options.log, events: options.events, peers: this.#peers, addressHex: this.addressHex, counters: this.counters };
    this.#links = new LinkTable({
      interfaceName: options.interfaceName, clock: options.clock, log: options.log, identity: this.identity, bitrateBps: options.bitrateBps,
      transmit: (packet) => this.#transmitCounted(packet),
      handlers: {
        data: (link, plaintext, packet) => this.#direct.onLinkData(link, plaintext, packet),
        resource: (link, packet, plaintext) => this.#transfers.onPacket(link, packet, plaintext),
        identified: (link, identity) => this.#direct.onIdentified(link, identity),
        response: (link, plaintext) => this.#requests.onResponse(link, plaintext),
      },
    });
    this.#transfers = new Transfers({
      interfaceName: options.interfaceName, clock: options.clock, log: options.log, links: this.#links, bitrateBps: options.bitrateBps,
      maxBytes: resourceBudgetBytes(options.bitrateBps), counters: this.counters,
      received: (link, data, prove) => this.#direct.onMessage(link, data, { hops: link.hops, method: 'resource', prove }),
      expectsResponse: (link, requestId) => this.#requests.expects(link, requestId),
      response: (link, data) => this.#requests.onResponse(link, data),
    });
    this.#requests = new LinkRequests(options.clock, this.#links);
    const pn = options.propagation;
    this.#propagation = pn
      ? new PropagationClient({
        interfaceName: options.interfaceName, clock: options.clock, log: options.log, state: options.state, identity: this.identity, address: this.address,
        node: pn.node, syncIntervalS: pn.syncIntervalS, maxStampCost: pn.maxStampCost, links: this.#links, requests: this.#requests, resources: this.#transfers,
        inbound: this.#inbound, proofTimeoutMs: this.#proofTimeoutMs,
        requestPath: (d) => this.#announcer.requestPath(d), waitForAnnounce: (a, ms) => this.#announcer.waitForAnnounce(a, ms),
      })
      : null;
    this.#direct = new DirectDelivery({
      interfaceName: options.interfaceName, log: options.log, address: this.address, links: this.#links, inbound: this.#inbound, peers: this.#peers,
      proofTimeoutMs: this.#proofTimeoutMs, resources: this.#transfers, counters: this.counters,
    });
  }

  async #transmitCounted(packet: Uint8Array): Promise<SendResult> {
    const r = await this.#o.transmit(packet);
    if (r.ok) this.counters.packets_out++;
    return r;
  }

  get addressHex(): string {
    return toHex(this.address);
  }

  /** The link is up: announce now, then every announce_interval_s. */
  online(): void {
    this.#announcer.online();
    this.#propagation?.online();
  }

  offline(): void {
    this.#announcer.offline();
    this.#propagation?.offline();
  }

  /** Lists, fetches and purges our messages on the propagation node now; false when there is
   *  none or the sync failed (the reason is in the stats). */
  syncPropagation(): Promise<boolean> {
    return this.#propagation?.sync() ?? Promise.resolve(false);
  }

  /** Closes every link, telling each peer (LINKCLOSE); answers when the radio has them all,
   *  or false when there was no link to close. Call while the radio is still on. */
  async closeLinks(): Promise<boolean> {
    if (this.#links.size === 0) return false;
    await this.#links.closeAll('the interface stopped');
    return true;
  }

  /** Stops: sends that wait for a proof fail (retryable), links close, timers end. */
  close(): void {
    this.offline();
    void this.#links.closeAll('the interface stopped');
    for (const [key, w] of this.#waiting) {
      this.#o.clock.clearTimeout(w.timer);
      this.#waiting.delete(key);
      w.resolve({ ok: false, retryable: true, error: 'ERR_LXMF_STOPPED: the interface stopped before the proof came' });
    }
  }

  // ---- announces ----------------------------------------------------------------------------

  /** The shortest gap between two announces that keeps them within the cap. */
  announceGapMs(announceBytes: number): number {
    return this.#announcer.gapMs(announceBytes);
  }

  /** Sends our announce now, or when the cap allows (announcer.ts). */
  announce(): Promise<'sent' | 'deferred' | 'failed' | 'offline'> {
    return this.#announcer.announce();
  }

  get lastAnnounceAt(): string | null {
    return this.#announcer.lastAnnounceAt;
  }

  // ---- receiving ----------------------------------------------------------------------------

  /** One packet heard on the interface; `meta` is the radio's link facts (RSSI, SNR). Never
   *  throws: whatever comes over the air, a failure is counted and the radio keeps going. */
  onPacket(raw: Uint8Array, meta: Record<string, unknown>): void {
    try {
      this.#onPacket(raw, meta);
    } catch (error) {
      this.counters.packets_malformed++;
      this.#o.log.warn('lxmf.packet_failed', { interface: this.#o.interfaceName, error: error instanceof Error ? error.message : String(error) });
    }
  }

  #onPacket(raw: Uint8Array, meta: Record<string, unknown>): void {
    this.counters.packets_in++;
    const decoded = decodePacket(raw);
    if (!decoded.ok) {
      this.counters.packets_malformed++;
      this.#o.log.debug('lxmf.packet_dropped', { interface: this.#o.interfaceName, code: decoded.code, reason: decoded.reason });
      return;
    }
    const p = decoded.packet;
    if (p.packetType === PACKET_TYPE.ANNOUNCE) this.#onAnnounce(p);
    else if (p.destinationType === DESTINATION_TYPE.LINK) {
      if (!this.#links.onLinkPacket(p, meta)) this.counters.packets_other_destination++;
    } else if (p.packetType === PACKET_TYPE.LINKREQUEST) {
      if (equalBytes(p.destinationHash, this.address)) this.#links.onLinkRequest(p, meta);
      else this.counters.packets_other_destination++;
    } else if (p.packetType === PACKET_TYPE.PROOF) this.#onProof(p);
    else if (p.packetType === PACKET_TYPE.DATA) this.#onData(p, meta);
    else this.counters.packets_ignored++;
  }

  #onAnnounce(p: Packet): void {
    const a = validateAnnounce(p);
    if (!a.ok) {
      this.counters.announces_invalid++;
      if (a.code === 'ERR_RNS_ANNOUNCE_SIGNATURE') this.counters.bad_signatures++;
      this.#o.log.debug('lxmf.announce_dropped', { interface: this.#o.interfaceName, code: a.code, reason: a.reason });
      return;
    }
    const { announce } = a;
    if (this.#propagation && equalBytes(announce.nameHash, LXMF_PROPAGATION_NAME_HASH)) {
      this.#propagation.heard(announce, p.hops);
      this.#announcer.heard(toHex(announce.destinationHash));
      return;
    }
    // Only lxmf.delivery destinations are people we can message; other announces (paths,
    // propagation nodes, other apps) are valid but not ours to keep.
    if (!equalBytes(announce.nameHash, LXMF_DELIVERY_NAME_HASH) || equalBytes(announce.destinationHash, this.address)) {
      this.counters.packets_ignored++;
      return;
    }
    this.counters.announces_heard++;
    const app = decodeLxmfAppData(announce.appData);
    const peer: LxmfPeer = {
      address: toHex(announce.destinationHash),
      identity: announce.identity,
      displayName: app.ok ? app.displayName : null,
      stampCost: app.ok ? app.stampCost : null,
      ratchet: announce.ratchet,
      via: announce.transportId,
      hops: p.hops,
      lastAnnounceMs: this.#o.clock.now(),
    };
    this.#peers.remember(peer);
    this.#o.events.nodes([{
      id: peer.address, network: 'lxmf', ...(peer.displayName ? { long_name: peer.displayName } : {}), hops_away: p.hops,
      last_heard_at: new Date(peer.lastAnnounceMs).toISOString(),
    }]);
    this.#announcer.heard(peer.address);
  }

  #onData(p: Packet, meta: Record<string, unknown>): void {
    if (p.destinationType === DESTINATION_TYPE.PLAIN && this.#announcer.onPathRequest(p)) return;
    if (!equalBytes(p.destinationHash, this.address)) {
      this.counters.packets_other_destination++;
      return;
    }
    if (p.destinationType !== DESTINATION_TYPE.SINGLE || p.context !== CONTEXT.NONE) {
      // Link, resource and request packets were taken by the links (links.ts) above; a single
      // destination's packet with another context carries no LXMF message: counted, dropped.
      this.counters.packets_ignored++;
      return;
    }
    const opened = decryptFor(this.identity, p.data);
    if (!opened) {
      this.counters.undecryptable++;
      return;
    }
    const m = unpackOpportunistic(this.address, opened.plaintext);
    if (!m.ok) {
      this.counters.packets_malformed++;
      this.#o.log.debug('lxmf.message_dropped', { interface: this.#o.interfaceName, code: m.code, reason: m.reason });
      return;
    }
    void acceptMessage(this.#inbound, m.message, { hops: p.hops, meta, method: null, prove: () => this.#prove(p) });
  }

  /** An explicit proof (packet hash and our signature of it) for a packet we accepted. */
  #prove(p: Packet): void {
    const proof = createProof(this.identity, p.hash, { explicit: true });
    void this.#o.transmit(proof).then((r) => {
      if (r.ok) {
        this.counters.proofs_sent++;
        this.counters.packets_out++;
      }
    });
  }

  #onProof(p: Packet): void {
    const key = toHex(p.destinationHash);
    const w = this.#waiting.get(key);
    if (!w) {
      this.counters.packets_other_destination++;
      return;
    }
    if (!validateProof(p, w.packetHash, w.peer.identity).ok) {
      this.counters.proofs_invalid++;
      return;
    }
    this.counters.proofs_received++;
    this.#waiting.delete(key);
    this.#o.clock.clearTimeout(w.timer);
    w.resolve({ ok: true, meta: { proof: 'received', proof_ms: this.#o.clock.now() - w.sentMs, to_name: w.peer.displayName } });
  }

  // ---- sending ------------------------------------------------------------------------------

  /** Largest content one message carries (no title or fields): what one packed message over a
   *  link holds (a resource, or one link packet), less LXMF's framing (docs/protocols/reticulum.md 7.2). */
  get maxContentBytes(): number {
    return Math.max(LXMF_OPPORTUNISTIC_MAX_CONTENT, this.#direct.maxPackedBytes - LXMF_PACKED_OVERHEAD);
  }

  async send(frame: OutboundFrame): Promise<SendResult> {
    const to = frame.to.trim().toLowerCase();
    if (!/^[0-9a-f]{32}$/.test(to)) {
      return { ok: false, retryable: false, error: `ERR_LXMF_ADDRESS: "${frame.to}" is not an LXMF address (32 hex digits, as Sideband and NomadNet show it)` };
    }
    const content = frame.payload;
    const max = this.maxContentBytes;
    if (content.length > max) {
      return {
        ok: false, retryable: false,
        error: `ERR_LXMF_TOO_LARGE: ${content.length} bytes is more than the ${max} bytes one LXMF message from this bridge carries (add a split or truncate transform)`,
      };
    }
    const peer = await this.#peerOrPath(to);
    if (!peer) {
      return { ok: false, retryable: true, error: `ERR_LXMF_UNKNOWN_DESTINATION: no announce heard from ${to} yet, so its key is unknown; a path request went out, and the message goes on a retry once the peer answers or announces` };
    }
    if (peer.stampCost !== null) {
      // Such a peer drops messages without a proof-of-work stamp, possibly after proving the
      // packet: we would count a dropped message delivered. The bridge makes stamps for a
      // propagation node (propagation.ts), not per recipient: refused, with the reason.
      return { ok: false, retryable: false, error: `ERR_LXMF_STAMP_REQUIRED: ${to} asks for proof-of-work stamps (cost ${peer.stampCost}), which this bridge does not make` };
    }
    const timestamp = this.#timestampFor(frame.deliveryId);
    const packed = packMessage({ source: this.identity, destinationHash: Buffer.from(to, 'hex'), timestamp, title: '', content });
    // Over a link (LXMF's DIRECT method) when it does not fit one packet, or when a link to the
    // peer is up anyway (ours, or the one the peer opened and identified on).
    const direct = await this.#sendDirect(to, peer, packed.packed, content.length);
    if (direct.ok || !direct.retryable || !this.#propagation) return direct;
    // Not reached directly (no proof, no link): leave it on the propagation node for the peer
    // to fetch (docs/reticulum.md, "Propagation node").
    const left = await this.#propagation.deliver(peer, packed.packed, packed.hash);
    if (left.ok) {
      this.counters.messages_out++;
      return { ...left, meta: { ...left.meta, direct_error: direct.error } };
    }
    return { ...left, error: `${direct.error}; then ${left.error}` };
  }

  /** One attempt straight to the peer: over a link (when it does not fit one packet, or a link
   *  is up) or as one opportunistic packet. */
  async #sendDirect(to: string, peer: LxmfPeer, packed: Uint8Array, contentLength: number): Promise<SendResult> {
    if (contentLength > LXMF_OPPORTUNISTIC_MAX_CONTENT || this.#links.activeTo(to)) {
      const r = await this.#direct.send(peer, packed);
      if (r.ok) this.counters.messages_out++;
      return r;
    }
    const plaintext = opportunisticPlaintext(packed);
    // A peer heard through a transport node is reached through it (HEADER_2).
    const packet = encodePacket({ destinationHash: Buffer.from(to, 'hex'), transportId: peer.via, data: encryptFor(peer.identity, plaintext, { ratchet: peer.ratchet }) });
    const hash = decodePacket(packet);
    if (!hash.ok) return { ok: false, retryable: false, error: `ERR_LXMF_PACKET: ${hash.reason}` };
    const key = toHex(proofDestination(hash.packet.hash));
    const proven = new Promise<SendResult>((resolve) => {
      const timer = this.#o.clock.setTimeout(() => {
        if (this.#waiting.get(key)?.timer !== timer) return;
        this.#waiting.delete(key);
        resolve({ ok: false, retryable: true, error: `ERR_LXMF_NO_PROOF: ${to} did not prove delivery within ${Math.round(this.#proofTimeoutMs / 1000)} s` });
      }, this.#proofTimeoutMs);
      this.#waiting.set(key, { packetHash: hash.packet.hash, peer, sentMs: this.#o.clock.now(), resolve, timer });
    });
    const sent = await this.#o.transmit(packet);
    if (!sent.ok) {
      const w = this.#waiting.get(key);
      if (w) {
        this.#o.clock.clearTimeout(w.timer);
        this.#waiting.delete(key);
      }
      return sent;
    }
    this.counters.packets_out++;
    this.counters.messages_out++;
    return proven;
  }

  /** A known peer, or: ask the network for its path (its owner answers with an announce) and
   *  wait for the answer up to pathWaitMs. */
  async #peerOrPath(address: string): Promise<LxmfPeer | null> {
    const known = this.#peers.get(address);
    if (known) return known;
    await this.#announcer.requestPath(Buffer.from(address, 'hex'));
    const waitMs = this.#o.pathWaitMs ?? 0;
    if (waitMs > 0) await this.#announcer.waitForAnnounce(address, waitMs);
    return this.#peers.get(address);
  }

  get #proofTimeoutMs(): number {
    return this.#o.proofTimeoutMs ?? DEFAULT_PROOF_TIMEOUT_MS;
  }

  #timestampFor(deliveryId: string): number {
    let t = this.#timestamps.get(deliveryId);
    if (t === undefined) {
      t = this.#o.clock.now() / 1000;
      this.#timestamps.set(deliveryId, t);
      if (this.#timestamps.size > TIMESTAMPS_KEPT) this.#timestamps.delete(this.#timestamps.keys().next().value!);
    }
    return t;
  }

  stats(): Record<string, unknown> {
    return {
      lxmf_address: this.addressHex,
      identity_hash: toHex(this.identity.hash),
      display_name: this.displayName,
      last_announce_at: this.lastAnnounceAt,
      peers_known: this.#peers.size,
      proofs_waiting: this.#waiting.size,
      ...this.counters,
      ...this.#links.counters,
      links_active: this.#links.size,
      resources_active: this.#transfers.active,
      ...this.#propagation?.stats(),
      links: this.#links.list(),
    };
  }
}

/** What GET /api/interfaces/{id} shows of a stopped endpoint: its address, from the kept
 *  identity (null before the first start made one). */
export function storedEndpointFacts(state: Pick<DriverState, 'get'>, displayName: string | null): Record<string, unknown> | null {
  const stored = state.get(IDENTITY_KEY);
  if (stored === null) return null;
  try {
    const identity = identityFromPrivateKey(Buffer.from(stored, 'hex'));
    return { lxmf_address: toHex(lxmfDeliveryHash(identity)), identity_hash: toHex(identity.hash), display_name: displayName ?? hostname(), last_announce_at: null, peers_known: 0, proofs_waiting: 0 };
  } catch {
    return null;
  }
}

/** Our identity: made once, kept in the interface's driver state (docs/reticulum.md, "The
 *  identity"), so the LXMF address survives restarts and backups. The private key is never
 *  logged and never exported with the configuration. */
function loadIdentity(state: DriverState, log: Logger): Identity {
  const stored = state.get(IDENTITY_KEY);
  if (stored !== null) {
    try {
      return identityFromPrivateKey(Buffer.from(stored, 'hex'));
    } catch {
      log.error('lxmf.identity_unreadable', { reason: 'the stored Reticulum identity is damaged; a new one (a new LXMF address) is made' });
    }
  }
  const identity = generateIdentity();
  state.set(IDENTITY_KEY, Buffer.from(identity.privateKey).toString('hex'));
  return identity;
}
