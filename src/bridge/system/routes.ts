import type { DatabaseSync } from 'node:sqlite';
import type { MetricsRegistry } from '../../lib/metrics.ts';
import type { Route } from '../../http/route.ts';
import { systemRoutes as sharedSystemRoutes } from '../../http/system-routes.ts';

export interface SystemDeps {
  db: DatabaseSync;
  metrics: MetricsRegistry;
  startedAt: number;
  now: () => number;
  openapi: () => unknown;
}

export function systemRoutes(deps: SystemDeps): Route[] {
  return sharedSystemRoutes({
    ...deps,
    what: 'bridge (the "Bridge API")',
    checkDb: () => {
      deps.db.prepare('SELECT version FROM schema_version').get();
    },
  });
}
