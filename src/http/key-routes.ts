import { z } from 'zod';
import { CreateKeyRequest, KeyCreated, KeyInfo, type KeyManager } from '../auth/keys.ts';
import { OWNER, route, type Route } from './route.ts';

// The key management routes (docs/api.md 4.1), shared by the bridge and the hub.

const KeyParams = z.object({ id: z.string().min(1).max(100) });
const KeyList = z.object({ items: z.array(KeyInfo) });

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
