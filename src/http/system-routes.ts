import { z } from 'zod';
import { VERSION } from '../lib/version.ts';
import type { MetricsRegistry } from '../lib/metrics.ts';
import { ANY_KEY, HANDLED, Reply, route, type Route } from './route.ts';

// Health, the OpenAPI document and Prometheus metrics: the same three routes on the bridge
// and the hub, each told how to check its own database and what else to report.

export interface DbCheck {
  db: string;
  detail: string | null;
}

/** What the bridge and the hub hand their system routes alike. */
export interface SystemRouteBasics {
  metrics: MetricsRegistry;
  /** The monotonic clock at start, and now: uptime never follows a wall-clock step. */
  startedAt: number;
  now: () => number;
  openapi: () => unknown;
}

export interface SystemRouteDeps extends SystemRouteBasics {
  what: string;
  /** Throws (or rejects) when the database cannot be read; or returns its state: anything but
   *  db "ok" answers 503 with that state and its detail (the bridge's DbHealth, db/health.ts). */
  checkDb(): void | DbCheck | Promise<void | DbCheck>;
  /** More health fields (the hub adds its MQTT link) and their schema. */
  extra?: { shape: z.ZodRawShape; values(): Record<string, unknown> };
}

export function systemRoutes(deps: SystemRouteDeps): Route[] {
  const Health = z.object({
    status: z.enum(['ok', 'unavailable']),
    version: z.string(),
    uptime_s: z.number().describe('Seconds since the process started'),
    db: z.string().describe('"ok"; on the bridge "busy" (another process holds the write lock), "full" (no room left to write), ' +
      '"read-only", "io-error" (the file system failed a write), "closed" or "error"; on the hub what went wrong reading the database'),
    db_detail: z.string().nullable().optional().describe('Why db is not "ok", in words; null when it is'),
    ...deps.extra?.shape,
  });
  return [
    route({
      method: 'GET', path: '/api/health', summary: 'Liveness and database check; needs no key', tags: ['system'], roles: 'public',
      response: Health, responseName: 'Health', errors: [503],
      handler: async () => {
        const base = { version: VERSION, uptime_s: Math.round((deps.now() - deps.startedAt) / 100) / 10, ...deps.extra?.values() };
        let check: void | DbCheck;
        try {
          check = await deps.checkDb();
        } catch (error) {
          return new Reply(503, { status: 'unavailable', ...base, db: (error as Error).message });
        }
        if (!check) return { status: 'ok', ...base, db: 'ok' };
        if (check.db === 'ok') return { status: 'ok', ...base, db: 'ok', db_detail: null };
        return new Reply(503, { status: 'unavailable', ...base, db: check.db, db_detail: check.detail });
      },
    }),
    route({
      method: 'GET', path: '/api/openapi.json', summary: `The ${deps.what} API as OpenAPI 3.1; needs no key`, tags: ['system'], roles: 'public',
      handler: () => deps.openapi(),
    }),
    route({
      method: 'GET', path: '/metrics', summary: 'Prometheus metrics (text format 0.0.4); any valid key', tags: ['system'], roles: ANY_KEY, produces: 'text/plain',
      handler: ({ res }) => {
        const text = deps.metrics.render();
        res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
        return HANDLED;
      },
    }),
  ];
}
