import type { DatabaseSync } from 'node:sqlite';
import { migrate } from '../db/migrate.ts';
import { openSqlite } from '../db/sqlite.ts';
import { httpMetrics, MetricsRegistry } from '../http/metrics.ts';
import { buildOpenApi } from '../http/openapi.ts';
import type { Route } from '../http/route.ts';
import { createRequestHandler, listen, type RunningServer } from '../http/server.ts';
import { type Clock, systemClock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { VERSION } from '../lib/version.ts';
import { keyRoutes } from './keys/routes.ts';
import { KeyService } from './keys/service.ts';
import { KeyStore } from './keys/store.ts';
import { bridgeMigrations } from './migrations.ts';
import { systemRoutes } from './system/routes.ts';

// Wires the bridge together: database, services, routes, HTTP. main.ts starts it for the
// `bridge` subcommand; tests start it in-process on port 0.

export interface BridgeOptions {
  dbPath: string;
  host: string;
  port: number;
  log: Logger;
  clock?: Clock;
  checkResponses?: boolean;
}

export interface BridgeServices {
  db: DatabaseSync;
  keys: KeyService;
  metrics: MetricsRegistry;
}

export interface RunningBridge {
  url: string;
  port: number;
  services: BridgeServices;
  /** Drains HTTP (bounded by graceMs), stops workers, closes the database. */
  close(graceMs?: number): Promise<void>;
}

export const BRIDGE_API_INFO = {
  title: 'fieldbridge Bridge API',
  version: VERSION,
  description:
    'The field bridge: interfaces, access rules, messages and deliveries. Every /api route but ' +
    '/api/health and /api/openapi.json needs "Authorization: Bearer <key>". Errors are application/problem+json.',
};

export function bridgeRoutes(services: BridgeServices, extra: { startedAt: number; now: () => number }): Route[] {
  const routes: Route[] = [];
  const openapi = () => buildOpenApi(BRIDGE_API_INFO, routes);
  routes.push(
    ...systemRoutes({ db: services.db, metrics: services.metrics, startedAt: extra.startedAt, now: extra.now, openapi }),
    ...keyRoutes(services.keys),
  );
  return routes;
}

/** The OpenAPI document without a database: handlers are never called while documenting. */
export function bridgeOpenApi(): Record<string, unknown> {
  const unused = new Proxy({}, { get: () => { throw new Error('not available while generating OpenAPI'); } }) as never;
  return buildOpenApi(BRIDGE_API_INFO, bridgeRoutes({ db: unused, keys: unused, metrics: unused }, { startedAt: 0, now: () => 0 }));
}

/** Opens and migrates the bridge database. */
export function openBridgeDatabase(dbPath: string, log?: Logger): DatabaseSync {
  const db = openSqlite(dbPath);
  try {
    const result = migrate(db, bridgeMigrations, `bridge database ${dbPath}`);
    if (result.applied.length > 0) log?.info('db_migrated', { path: dbPath, from: result.from, to: result.to });
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

export async function startBridge(options: BridgeOptions): Promise<RunningBridge> {
  const clock = options.clock ?? systemClock;
  const log = options.log;
  const startedAt = clock.now();
  const db = openBridgeDatabase(options.dbPath, log);
  const metrics = new MetricsRegistry();
  const keys = new KeyService(new KeyStore(db), clock);
  const services: BridgeServices = { db, keys, metrics };

  const ownerKeyFile = keys.ensureFirstOwnerKey(options.dbPath);
  if (ownerKeyFile) log.info('owner_key_created', { path: ownerKeyFile, note: 'first start: the owner key was written to this file (mode 0600)' });

  const handler = createRequestHandler({
    routes: bridgeRoutes(services, { startedAt, now: () => clock.now() }),
    log,
    authenticate: (token) => keys.authenticate(token),
    metrics: httpMetrics(metrics, 'fieldbridge'),
    checkResponses: options.checkResponses,
  });
  let server: RunningServer;
  try {
    server = await listen(handler, options.host, options.port);
  } catch (error) {
    db.close();
    throw error;
  }
  log.info('bridge_listening', { url: server.url, db: options.dbPath, version: VERSION });

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    services,
    close: (graceMs = 10_000) =>
      (closing ??= (async () => {
        await server.close(graceMs);
        // A clean close checkpoints the WAL, so no journal is left behind.
        db.close();
        log.info('bridge_stopped', {});
      })()),
  };
}
