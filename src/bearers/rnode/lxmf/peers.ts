import type { DriverState } from '../../bearer.ts';
import { publicIdentity, type PublicIdentity } from '../reticulum/identity.ts';

// The LXMF peers an endpoint has heard announce (docs/reticulum.md, "Peers"): their public
// keys let us check their signatures and encrypt to them. Kept in the interface's driver
// state so the bridge can answer a peer after a restart without waiting for its next
// announce. A row is written only when what it holds changes (a new key, ratchet, name or path),
// never for a repeated announce: an announce every few minutes must not wear the SD card.

export interface LxmfPeer {
  /** The peer's lxmf.delivery destination hash, 32 lower-case hex digits. */
  address: string;
  identity: PublicIdentity;
  displayName: string | null;
  /** The proof-of-work stamp cost it asks of messages to it (its announce); null for none. */
  stampCost: number | null;
  /** The X25519 ratchet key of its latest announce, when it announces one. */
  ratchet: Uint8Array | null;
  /** The transport node its announce came through (we send through it), null when heard direct. */
  via: Uint8Array | null;
  /** Hops the latest announce travelled. */
  hops: number;
  /** When we last heard it announce (epoch ms); 0 when it was only loaded from storage. */
  lastAnnounceMs: number;
}

interface StoredPeer {
  public_key: string;
  ratchet: string | null;
  display_name: string | null;
  stamp_cost: number | null;
  via: string | null;
}

const KEY_PREFIX = 'lxmf-peer:';
/** Peers kept in memory; more are read back from the driver state when needed. */
const MEMORY_LIMIT = 1000;

export class PeerBook {
  readonly #state: DriverState;
  readonly #peers = new Map<string, LxmfPeer>();

  constructor(state: DriverState) {
    this.#state = state;
  }

  get size(): number {
    return this.#peers.size;
  }

  /** A peer heard this session or stored before; null when we never heard it. */
  get(address: string): LxmfPeer | null {
    const known = this.#peers.get(address);
    if (known) return known;
    const stored = this.#load(address);
    if (stored) this.#keep(stored);
    return stored;
  }

  /** Remembers an announce; answers whether anything stored changed. */
  remember(peer: LxmfPeer): boolean {
    const before = this.get(peer.address);
    this.#keep(peer);
    const same = before !== null && hex(before.identity.publicKey) === hex(peer.identity.publicKey) && hexOrNull(before.ratchet) === hexOrNull(peer.ratchet) && before.displayName === peer.displayName && before.stampCost === peer.stampCost && hexOrNull(before.via) === hexOrNull(peer.via);
    if (same) return false;
    const stored: StoredPeer = { public_key: hex(peer.identity.publicKey), ratchet: hexOrNull(peer.ratchet), display_name: peer.displayName, stamp_cost: peer.stampCost, via: hexOrNull(peer.via) };
    this.#state.set(KEY_PREFIX + peer.address, JSON.stringify(stored));
    return true;
  }

  #keep(peer: LxmfPeer): void {
    this.#peers.delete(peer.address);
    this.#peers.set(peer.address, peer);
    // A Map iterates in insertion order: the first key is the one heard longest ago.
    if (this.#peers.size > MEMORY_LIMIT) this.#peers.delete(this.#peers.keys().next().value!);
  }

  #load(address: string): LxmfPeer | null {
    const raw = this.#state.get(KEY_PREFIX + address);
    if (raw === null) return null;
    try {
      const s = JSON.parse(raw) as StoredPeer;
      const identity = publicIdentity(Buffer.from(s.public_key, 'hex'));
      if (!identity) return null;
      return { address, identity, displayName: s.display_name, stampCost: s.stamp_cost ?? null, ratchet: s.ratchet ? Buffer.from(s.ratchet, 'hex') : null, via: s.via ? Buffer.from(s.via, 'hex') : null, hops: 0, lastAnnounceMs: 0 };
    } catch {
      return null;
    }
  }
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const hexOrNull = (b: Uint8Array | null) => (b ? hex(b) : null);
