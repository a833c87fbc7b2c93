import { randomBytes } from 'node:crypto';
import { hashesEqual, hashKey, keyLookup, mintKey } from '../../auth/secrets.ts';
import { type CreatedKey, type PublicKey, TouchThrottle } from '../../auth/keys.ts';
import type { Principal } from '../../auth/roles.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { HubRole, HubStore } from '../store/store.ts';

// Hub API keys (docs/api.md sections 2.1, 4.1, 5): "fbh_" keys stored only as SHA-256 hashes, each
// belonging to one tenant; the secret is returned once, at creation. A key of a tenant marked
// for deletion stops working at once, except for an owner key calling the restore route.

export const HUB_KEY_PREFIX = 'fbh_';
export const DEFAULT_TENANT = 'default';
export const TENANT_RESTORE_ROUTE = { method: 'POST', path: '/api/tenant/restore' } as const;
const SETUP_SETTING = 'setup_token_hash';

export class HubKeyService {
  readonly #store: HubStore;
  readonly #clock: Clock;
  readonly #touch = new TouchThrottle();

  constructor(store: HubStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  /** Creates a key in the tenant, creating the tenant if it does not exist yet. */
  async create(tenantId: string, label: string, role: HubRole): Promise<CreatedKey> {
    const now = this.#clock.now();
    const at = new Date(now).toISOString();
    await this.#store.ensureTenant(tenantId, at);
    const minted = mintKey(HUB_KEY_PREFIX);
    const id = newId('key', now);
    await this.#store.insertKey({ id, tenant_id: tenantId, label, role, key_lookup: minted.lookup, key_hash: minted.hash, created_at: at, last_used_at: null });
    return { id, label, key: minted.key, role, created_at: at };
  }

  async list(tenantId: string): Promise<PublicKey[]> {
    return (await this.#store.listKeys(tenantId)).map((k) => ({ id: k.id, label: k.label, role: k.role, created_at: k.created_at, last_used_at: k.last_used_at }));
  }

  async delete(tenantId: string, id: string): Promise<void> {
    // Check and delete are one step in the store (one transaction holding the tenant's row):
    // read here and deleted there, two owners deleting each other's keys at the same moment
    // could both see two owners and leave none.
    const outcome = await this.#store.deleteKeyKeepingAnOwner(tenantId, id);
    // Another tenant's key id answers exactly like a missing one: ids are not secrets, but
    // which ids exist elsewhere is not this tenant's business.
    if (outcome === 'missing') throw notFound('key', id);
    if (outcome === 'last_owner') {
      throw new AppError('ERR_LAST_OWNER_KEY', 409, 'this is the last owner key of the tenant; create another owner key before deleting it');
    }
    this.#touch.forget(id);
  }

  async authenticate(token: string, route: { method: string; path: string }): Promise<Principal | null> {
    const lookup = keyLookup(HUB_KEY_PREFIX, token);
    if (!lookup) return null;
    const row = await this.#store.keyByLookup(lookup);
    if (!row || !hashesEqual(token, row.key_hash)) return null;
    if (row.tenant_deleted_at !== null) {
      const restoring = route.method === TENANT_RESTORE_ROUTE.method && route.path === TENANT_RESTORE_ROUTE.path && row.role === 'owner';
      if (!restoring) return null;
    }
    const now = this.#clock.now();
    if (this.#touch.due(row.id, now)) await this.#store.touchKey(row.id, new Date(now).toISOString());
    return { keyId: row.id, role: row.role, tenantId: row.tenant_id };
  }

  /**
   * While the hub has no key at all, makes a new one-time setup token (replacing any earlier
   * one, of which only the hash was kept) and returns it for the start-up log line; null once
   * a key exists. The web page trades it for the first owner key of the default tenant.
   */
  async issueSetupToken(): Promise<string | null> {
    if ((await this.#store.countKeys()) > 0) {
      await this.#store.takeSetting(SETUP_SETTING);
      return null;
    }
    const token = 'fbs_' + randomBytes(24).toString('base64url');
    await this.#store.putSetting(SETUP_SETTING, hashKey(token));
    return token;
  }

  /** Whether the web page should offer the setup form. */
  async setupOpen(): Promise<boolean> {
    return (await this.#store.countKeys()) === 0 && (await this.#store.getSetting(SETUP_SETTING)) !== undefined;
  }

  /** Trades the setup token for the first owner key; the token works once. */
  async redeemSetupToken(token: string, label: string): Promise<CreatedKey> {
    const stored = await this.#store.getSetting(SETUP_SETTING);
    if (stored === undefined || !hashesEqual(token, stored)) {
      throw new AppError('ERR_SETUP_TOKEN', 403, 'the setup token is wrong or has been used; the hub prints a new one at start while it has no key, or use "fieldbridge hub create-key"');
    }
    // Taking the setting is the atomic step: of two requests with the right token, one wins.
    if ((await this.#store.takeSetting(SETUP_SETTING)) !== stored || (await this.#store.countKeys()) > 0) {
      throw new AppError('ERR_SETUP_TOKEN', 403, 'the setup token has already been used');
    }
    return this.create(DEFAULT_TENANT, label, 'owner');
  }
}

