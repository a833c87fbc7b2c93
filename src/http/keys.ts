import { z } from 'zod';
import { OWNER, route, type Principal, type Role, type Route } from './route.ts';

// The key management routes of SPEC 4.1, shared by the bridge and the hub: one definition of
// the request and response shapes, whatever store keeps the keys. Each side passes a
// KeyManager that scopes the calls (the hub by the caller's tenant).

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
const KeyList = z.object({ items: z.array(KeyInfo) });

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
const KeyParams = z.object({ id: z.string().min(1).max(100) });

export interface KeyManager {
  create(principal: Principal | null, label: string, role: Role): unknown | Promise<unknown>;
  list(principal: Principal | null): unknown[] | Promise<unknown[]>;
  delete(principal: Principal | null, id: string): void | Promise<void>;
}

export function keyRoutes(keys: KeyManager, scope: string): Route[] {
  return [
    route({
      method: 'POST', path: '/api/auth/keys', summary: `Create an API key${scope}; the secret is returned only here`, tags: ['keys'], roles: OWNER,
      body: CreateKeyRequest, bodyName: 'CreateKeyRequest', response: KeyCreated, responseName: 'KeyCreated', status: 201,
      handler: ({ body, principal }) => keys.create(principal, body.label, body.role),
    }),
    route({
      method: 'GET', path: '/api/auth/keys', summary: `List the API keys${scope} (never their secrets); owner only`, tags: ['keys'], roles: OWNER,
      response: KeyList, responseName: 'KeyList',
      handler: async ({ principal }) => ({ items: await keys.list(principal) }),
    }),
    route({
      method: 'DELETE', path: '/api/auth/keys/{id}', summary: 'Delete an API key; it stops working at once', tags: ['keys'], roles: OWNER,
      params: KeyParams, status: 204, errors: [409],
      handler: async ({ params, principal }) => {
        await keys.delete(principal, params.id);
        return undefined;
      },
    }),
  ];
}
