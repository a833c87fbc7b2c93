import type { Logger } from '../../../lib/log.ts';
import type { SendResult } from '../../bearer.ts';
import { equalBytes } from '../../shared/codec/bytes.ts';
import type { PublicIdentity } from '../reticulum/identity.ts';
import { LINK_MDU } from '../reticulum/link.ts';
import { unpackMessage } from '../reticulum/lxmf.ts';
import type { Packet } from '../reticulum/packet.ts';
import { acceptMessage, type InboundContext } from './inbound.ts';
import type { LinkSession, LinkTable } from './links.ts';
import type { LxmfPeer, PeerBook } from './peers.ts';

// LXMF's DIRECT method (docs/reticulum.md, "Links"; LXMF/LXMRouter.py delivery_packet,
// delivery_link_established, process_outbound; LXMessage.__as_packet, __as_resource): a whole
// packed message (destination hash included) as one link packet, proven by the recipient, or as
// a resource over the link when it does not fit one packet.

export interface ResourceSender {
  /** Sends `data` as a resource over the link; resolves when the receiver proved it, or with
   *  the reason it did not complete. */
  send(link: LinkSession, data: Uint8Array): Promise<{ ok: true } | { ok: false; error: string }>;
  /** Largest data one resource may carry. */
  readonly maxBytes: number;
}

export interface DirectOptions {
  interfaceName: string;
  log: Logger;
  address: Uint8Array;
  links: LinkTable;
  inbound: InboundContext;
  peers: PeerBook;
  proofTimeoutMs: number;
  resources: ResourceSender | null;
  counters: { messages_direct_in: number; messages_direct_out: number };
}

export class DirectDelivery {
  readonly #o: DirectOptions;

  constructor(options: DirectOptions) {
    this.#o = options;
  }

  /** Largest packed message that can go DIRECT: a resource's limit, or one link packet. */
  get maxPackedBytes(): number {
    return Math.max(LINK_MDU, this.#o.resources?.maxBytes ?? 0);
  }

  /** A whole packed message that arrived over a link (one packet, or an assembled resource). */
  onMessage(link: LinkSession, packed: Uint8Array, arrival: { hops: number; method: 'direct' | 'resource'; prove(): void }): void {
    const m = unpackMessage(packed);
    if (!m.ok || !equalBytes(m.message.destinationHash, this.#o.address)) {
      this.#o.log.debug('lxmf.direct_dropped', { interface: this.#o.interfaceName, link: link.idHex, reason: m.ok ? 'for another destination' : m.reason });
      return;
    }
    this.#o.counters.messages_direct_in++;
    void acceptMessage(this.#o.inbound, m.message, { hops: arrival.hops, meta: { ...link.meta }, method: arrival.method, prove: arrival.prove });
  }

  /** A DATA packet on a link in context NONE. */
  onLinkData(link: LinkSession, plaintext: Uint8Array, packet: Packet): void {
    this.onMessage(link, plaintext, { hops: packet.hops, method: 'direct', prove: () => this.#o.links.prove(link, packet) });
  }

  /** An initiator identified on its link: its key lets us check its messages, and the link can
   *  carry our answers back (LXMF's backchannel, LXMRouter.delivery_remote_identified). */
  onIdentified(link: LinkSession, identity: PublicIdentity): void {
    const address = link.peerAddress!;
    if (this.#o.peers.get(address)) return;
    this.#o.peers.remember({ address, identity, displayName: null, stampCost: null, ratchet: null, via: null, hops: link.hops, lastAnnounceMs: 0 });
  }

  /** Delivers a packed message over a link to `peer`: the active one (ours, or its owner's
   *  identified backchannel) or a new one. */
  async send(peer: LxmfPeer, packed: Uint8Array): Promise<SendResult> {
    const o = this.#o;
    let link = o.links.activeTo(peer.address);
    if (!link) {
      const opened = await o.links.open(peer);
      if (typeof opened === 'string') return { ok: false, retryable: true, error: `ERR_LXMF_LINK: no link to ${peer.address}: ${opened}` };
      link = opened;
    }
    let r: { ok: true } | { ok: false; error: string };
    let method: 'direct' | 'resource';
    if (packed.length <= LINK_MDU) {
      method = 'direct';
      r = await o.links.sendProven(link, packed, o.proofTimeoutMs);
    } else if (o.resources && packed.length <= o.resources.maxBytes) {
      method = 'resource';
      r = await o.resources.send(link, packed);
    } else {
      return { ok: false, retryable: false, error: `ERR_LXMF_TOO_LARGE: the packed message is ${packed.length} bytes, more than the ${this.maxPackedBytes} bytes a link delivery carries` };
    }
    if (!r.ok) return { ok: false, retryable: true, error: `ERR_LXMF_LINK: ${method === 'resource' ? 'the resource' : 'the link packet'} to ${peer.address} did not complete: ${r.error}` };
    o.counters.messages_direct_out++;
    // As LXMF does after a DIRECT delivery on a link it opened: identify, so the peer can answer
    // over the same link.
    if (link.initiator && !identifiedLinks.has(link)) {
      identifiedLinks.add(link);
      void o.links.identify(link);
    }
    return { ok: true, meta: { proof: 'received', method, link: link.idHex, to_name: peer.displayName } };
  }
}

const identifiedLinks = new WeakSet<LinkSession>();
