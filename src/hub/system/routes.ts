import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { OWNER, type Route } from '../../http/route.ts';
import { systemRoutes, type SystemRouteBasics } from '../../http/system-routes.ts';
import { tenantOf } from '../keys/routes.ts';
import { DEFAULT_TENANT } from '../keys/service.ts';
import type { HubStore } from '../store/store.ts';

export interface HubSystemDeps extends SystemRouteBasics {
  store: HubStore;
  mqttState: () => 'connected' | 'disconnected' | 'off';
}

/**
 * The tenant of the hub's operator: "default", where the setup token's first owner key goes
 * and which every start creates. Hosted customers get tenants of their own (create-key --tenant).
 */
export const OPERATOR_TENANT = DEFAULT_TENANT;

export function hubSystemRoutes(deps: HubSystemDeps): Route[] {
  const routes = systemRoutes({
    ...deps,
    what: 'hub',
    checkDb: () => deps.store.ping(),
    extra: { shape: { mqtt: z.enum(['connected', 'disconnected', 'off']) }, values: () => ({ mqtt: deps.mqttState() }) },
  });
  // The hub's metrics are the process's (every tenant's ingest, HTTP requests
  // and refusals together), so a customer's key must not read them: /metrics needs an owner
  // key of the operator's tenant (docs/hub.md, "Keys and roles").
  return routes.map((r) => (r.path === '/metrics' ? operatorOnly(r) : r));
}

function operatorOnly(r: Route): Route {
  return {
    ...r,
    summary: `Prometheus metrics of the whole hub (text format 0.0.4); an owner key of the operator's tenant "${OPERATOR_TENANT}"`,
    roles: OWNER,
    errors: [...(r.errors ?? []), 403],
    handler: (ctx) => {
      if (tenantOf(ctx.principal) !== OPERATOR_TENANT) {
        throw new AppError('ERR_FORBIDDEN', 403, `GET /metrics counts every tenant of the hub: only an owner key of the operator's tenant '${OPERATOR_TENANT}' may read it; this key's tenant is '${tenantOf(ctx.principal)}'`);
      }
      return r.handler(ctx);
    },
  };
}
