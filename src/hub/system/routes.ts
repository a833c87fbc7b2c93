import { z } from 'zod';
import type { MetricsRegistry } from '../../lib/metrics.ts';
import type { Route } from '../../http/route.ts';
import { systemRoutes } from '../../http/system-routes.ts';
import type { HubStore } from '../store/store.ts';

export interface HubSystemDeps {
  store: HubStore;
  metrics: MetricsRegistry;
  startedAt: number;
  now: () => number;
  openapi: () => unknown;
  mqttState: () => 'connected' | 'disconnected' | 'off';
}

export function hubSystemRoutes(deps: HubSystemDeps): Route[] {
  return systemRoutes({
    ...deps,
    what: 'hub',
    checkDb: () => deps.store.ping(),
    extra: { shape: { mqtt: z.enum(['connected', 'disconnected', 'off']) }, values: () => ({ mqtt: deps.mqttState() }) },
  });
}
