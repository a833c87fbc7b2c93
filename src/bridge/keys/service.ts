import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hashesEqual, keyLookup, mintKey } from '../../auth/secrets.ts';
import { type CreatedKey, type PublicKey, TouchThrottle } from '../../auth/keys.ts';
import type { Principal, Role } from '../../auth/roles.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { OWNER_KEY_FILE, PRIVATE_FILE_MODE } from '../data-files.ts';
import { newId } from '../../lib/ids.ts';
import type { KeyRow, KeyStore } from './store.ts';

export const BRIDGE_KEY_PREFIX = 'fbb_';

export type { CreatedKey, PublicKey };

export class KeyService {
  readonly #store: KeyStore;
  readonly #clock: Clock;
  readonly #touch = new TouchThrottle();

  constructor(store: KeyStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  create(label: string, role: Role): CreatedKey {
    const minted = mintKey(BRIDGE_KEY_PREFIX);
    const now = this.#clock.now();
    const row: KeyRow = {
      id: newId('key', now),
      label,
      role,
      lookup: minted.lookup,
      hash: minted.hash,
      created_at: new Date(now).toISOString(),
      last_used_at: null,
    };
    this.#store.insert(row);
    return { id: row.id, label, key: minted.key, role, created_at: row.created_at };
  }

  list(): PublicKey[] {
    return this.#store.list().map(toPublic);
  }

  delete(id: string): void {
    const row = this.#store.get(id);
    if (!row) throw notFound('key', id);
    if (row.role === 'owner' && this.#store.count('owner') <= 1) {
      throw new AppError('ERR_LAST_OWNER_KEY', 409, 'this is the last owner key; create another owner key before deleting it');
    }
    this.#store.delete(id);
    this.#touch.forget(id);
  }

  authenticate(token: string): Principal | null {
    const lookup = keyLookup(BRIDGE_KEY_PREFIX, token);
    if (!lookup) return null;
    const row = this.#store.byLookup(lookup);
    if (!row || !hashesEqual(token, row.hash)) return null;
    const now = this.#clock.now();
    if (this.#touch.due(row.id, now)) this.#store.touch(row.id, new Date(now).toISOString());
    return { keyId: row.id, role: row.role };
  }

  /**
   * First start: with no key at all, mint an owner key into owner.key beside the database
   * (mode 0600). Returns the file's path, or null when keys already exist. The caller logs the
   * path, never the value.
   */
  ensureFirstOwnerKey(dbPath: string): string | null {
    if (this.#store.count() > 0) return null;
    const created = this.create('first owner key (owner.key)', 'owner');
    const file = join(dbPath === ':memory:' ? process.cwd() : dirname(dbPath), OWNER_KEY_FILE);
    writeFileSync(file, created.key + '\n', { mode: PRIVATE_FILE_MODE });
    return file;
  }
}

function toPublic(row: KeyRow): PublicKey {
  return { id: row.id, label: row.label, role: row.role, created_at: row.created_at, last_used_at: row.last_used_at };
}
