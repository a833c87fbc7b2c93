import { z } from 'zod';
import type { Principal, Role } from './roles.ts';

// API keys as the bridge and the hub both see them: one definition of the request and response
// shapes, whatever store keeps the keys. Each side implements KeyManager, scoped as it needs
// (the hub by the caller's tenant); http/key-routes.ts serves it.

export const KeyRole = z.enum(['owner', 'admin', 'viewer']).describe('owner: everything; admin: everything but key management; viewer: read-only');

export const CreateKeyRequest = z.strictObject({
  label: z.string().trim().min(1).max(200).describe('Free text to recognise the key by'),
  role: KeyRole,
});

export const KeyCreated = z.object({
  id: z.string(),
  label: z.string(),
  key: z.string().describe('The secret. Shown only in this response; store it now.'),
  role: KeyRole,
  created_at: z.iso.datetime(),
});

export const KeyInfo = z.object({ id: z.string(), label: z.string(), role: KeyRole, created_at: z.iso.datetime(), last_used_at: z.iso.datetime().nullable() });

/** A key as listed: never its secret. */
export type PublicKey = z.infer<typeof KeyInfo>;
/** A key as created: the secret, shown this once. */
export type CreatedKey = z.infer<typeof KeyCreated>;

/**
 * last_used_at is a hint for operators, not an audit trail: written at most once a minute per
 * key, because writing it on every request would turn every GET into a database write.
 */
export class TouchThrottle {
  static readonly INTERVAL_MS = 60_000;
  readonly #last = new Map<string, number>();
  /** True when the key's last_used_at should be written now (and remembers that it was). */
  due(keyId: string, nowMs: number): boolean {
    if (nowMs - (this.#last.get(keyId) ?? 0) <= TouchThrottle.INTERVAL_MS) return false;
    this.#last.set(keyId, nowMs);
    return true;
  }
  forget(keyId: string): void {
    this.#last.delete(keyId);
  }
}

export interface KeyManager {
  create(principal: Principal | null, label: string, role: Role): unknown | Promise<unknown>;
  list(principal: Principal | null): unknown[] | Promise<unknown[]>;
  delete(principal: Principal | null, id: string): void | Promise<void>;
}

