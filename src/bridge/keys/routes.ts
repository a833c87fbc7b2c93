import { z } from 'zod';
import { OWNER, route, type Route } from '../../http/route.ts';
import type { KeyService } from './service.ts';

const Role = z.enum(['owner', 'admin', 'viewer']).describe('owner: everything; admin: everything but key management; viewer: read-only');

export const CreateKeyRequest = z.strictObject({
  label: z.string().trim().min(1).max(200).describe('Free text to recognise the key by'),
  role: Role,
});

const KeyCreated = z.object({
  id: z.string(),
  label: z.string(),
  key: z.string().describe('The secret. Shown only in this response; store it now.'),
  role: Role,
  created_at: z.iso.datetime(),
});

const KeyInfo = z.object({
  id: z.string(),
  label: z.string(),
  role: Role,
  created_at: z.iso.datetime(),
  last_used_at: z.iso.datetime().nullable(),
});

const KeyList = z.object({ items: z.array(KeyInfo) });
const KeyParams = z.object({ id: z.string().min(1) });

export function keyRoutes(keys: KeyService): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/auth/keys',
      summary: 'Create an API key; the secret is returned only here',
      tags: ['keys'],
      roles: OWNER,
      body: CreateKeyRequest,
      bodyName: 'CreateKeyRequest',
      response: KeyCreated,
      responseName: 'KeyCreated',
      status: 201,
      handler: ({ body }) => keys.create(body.label, body.role),
    }),
    route({
      method: 'GET',
      path: '/api/auth/keys',
      summary: 'List API keys (never their secrets)',
      tags: ['keys'],
      roles: OWNER,
      response: KeyList,
      responseName: 'KeyList',
      handler: () => ({ items: keys.list() }),
    }),
    route({
      method: 'DELETE',
      path: '/api/auth/keys/{id}',
      summary: 'Delete an API key; it stops working at once',
      tags: ['keys'],
      roles: OWNER,
      params: KeyParams,
      status: 204,
      errors: [409],
      handler: ({ params }) => {
        keys.delete(params.id);
        return undefined;
      },
    }),
  ];
}
