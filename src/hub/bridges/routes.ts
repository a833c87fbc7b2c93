import { z } from 'zod';
import { decodeCursor, PageQuery, pageReply, pageSchema } from '../../http/paging.ts';
import { ADMIN, route, type Route } from '../../http/route.ts';
import { tenantOf } from '../keys/routes.ts';
import type { BridgeEnrollments } from './service.ts';

// POST/GET/DELETE /api/bridges (docs/hub.md, "Enrollment"): the tenant's
// enrolled bridges. Owners and admins only: an enrollment is a credential.

const CreateBridge = z.strictObject({
  name: z.string().trim().min(1).max(200).describe('What the operator calls the bridge (a place, a vehicle); not used on the wire'),
});

const BridgeCreated = z.object({
  id: z.string().describe('The bridge id the hub gave: the bridge learns it in the exchange and publishes under it'),
  name: z.string(),
  token: z.string().describe('The one-time enrollment token (fbe_...): shown only here; give it to the bridge as hub.enrollment_token or SERVICE_HUB_ENROLL_TOKEN'),
  created_at: z.iso.datetime(),
});

const Enrollment = z.object({
  id: z.string(),
  name: z.string(),
  state: z.enum(['waiting', 'enrolled', 'revoked']).describe('waiting: no message signed with a secret of this enrollment has arrived yet; enrolled: one has, and the token is spent'),
  created_at: z.iso.datetime(),
  enrolled_at: z.iso.datetime().nullable().describe('The last exchange of the token for a secret'),
  verified_at: z.iso.datetime().nullable().describe('The first message signed with the secret'),
  revoked_at: z.iso.datetime().nullable(),
});

const IdParams = z.strictObject({ id: z.string().min(1).max(64) });

export function bridgeRoutes(enrollments: BridgeEnrollments): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/bridges',
      summary: 'Enroll a bridge in the caller\'s tenant: its id and a one-time enrollment token, shown only here',
      tags: ['bridges'],
      roles: ADMIN,
      body: CreateBridge,
      bodyName: 'CreateBridge',
      response: BridgeCreated,
      responseName: 'BridgeCreated',
      status: 201,
      handler: ({ principal, body }) => enrollments.create(tenantOf(principal), body.name),
    }),
    route({
      method: 'GET',
      path: '/api/bridges',
      summary: 'The tenant\'s enrolled bridges by id, a page at a time (never their tokens or secrets)',
      tags: ['bridges'],
      roles: ADMIN,
      query: z.strictObject({ ...PageQuery }),
      response: pageSchema(Enrollment),
      responseName: 'EnrollmentPage',
      handler: async (ctx) => {
        const { limit, cursor } = ctx.query;
        const rows = await enrollments.list(tenantOf(ctx.principal), { afterId: decodeCursor(cursor), limit: limit + 1 });
        return pageReply(ctx, rows, limit);
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/bridges/{id}',
      summary: 'Revoke a bridge: its secret is wiped and the hub stores nothing more from it, at once',
      tags: ['bridges'],
      roles: ADMIN,
      params: IdParams,
      status: 204,
      errors: [404],
      handler: async ({ principal, params }) => {
        await enrollments.revoke(tenantOf(principal), params.id);
        return undefined;
      },
    }),
  ];
}
