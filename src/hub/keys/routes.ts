import { z } from 'zod';
import { route, type Route, type Principal } from '../../http/route.ts';
import type { HubKeyService } from './service.ts';
import { KeyCreated } from '../../auth/keys.ts';
import { keyRoutes } from '../../http/key-routes.ts';

// docs/api.md section 4.1, plus the setup route the web page uses for the very first owner key.

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
    ...keyRoutes(
      {
        create: (principal, label, role) => keys.create(tenantOf(principal), label, role),
        list: (principal) => keys.list(tenantOf(principal)),
        delete: (principal, id) => keys.delete(tenantOf(principal), id),
      },
      " in the caller's tenant",
    ),
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
