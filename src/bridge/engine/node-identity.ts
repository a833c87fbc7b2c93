import type { DatabaseSync } from 'node:sqlite';
import { StatementCache } from '../../db/statement-cache.ts';
import type { NodeAddresses } from './deciders.ts';
import { nodeKey } from './node-key.ts';

// Which node an address names now (docs/decisions.md, "Nodes followed by their key"). A
// node's number can change while the node stays the same: Meshtastic firmware 2.8 numbers a
// node by the CRC-32 of its X25519 public key, so a node upgraded from 2.7 comes back under a
// new number with its key and names (docs/protocols/meshtastic.md 2.10). The node table keeps
// each node's key; when a known key shows up under another id the node store moves the row
// (node-store.ts) and records the old id here. From then on every address that named the old
// id (a contact, a rule's from/to or destination, a senders-policy entry, a held delivery)
// reaches the node at its new one: the pipeline, the rules and the senders policy read
// addresses through current(). A contact may also name a node by its public key.
//
// The aliases are few (one per renumbered node) and read for every address of every message,
// so they are kept in memory, loaded once; this class writes every change of them.

/** A Meshtastic public key as the API writes it: 32 bytes in base64 (as the apps show it). */
const PUBLIC_KEY = /^[A-Za-z0-9+/]{43}=$/;

/** Read for every address of every rule: anything shorter than a key is answered at once. */
export const isPublicKeyAddress = (address: string): boolean => address.length >= 44 && PUBLIC_KEY.test(address.trim());

/** How a node id changed. */
export interface Renumbering {
  network: string;
  former_id: string;
  node_id: string;
  public_key: string;
  at: string;
}

export class NodeIdentity implements NodeAddresses {
  readonly #db: StatementCache;
  /** former id (nodeKey form) -> current id */
  #aliases: Map<string, string> | undefined;

  constructor(db: DatabaseSync) {
    this.#db = new StatementCache(db);
  }

  #map(): Map<string, string> {
    if (this.#aliases) return this.#aliases;
    const rows = this.#db.prepare('SELECT former_id, node_id FROM node_aliases').all() as Array<{ former_id: string; node_id: string }>;
    return (this.#aliases = new Map(rows.map((r) => [r.former_id, r.node_id])));
  }

  current(address: string): string | null {
    if (isPublicKeyAddress(address)) {
      const row = this.#db.prepare('SELECT node_id FROM nodes WHERE public_key = ? ORDER BY last_heard_at DESC LIMIT 1').get(address.trim()) as { node_id: string } | undefined;
      return row?.node_id ?? null;
    }
    const aliases = this.#map();
    if (aliases.size === 0) return address;
    return aliases.get(nodeKey(address)) ?? address;
  }

  /** The ids a node had, oldest change first. */
  formerIds(nodeId: string): Array<{ id: string; changed_at: string }> {
    return (this.#db.prepare('SELECT former_id AS id, changed_at FROM node_aliases WHERE node_id = ? ORDER BY changed_at, former_id').all(nodeId) as Array<{ id: string; changed_at: string }>).map((r) => ({ ...r }));
  }

  /** The current id of the node that had `id` before; undefined when `id` is no former id. */
  aliasOf(id: string): string | undefined {
    return this.#map().get(id);
  }

  /** Inside the node store's write: `former_id` is now `node_id`. Earlier ids of the node follow
   *  it (the chain stays flat), and the new id stops being anyone's former id. */
  record(r: Renumbering): void {
    this.#db.prepare('DELETE FROM node_aliases WHERE former_id = ?').run(r.node_id);
    this.#db.prepare('UPDATE node_aliases SET node_id = ? WHERE node_id = ?').run(r.node_id, r.former_id);
    this.#db
      .prepare(
        `INSERT INTO node_aliases (former_id, node_id, network, public_key, changed_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (former_id) DO UPDATE SET node_id = excluded.node_id, public_key = excluded.public_key, changed_at = excluded.changed_at`,
      )
      .run(r.former_id, r.node_id, r.network, r.public_key, r.at);
    this.#aliases = undefined;
  }

  /** The number `id` is now claimed by a node with another key: it no longer names the node
   *  that had it (docs/meshtastic.md, "Two nodes, one number"). */
  forget(id: string): void {
    if (this.#db.prepare('DELETE FROM node_aliases WHERE former_id = ?').run(id).changes) this.#aliases = undefined;
  }
}
