import type { DatabaseSync } from 'node:sqlite';
import { z } from 'zod';
import type { MetricsRegistry } from '../../http/metrics.ts';
import { ANY_KEY, HANDLED, Reply, route, type Route } from '../../http/route.ts';
import { VERSION } from '../../lib/version.ts';

const Health = z.object({
  status: z.enum(['ok', 'unavailable']),
  version: z.string(),
  uptime_s: z.number().describe('Seconds since the process started'),
  db: z.string().describe('"ok", or what went wrong reading the database'),
});

export interface SystemDeps {
  db: DatabaseSync;
  metrics: MetricsRegistry;
  startedAt: number;
  now: () => number;
  openapi: () => unknown;
}

export function systemRoutes(deps: SystemDeps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/health',
      summary: 'Liveness and database check; needs no key',
      tags: ['system'],
      roles: 'public',
      response: Health,
      responseName: 'Health',
      errors: [503],
      handler: () => {
        const uptime_s = Math.round((deps.now() - deps.startedAt) / 100) / 10;
        try {
          deps.db.prepare('SELECT version FROM schema_version').get();
          return { status: 'ok', version: VERSION, uptime_s, db: 'ok' };
        } catch (error) {
          return new Reply(503, { status: 'unavailable', version: VERSION, uptime_s, db: (error as Error).message });
        }
      },
    }),
    route({
      method: 'GET',
      path: '/api/openapi.json',
      summary: 'This API described as OpenAPI 3.1 (the "Bridge API"); needs no key',
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
