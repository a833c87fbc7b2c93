import type { Clock, TimerHandle } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/log.ts';
import type { SendResult } from '../../bearer.ts';
import { toHex } from '../../shared/codec/bytes.ts';
import { CONTEXT, MTU, PACKET_TYPE } from '../reticulum/constants.ts';
import { generateRatchet, tokenDecrypt, tokenEncrypt } from '../reticulum/crypto.ts';
import { lxmfDeliveryHash } from '../reticulum/destination.ts';
import { generateIdentity, type Identity, type PublicIdentity } from '../reticulum/identity.ts';
import {
  createIdentify, createLinkPacketProof, createLinkProof, createLinkRequest, decodeLinkRequest, decodeRtt, deriveLinkKey, encodeLinkPacket,
  encodeRtt, isLinkClose, KEEPALIVE_REQUEST, KEEPALIVE_RESPONSE, linkContextEncrypted, linkPacketProofHash, readIdentify, validateLinkProof,
} from '../reticulum/link.ts';
import { decodePacket, type Packet } from '../reticulum/packet.ts';

// The links of one LXMF endpoint (docs/reticulum.md, "Links"; timing from RNS/Link.py): links
// peers open to our delivery destination, and links we open to deliver what does not fit one
// packet. Each link has a watchdog on the injected clock that sends keep-alives (initiator),
// marks a silent link stale and tears it down, as Reticulum does.

export type LinkState = 'pending' | 'handshake' | 'active' | 'stale' | 'closed';

export interface LinkSession {
  readonly id: Uint8Array;
  readonly idHex: string;
  readonly initiator: boolean;
  state: LinkState;
  /** Outbound: the peer we opened it to; inbound: the LXMF address of an initiator that identified. */
  peerAddress: string | null;
  /** Our signing key on this link: our identity (we were asked), or the link's own (we asked). */
  readonly signer: Identity;
  /** The key that signs the other side's proofs: the initiator's link key, or the destination's identity. */
  peerSigner: PublicIdentity | null;
  readonly linkPrivate: Uint8Array | Identity;
  key: Uint8Array | null;
  mtu: number;
  hops: number;
  rttMs: number | null;
  readonly requestMs: number;
  activatedMs: number | null;
  lastInboundMs: number;
  lastOutboundMs: number;
  lastDataMs: number;
  lastKeepaliveMs: number;
  keepaliveMs: number;
  staleMs: number;
  closeReason: string | null;
  timer: TimerHandle | null;
  /** Called once when the link closes (transfers on it fail, senders waiting for it give up). */
  readonly closed: Set<(reason: string) => void>;
  meta: Record<string, unknown>;
}

export interface LinkHandlers {
  /** Plaintext of a DATA packet in context NONE (an LXMF message sent DIRECT). */
  data(link: LinkSession, plaintext: Uint8Array, packet: Packet): void;
  /** A resource packet: plaintext for the encrypted contexts, null for parts and resource proofs. */
  resource(link: LinkSession, packet: Packet, plaintext: Uint8Array | null): void;
  /** The initiator revealed its identity (LXMF does so to open a backchannel). */
  identified(link: LinkSession, identity: PublicIdentity): void;
  /** The plaintext of a RESPONSE packet (an answer to a request of ours). */
  response?(link: LinkSession, plaintext: Uint8Array): void;
}

export interface LinkTableOptions {
  interfaceName: string;
  clock: Clock;
  log: Logger;
  identity: Identity;
  bitrateBps: number;
  transmit(packet: Uint8Array): Promise<SendResult>;
  handlers: LinkHandlers;
}

// Timing (RNS/Link.py, RNS/Reticulum.py).
const PER_HOP_TIMEOUT_MS = 6_000;
const KEEPALIVE_MAX_MS = 360_000;
const KEEPALIVE_MIN_MS = 5_000;
const KEEPALIVE_MAX_RTT_MS = 1_750;
const STALE_FACTOR = 2;
const KEEPALIVE_TIMEOUT_FACTOR = 4;
const STALE_GRACE_MS = 5_000;
/** LXMF closes a delivery link it opened after this long without data (LXMRouter.LINK_MAX_INACTIVITY). */
export const LINK_MAX_INACTIVITY_MS = 600_000;
/** Links kept at once; a request beyond this is ignored (a slow radio cannot serve more anyway). */
const MAX_LINKS = 32;

export class LinkTable {
  readonly #o: LinkTableOptions;
  readonly #links = new Map<string, LinkSession>();
  /** Outbound packets waiting for their link proof, by packet hash hex. */
  readonly #proofs = new Map<string, { link: LinkSession; resolve(ok: boolean): void; timer: TimerHandle }>();
  readonly counters = { links_in: 0, links_out: 0, links_established: 0, links_closed: 0, links_timed_out: 0, link_packets_in: 0, link_packets_out: 0 };

  constructor(options: LinkTableOptions) {
    this.#o = options;
  }

  get(idHex: string): LinkSession | undefined {
    return this.#links.get(idHex);
  }

  /** An active link to `address`: one we opened, or one its owner opened and identified on. */
  activeTo(address: string): LinkSession | null {
    let best: LinkSession | null = null;
    for (const l of this.#links.values()) {
      if (l.peerAddress !== address || l.state !== 'active' || !l.key) continue;
      if (!best || l.initiator) best = l; // ours first, as LXMF prefers direct_links
    }
    return best;
  }

  // ---- being asked --------------------------------------------------------------------------------

  /** A LINKREQUEST to our delivery destination: answer with a link proof (Link.validate_request). */
  onLinkRequest(p: Packet, meta: Record<string, unknown>): void {
    const r = decodeLinkRequest(p);
    if (!r.ok) {
      this.#o.log.debug('lxmf.link_request_dropped', { interface: this.#o.interfaceName, code: r.code, reason: r.reason });
      return;
    }
    const { linkId, peer, mtu } = r.request;
    const idHex = toHex(linkId);
    if (this.#links.has(idHex) || this.#links.size >= MAX_LINKS) return;
    const linkPrivate = generateRatchet();
    const key = deriveLinkKey(linkPrivate, peer.publicKey.subarray(0, 32), linkId);
    if (!key) return;
    const now = this.#o.clock.now();
    // Over an RNode nothing larger than Reticulum's MTU fits: a larger signalled MTU is confirmed lower.
    const link = this.#session({ id: linkId, idHex, initiator: false, signer: this.#o.identity, peerSigner: peer, linkPrivate, key, mtu: Math.min(mtu ?? MTU, MTU), hops: p.hops, now, meta });
    link.state = 'handshake';
    this.counters.links_in++;
    this.#o.log.info('lxmf.link_request', { interface: this.#o.interfaceName, link: idHex });
    void this.#transmit(link, createLinkProof(this.#o.identity, linkId, linkPrivate, link.mtu), false);
    this.#watch(link, PER_HOP_TIMEOUT_MS * Math.max(1, p.hops) + KEEPALIVE_MAX_MS);
  }

  // ---- asking -----------------------------------------------------------------------------------

  /** Opens a link to a peer's delivery destination. Resolves with the active link, or with a
   *  reason when it timed out or was refused. */
  open(peer: { address: string; identity: PublicIdentity; via: Uint8Array | null; hops: number }): Promise<LinkSession | string> {
    const keys = generateIdentity();
    const { packet, linkId } = createLinkRequest(Buffer.from(peer.address, 'hex'), keys, { transportId: peer.via });
    const idHex = toHex(linkId);
    const now = this.#o.clock.now();
    const link = this.#session({ id: linkId, idHex, initiator: true, signer: keys, peerSigner: peer.identity, linkPrivate: keys, key: null, mtu: MTU, hops: Math.max(1, peer.hops), now, meta: {} });
    link.peerAddress = peer.address;
    this.counters.links_out++;
    const firstHopMs = ((MTU * 8) / this.#o.bitrateBps) * 1000 + PER_HOP_TIMEOUT_MS;
    this.#watch(link, firstHopMs + PER_HOP_TIMEOUT_MS * link.hops);
    return new Promise((resolve) => {
      const settle = () => {
        link.closed.delete(onClose);
        this.#established.delete(idHex);
      };
      const onClose = (reason: string) => {
        settle();
        resolve(reason);
      };
      link.closed.add(onClose);
      this.#established.set(idHex, () => {
        settle();
        resolve(link);
      });
      void this.#transmit(link, packet, false).then((r) => {
        if (!r.ok) void this.teardown(link, `the link request could not be sent: ${r.error}`);
      });
    });
  }

  readonly #established = new Map<string, () => void>();

  #onLinkProof(link: LinkSession, p: Packet): void {
    if (!link.initiator || link.state !== 'pending' || !link.peerSigner) return;
    const v = validateLinkProof(p, link.id, link.peerSigner);
    if (!v.ok) {
      this.#o.log.debug('lxmf.link_proof_dropped', { interface: this.#o.interfaceName, link: link.idHex, code: v.code, reason: v.reason });
      return;
    }
    const key = deriveLinkKey(link.linkPrivate, v.peerPublic, link.id);
    if (!key) return;
    const now = this.#o.clock.now();
    link.key = key;
    link.mtu = Math.min(v.mtu, MTU);
    link.rttMs = Math.max(1, now - link.requestMs);
    this.#activate(link, now);
    void this.send(link, CONTEXT.LRRTT, encodeRtt(link.rttMs / 1000));
    this.#established.get(link.idHex)?.();
  }

  #activate(link: LinkSession, now: number): void {
    link.state = 'active';
    link.activatedMs = now;
    const rtt = link.rttMs ?? 0;
    link.keepaliveMs = Math.max(Math.min(rtt * (KEEPALIVE_MAX_MS / KEEPALIVE_MAX_RTT_MS), KEEPALIVE_MAX_MS), KEEPALIVE_MIN_MS);
    link.staleMs = link.keepaliveMs * STALE_FACTOR;
    this.counters.links_established++;
    this.#o.log.info('lxmf.link_established', { interface: this.#o.interfaceName, link: link.idHex, initiator: link.initiator, rtt_ms: Math.round(rtt) });
    this.#watch(link, 0);
  }

  // ---- packets on links -----------------------------------------------------------------------

  /** A packet to a LINK destination. Returns false when it belongs to no link of ours. */
  onLinkPacket(p: Packet, meta: Record<string, unknown>): boolean {
    const link = this.#links.get(toHex(p.destinationHash));
    if (!link || link.state === 'closed') return false;
    const now = this.#o.clock.now();
    this.counters.link_packets_in++;
    if (p.packetType === PACKET_TYPE.PROOF) {
      if (p.context === CONTEXT.LRPROOF) this.#onLinkProof(link, p);
      else if (p.context === CONTEXT.RESOURCE_PRF) this.#o.handlers.resource(link, p, null);
      else if (link.peerSigner) {
        const hash = linkPacketProofHash(p, link.peerSigner);
        const w = hash && this.#proofs.get(toHex(hash));
        if (w && w.link === link) {
          this.#proofs.delete(toHex(hash));
          this.#o.clock.clearTimeout(w.timer);
          w.resolve(true);
        }
      }
      this.#heard(link, now, p.context !== CONTEXT.KEEPALIVE, meta);
      return true;
    }
    if (p.packetType !== PACKET_TYPE.DATA || !link.key) return true;
    this.#heard(link, now, p.context !== CONTEXT.KEEPALIVE, meta);
    if (p.context === CONTEXT.KEEPALIVE) {
      if (!link.initiator && p.data.length === 1 && p.data[0] === KEEPALIVE_REQUEST && now >= link.lastOutboundMs + link.keepaliveMs) {
        void this.#transmit(link, encodeLinkPacket(link.id, CONTEXT.KEEPALIVE, Uint8Array.of(KEEPALIVE_RESPONSE)), true);
      }
      return true;
    }
    if (p.context === CONTEXT.RESOURCE) {
      this.#o.handlers.resource(link, p, null);
      return true;
    }
    const plaintext = tokenDecrypt(link.key, p.data);
    if (!plaintext) return true;
    switch (p.context) {
      case CONTEXT.NONE:
        this.#o.handlers.data(link, plaintext, p);
        break;
      case CONTEXT.LRRTT: {
        const rtt = decodeRtt(plaintext);
        if (link.initiator || rtt === null || link.state !== 'handshake') break;
        link.rttMs = Math.max(now - link.requestMs, rtt * 1000);
        link.hops = p.hops;
        this.#activate(link, now);
        break;
      }
      case CONTEXT.LINKIDENTIFY: {
        const identity = link.initiator ? null : readIdentify(plaintext, link.id);
        if (!identity) break;
        link.peerAddress = toHex(lxmfDeliveryHash(identity));
        this.#o.handlers.identified(link, identity);
        break;
      }
      case CONTEXT.LINKCLOSE:
        if (isLinkClose(plaintext, link.id)) this.#close(link, 'closed by the peer');
        break;
      case CONTEXT.RESOURCE_ADV: case CONTEXT.RESOURCE_REQ: case CONTEXT.RESOURCE_HMU: case CONTEXT.RESOURCE_ICL: case CONTEXT.RESOURCE_RCL:
        this.#o.handlers.resource(link, p, plaintext);
        break;
      case CONTEXT.RESPONSE:
        this.#o.handlers.response?.(link, plaintext);
        break;
      default:
        break; // requests to us and channels: LXMF delivery uses neither
    }
    return true;
  }

  #heard(link: LinkSession, now: number, data: boolean, meta: Record<string, unknown>): void {
    link.lastInboundMs = now;
    if (data) link.lastDataMs = now;
    link.meta = meta;
    if (link.state === 'stale') link.state = 'active';
  }

  // ---- sending ----------------------------------------------------------------------------------

  /** Encrypts (where the context asks for it) and sends one packet on a link; resolves with the
   *  packet's hash once it went on the air. */
  async send(link: LinkSession, context: number, data: Uint8Array, packetType: number = PACKET_TYPE.DATA): Promise<{ ok: true; hash: Uint8Array } | { ok: false; error: string }> {
    if (!link.key || link.state === 'closed') return { ok: false, error: `the link ${link.idHex} is ${link.state}` };
    const payload = linkContextEncrypted(packetType, context) ? tokenEncrypt(link.key, data) : data;
    const raw = encodeLinkPacket(link.id, context, payload, packetType);
    const r = await this.#transmit(link, raw, context === CONTEXT.KEEPALIVE);
    if (!r.ok) return { ok: false, error: r.error };
    const decoded = decodePacket(raw);
    return decoded.ok ? { ok: true, hash: decoded.packet.hash } : { ok: false, error: decoded.reason };
  }

  /** Sends a DATA packet (context NONE) and waits for the peer's proof of it. */
  async sendProven(link: LinkSession, data: Uint8Array, timeoutMs: number): Promise<{ ok: true } | { ok: false; error: string }> {
    const sent = await this.send(link, CONTEXT.NONE, data);
    if (!sent.ok) return sent;
    const key = toHex(sent.hash);
    const proven = await new Promise<boolean>((resolve) => {
      const timer = this.#o.clock.setTimeout(() => {
        this.#proofs.delete(key);
        link.closed.delete(onClose);
        resolve(false);
      }, timeoutMs);
      const onClose = () => {
        this.#o.clock.clearTimeout(timer);
        this.#proofs.delete(key);
        resolve(false);
      };
      link.closed.add(onClose);
      this.#proofs.set(key, { link, timer, resolve: (ok) => { link.closed.delete(onClose); resolve(ok); } });
    });
    return proven ? { ok: true } : { ok: false, error: link.state === 'closed' ? `the link closed (${link.closeReason})` : `no proof within ${Math.round(timeoutMs / 1000)} s` };
  }

  /** Proves a packet received on the link (Link.prove_packet). */
  prove(link: LinkSession, p: Packet): void {
    void this.#transmit(link, createLinkPacketProof(link.signer, link.id, p.hash), false);
  }

  /** Reveals our identity on a link we opened (LXMF does so to offer a backchannel). */
  identify(link: LinkSession): Promise<unknown> {
    return this.send(link, CONTEXT.LINKIDENTIFY, createIdentify(this.#o.identity, link.id));
  }

  async #transmit(link: LinkSession, raw: Uint8Array, keepalive: boolean): Promise<SendResult> {
    const r = await this.#o.transmit(raw);
    if (r.ok) {
      const now = this.#o.clock.now();
      link.lastOutboundMs = now;
      if (keepalive) link.lastKeepaliveMs = now;
      else link.lastDataMs = now;
      this.counters.link_packets_out++;
    }
    return r;
  }

  // ---- ending -----------------------------------------------------------------------------------

  /** Closes a link: tells the peer (LINKCLOSE, when the link was up) and forgets the keys.
   *  Answers when the LINKCLOSE was handed to the radio (or at once when none is sent). */
  teardown(link: LinkSession, reason: string): Promise<unknown> {
    if (link.state === 'closed') return Promise.resolve();
    const told = link.key && link.state !== 'pending' ? this.send(link, CONTEXT.LINKCLOSE, link.id) : Promise.resolve();
    this.#close(link, reason);
    return told;
  }

  #close(link: LinkSession, reason: string): void {
    if (link.state === 'closed') return;
    link.state = 'closed';
    link.closeReason = reason;
    link.key = null;
    if (link.timer) this.#o.clock.clearTimeout(link.timer);
    link.timer = null;
    this.#links.delete(link.idHex);
    this.counters.links_closed++;
    this.#o.log.info('lxmf.link_closed', { interface: this.#o.interfaceName, link: link.idHex, reason });
    for (const f of [...link.closed]) f(reason);
    link.closed.clear();
  }

  /** Every link closes (the interface stops); answers when the radio has every LINKCLOSE. */
  closeAll(reason: string): Promise<unknown> {
    return Promise.all([...this.#links.values()].map((link) => this.teardown(link, reason)));
  }

  // ---- watchdog (Link.__watchdog_job) -------------------------------------------------------------

  #watch(link: LinkSession, establishWithinMs: number): void {
    if (link.timer) this.#o.clock.clearTimeout(link.timer);
    const now = this.#o.clock.now();
    let next: number;
    if (link.state === 'pending' || link.state === 'handshake') {
      next = link.requestMs + establishWithinMs - now;
      if (next <= 0) {
        this.counters.links_timed_out++;
        this.#close(link, 'timed out before it was established');
        return;
      }
    } else if (link.state === 'active') {
      const lastIn = Math.max(link.lastInboundMs, link.activatedMs ?? 0);
      if (link.initiator && now - link.lastDataMs >= LINK_MAX_INACTIVITY_MS) {
        void this.teardown(link, 'no data for 10 minutes');
        return;
      }
      if (now >= lastIn + link.keepaliveMs || now >= link.lastOutboundMs + link.keepaliveMs) {
        if (link.initiator && now >= link.lastKeepaliveMs + link.keepaliveMs) {
          void this.#transmit(link, encodeLinkPacket(link.id, CONTEXT.KEEPALIVE, Uint8Array.of(KEEPALIVE_REQUEST)), true);
        }
        if (now >= lastIn + link.staleMs) {
          link.state = 'stale';
          next = (link.rttMs ?? 0) * KEEPALIVE_TIMEOUT_FACTOR + STALE_GRACE_MS;
        } else {
          next = link.keepaliveMs;
        }
      } else {
        next = lastIn + link.keepaliveMs - now;
      }
    } else if (link.state === 'stale') {
      this.counters.links_timed_out++;
      void this.teardown(link, 'timed out: the peer went silent');
      return;
    } else {
      return;
    }
    link.timer = this.#o.clock.setTimeout(() => this.#watch(link, establishWithinMs), Math.max(1, next));
  }

  #session(s: { id: Uint8Array; idHex: string; initiator: boolean; signer: Identity; peerSigner: PublicIdentity; linkPrivate: Uint8Array | Identity; key: Uint8Array | null; mtu: number; hops: number; now: number; meta: Record<string, unknown> }): LinkSession {
    const link: LinkSession = {
      id: s.id, idHex: s.idHex, initiator: s.initiator, state: 'pending', peerAddress: null, signer: s.signer, peerSigner: s.peerSigner,
      linkPrivate: s.linkPrivate, key: s.key, mtu: s.mtu, hops: s.hops, rttMs: null, requestMs: s.now, activatedMs: null, lastInboundMs: s.now,
      lastOutboundMs: s.now, lastDataMs: s.now, lastKeepaliveMs: 0, keepaliveMs: KEEPALIVE_MAX_MS, staleMs: KEEPALIVE_MAX_MS * STALE_FACTOR,
      closeReason: null, timer: null, closed: new Set(), meta: s.meta,
    };
    this.#links.set(s.idHex, link);
    return link;
  }

  /** The links for the interface's stats. */
  list(): Array<Record<string, unknown>> {
    const now = this.#o.clock.now();
    return [...this.#links.values()].map((l) => ({
      id: l.idHex, direction: l.initiator ? 'out' : 'in', state: l.state, peer: l.peerAddress, rtt_ms: l.rttMs === null ? null : Math.round(l.rttMs),
      age_s: l.activatedMs === null ? null : Math.round((now - l.activatedMs) / 1000), last_inbound_s: Math.round((now - l.lastInboundMs) / 1000),
    }));
  }

  get size(): number {
    return this.#links.size;
  }
}
