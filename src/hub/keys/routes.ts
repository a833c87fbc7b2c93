import { z } from 'zod';
import { OWNER, route, type Route, type Principal } from '../../http/route.ts';
import type { HubKeyService } from './service.ts';

// SPEC section 4.1, plus the setup route the web page uses for the very first owner key.

const Role = z.enum(['owner', 'admin', 'viewer']).describe('owner: everything; admin: everything but key management and tenant deletion; viewer: read-only');

const CreateKeyRequest = z.strictObject({
  label: z.string().trim().min(1).max(200).describe('Free text to recognise the key by'),
  role: Role,
});

const KeyCreated = z.object({
  id: z.string(),
  label: z.string(),
  key: z.string().describe('The secret, prefixed fbh_. Shown only in this response; store it now.'),
  role: Role,
  created_at: z.iso.datetime(),
});

const KeyInfo = z.object({ id: z.string(), label: z.string(), role: Role, created_at: z.iso.datetime(), last_used_at: z.iso.datetime().nullable() });
const KeyList = z.object({ items: z.array(KeyInfo) });
const KeyParams = z.object({ id: z.string().min(1).max(100) });

const SetupRequest = z.strictObject({
  setup_token: z.string().min(1).max(200).describe('The one-time token from the hub log line "hub_setup_token"'),
  label: z.string().trim().min(1).max(200),
});

/** The tenant of the calling key; every authenticated hub route has one. */
export function tenantOf(principal: Principal | null): string {
  if (!principal?.tenantId) throw new Error('hub route called without a tenant principal');
  return principal.tenantId;
}

export function hubKeyRoutes(keys: HubKeyService): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/auth/keys',
      summary: 'Create an API key in the caller\'s tenant; the secret is returned only here',
      tags: ['keys'],
      roles: OWNER,
      body: CreateKeyRequest,
      bodyName: 'CreateKeyRequest',
      response: KeyCreated,
      responseName: 'KeyCreated',
      status: 201,
      handler: ({ body, principal }) => keys.create(tenantOf(principal), body.label, body.role),
    }),
    route({
      method: 'GET',
      path: '/api/auth/keys',
      summary: 'List the tenant\'s API keys (never their secrets); owner only',
      tags: ['keys'],
      roles: OWNER,
      response: KeyList,
      responseName: 'KeyList',
      handler: async ({ principal }) => ({ items: await keys.list(tenantOf(principal)) }),
    }),
    route({
      method: 'DELETE',
      path: '/api/auth/keys/{id}',
      summary: 'Delete an API key; it stops working at once',
      tags: ['keys'],
      roles: OWNER,
      params: KeyParams,
      status: 204,
      errors: [404, 409],
      handler: async ({ params, principal }) => {
        await keys.delete(tenantOf(principal), params.id);
        return undefined;
      },
    }),
    route({
      method: 'POST',
      path: '/api/setup',
      summary: 'Trade the one-time setup token for the first owner key (tenant "default"); works once, while the hub has no key',
      tags: ['keys'],
      roles: 'public',
      body: SetupRequest,
      bodyName: 'SetupRequest',
      response: KeyCreated,
      responseName: 'KeyCreated',
      status: 201,
      errors: [403],
      handler: ({ body }) => keys.redeemSetupToken(body.setup_token, body.label),
    }),
  ];
}
