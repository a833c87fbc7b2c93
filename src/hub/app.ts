import { httpMetrics } from '../http/metrics.ts';
import { MetricsRegistry } from '../lib/metrics.ts';
import { buildOpenApi } from '../http/openapi.ts';
import type { Route } from '../http/route.ts';
import { createRequestHandler, listen, type RunningServer } from '../http/server.ts';
import { type Clock, systemClock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { maskUrlCredentials } from '../lib/mask-url.ts';
import { VERSION } from '../lib/version.ts';
import { bridgeRoutes } from './bridges/routes.ts';
import { BridgeEnrollments } from './bridges/service.ts';
import { deviceRoutes } from './devices/routes.ts';
import { HubIngest } from './ingest/subscriber.ts';
import { hubKeyRoutes } from './keys/routes.ts';
import { DEFAULT_TENANT, HubKeyService } from './keys/service.ts';
import { hubPositionRoutes } from './positions/routes.ts';
import { type HubStore, type HubStoreLocation, openHubStore, type OpenHubStoreOptions } from './store/store.ts';
import { hubSystemRoutes } from './system/routes.ts';
import { tenantRoutes } from './tenant/routes.ts';
import { TenantPurgeJob, TenantService } from './tenant/service.ts';
import { webRoutes } from './web/routes.ts';

// Wires the hub together: store, services, MQTT ingest, purge job, routes, HTTP. main.ts
// starts it for `fieldbridge hub`; tests start it in-process on port 0.

export interface HubOptions {
  store: HubStoreLocation;
  storeOptions?: OpenHubStoreOptions;
  host: string;
  port: number;
  log: Logger;
  clock?: Clock;
  /** Omit to run without MQTT (tests of the HTTP side). */
  mqtt?: { url: string; shared: boolean; clientId: string; reconnectMs?: number; sessionExpiryS?: number; receiveMaximum?: number; maxBatch?: number; flushDelayMs?: number; acceptUnenrolled?: boolean };
  checkResponses?: boolean;
}

export interface RunningHub {
  url: string;
  port: number;
  store: HubStore;
  keys: HubKeyService;
  tenants: TenantService;
  enrollments: BridgeEnrollments;
  purgeJob: TenantPurgeJob;
  ingest: HubIngest | undefined;
  metrics: MetricsRegistry;
  /** The setup token printed at this start, or null when the hub already has a key. */
  setupToken: string | null;
  close(graceMs?: number): Promise<void>;
}

export const HUB_API_INFO = {
  title: 'fieldbridge Hub API',
  version: VERSION,
  description:
    'The fleet hub: API keys, devices learned over MQTT, tenant export and deletion. Every /api route but /api/health, ' +
    '/api/openapi.json and /api/setup needs "Authorization: Bearer <fbh_ key>". Errors are application/problem+json.',
};

export async function startHub(options: HubOptions): Promise<RunningHub> {
  const clock = options.clock ?? systemClock;
  const log = options.log;
  const startedAt = clock.now();
  const startedMono = clock.monotonic();
  const store = await openHubStore(options.store, { now: () => clock.now(), log, ...options.storeOptions });
  if (store.migrations.applied.length > 0) {
    log.info('hub_db_migrated', { dialect: store.dialect, applied: store.migrations.applied.map((m) => `${m.version} ${m.name}`).join(', ') });
  }
  const closers: Array<() => Promise<void>> = [() => store.close()];
  const closeAll = async () => {
    for (const c of closers.reverse()) await c().catch((e) => log.error('hub_close_failed', { error: (e as Error).message }));
  };
  try {
    // A self-hosted hub has exactly one tenant; it exists from the first start so bridges
    // publishing to "default" are recorded even before the first key is made.
    await store.ensureTenant(DEFAULT_TENANT, new Date(startedAt).toISOString());
    const metrics = new MetricsRegistry();
    const keys = new HubKeyService(store, clock);
    const tenants = new TenantService(store, clock, log);
    const enrollments = new BridgeEnrollments(store, clock);
    const purgeJob = new TenantPurgeJob(tenants, clock, log);
    purgeJob.start();
    closers.push(() => purgeJob.stop());

    const setupToken = await keys.issueSetupToken();
    // The one place the token is shown; the field is not named like a secret on purpose, so
    // the logger's redaction lets it through. It works once and only while no key exists.
    if (setupToken) log.warn('hub_setup_token', { setup: setupToken, note: 'no API key exists yet: open the hub web page and enter this one-time token to create the first owner key' });

    let ingest: HubIngest | undefined;
    if (options.mqtt) {
      ingest = new HubIngest({ store, log, clock, metrics, enrollments, ...options.mqtt });
      if (options.mqtt.acceptUnenrolled) log.warn('hub_accepting_unenrolled', { note: 'HUB_ACCEPT_UNENROLLED=1: bridge ids never enrolled may publish unsigned events into any tenant; enroll every bridge (POST /api/bridges) and turn this off' });
      closers.push(() => ingest!.close());
      // Not awaited: the API serves while the broker is still unreachable; /api/health says so.
      ingest.start().catch(() => {});
    }

    const routes: Route[] = [];
    routes.push(
      ...hubSystemRoutes({
        store,
        metrics,
        // Uptime on the monotonic clock: a wall-clock step does not change it.
        startedAt: startedMono,
        now: () => clock.monotonic(),
        openapi: () => buildOpenApi(HUB_API_INFO, routes),
        mqttState: () => ingest?.state() ?? 'off',
      }),
      ...hubKeyRoutes(keys),
      ...deviceRoutes(store),
      ...hubPositionRoutes(store, clock),
      ...bridgeRoutes(enrollments),
      ...tenantRoutes({ tenants, store, clock }),
      ...webRoutes(keys),
    );
    const handler = createRequestHandler({
      routes,
      log,
      now: () => clock.now(),
      authenticate: (token, route) => keys.authenticate(token, route),
      metrics: httpMetrics(metrics, 'fieldbridge_hub'),
      checkResponses: options.checkResponses,
    });
    const server: RunningServer = await listen(handler, options.host, options.port);
    log.info('hub_listening', { url: server.url, db: store.dialect, mqtt: options.mqtt ? maskUrlCredentials(options.mqtt.url) : 'off', version: VERSION });

    let closing: Promise<void> | undefined;
    return {
      url: server.url,
      port: server.port,
      store,
      keys,
      tenants,
      enrollments,
      purgeJob,
      ingest,
      metrics,
      setupToken,
      close: (graceMs = 10_000) =>
        (closing ??= (async () => {
          await server.close(graceMs);
          await closeAll();
          log.info('hub_stopped', {});
        })()),
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
