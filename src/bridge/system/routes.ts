import type { DatabaseSync } from 'node:sqlite';
import type { MetricsRegistry } from '../../lib/metrics.ts';
import type { Route } from '../../http/route.ts';
import { systemRoutes as sharedSystemRoutes } from '../../http/system-routes.ts';
import { DbHealth } from '../../db/health.ts';

export interface SystemDeps {
  db: DatabaseSync;
  metrics: MetricsRegistry;
  startedAt: number;
  now: () => number;
  openapi: () => unknown;
}

export function systemRoutes(deps: SystemDeps): Route[] {
  // Never waits on a lock, at most one check a second (db/health.ts; issue 14).
  const health = new DbHealth(deps.db);
  return sharedSystemRoutes({
    ...deps,
    what: 'bridge (the "Bridge API")',
    checkDb: () => health.status(),
  });
}
