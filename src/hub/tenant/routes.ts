import { z } from 'zod';
import { ADMIN, HANDLED, OWNER, route, type Route } from '../../http/route.ts';
import type { Clock } from '../../lib/clock.ts';
import { TENANT_RESTORE_ROUTE } from '../keys/service.ts';
import { tenantOf } from '../keys/routes.ts';
import type { HubStore } from '../store/store.ts';
import { streamTenantExport } from './export.ts';
import type { TenantService } from './service.ts';

const Deletion = z.object({
  id: z.string(),
  deleted_at: z.iso.datetime(),
  purge_after: z.iso.datetime().describe('From this moment the purge job removes every row of the tenant for good'),
});
const Restored = z.object({ id: z.string(), restored: z.boolean().describe('false when the tenant was not marked for deletion') });

export function tenantRoutes(deps: { tenants: TenantService; store: HubStore; clock: Clock }): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/tenant/export',
      summary: 'Everything the hub holds for the tenant: a ZIP with one JSON file per table, secrets withheld',
      tags: ['tenant'],
      roles: ADMIN,
      produces: 'application/zip',
      handler: async ({ principal, res }) => {
        await streamTenantExport(deps.store, tenantOf(principal), res, new Date(deps.clock.now()));
        return HANDLED;
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/tenant',
      summary: 'Mark the tenant for deletion: keys stop working now, data is purged after 30 days',
      tags: ['tenant'],
      roles: OWNER,
      response: Deletion,
      responseName: 'TenantDeletion',
      status: 202,
      handler: ({ principal }) => deps.tenants.markDeleted(tenantOf(principal)),
    }),
    route({
      method: TENANT_RESTORE_ROUTE.method,
      path: TENANT_RESTORE_ROUTE.path,
      summary: 'Undo DELETE /api/tenant before the purge; an owner key of the deleted tenant works for this call only',
      tags: ['tenant'],
      roles: OWNER,
      response: Restored,
      responseName: 'TenantRestored',
      handler: ({ principal }) => deps.tenants.restore(tenantOf(principal)),
    }),
  ];
}
