import { z } from 'zod';
import type { MetricsRegistry } from '../../http/metrics.ts';
import { ANY_KEY, HANDLED, Reply, route, type Route } from '../../http/route.ts';
import { VERSION } from '../../lib/version.ts';
import type { HubStore } from '../store/store.ts';

const Health = z.object({
  status: z.enum(['ok', 'unavailable']),
  version: z.string(),
  uptime_s: z.number(),
  db: z.string().describe('"ok", or what went wrong reading the database'),
  mqtt: z.enum(['connected', 'disconnected', 'off']),
});

export interface HubSystemDeps {
  store: HubStore;
  metrics: MetricsRegistry;
  startedAt: number;
  now: () => number;
  openapi: () => unknown;
  mqttState: () => 'connected' | 'disconnected' | 'off';
}

export function hubSystemRoutes(deps: HubSystemDeps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/health',
      summary: 'Liveness, database and MQTT check; needs no key',
      tags: ['system'],
      roles: 'public',
      response: Health,
      responseName: 'Health',
      errors: [503],
      handler: async () => {
        const base = { version: VERSION, uptime_s: Math.round((deps.now() - deps.startedAt) / 100) / 10, mqtt: deps.mqttState() };
        try {
          await deps.store.ping();
          return { status: 'ok', ...base, db: 'ok' };
        } catch (error) {
          return new Reply(503, { status: 'unavailable', ...base, db: (error as Error).message });
        }
      },
    }),
    route({
      method: 'GET',
      path: '/api/openapi.json',
      summary: 'The hub API as OpenAPI 3.1; needs no key',
      tags: ['system'],
      roles: 'public',
      handler: () => deps.openapi(),
    }),
    route({
      method: 'GET',
      path: '/metrics',
      summary: 'Prometheus metrics (text format 0.0.4); any valid key',
      tags: ['system'],
      roles: ANY_KEY,
      produces: 'text/plain',
      handler: ({ res }) => {
        const text = deps.metrics.render();
        res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
        return HANDLED;
      },
    }),
  ];
}
