import type { DatabaseSync } from 'node:sqlite';
import { migrate } from '../db/migrate.ts';
import { openSqlite } from '../db/sqlite.ts';
import { httpMetrics } from '../http/metrics.ts';
import { MetricsRegistry } from '../lib/metrics.ts';
import { buildOpenApi } from '../http/openapi.ts';
import type { Route } from '../http/route.ts';
import { createRequestHandler, listen, type RunningServer } from '../http/server.ts';
import { type Clock, systemClock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { VERSION } from '../lib/version.ts';
import { AuditStore } from './audit/store.ts';
import { auditRoutes } from './audit/routes.ts';
import { ConfigFileService } from './config/import.ts';
import { configExportRoutes, configRoutes } from './config/routes.ts';
import { ConfigService } from './config/service.ts';
import { ConfigStore } from './config/store.ts';
import { contactRoutes } from './contacts/routes.ts';
import { BookService } from './contacts/service.ts';
import { BookStore } from './contacts/store.ts';
import { Dispatcher } from './deliveries/dispatcher.ts';
import { deliveryRoutes } from './deliveries/routes.ts';
import { DELIVERY_STATES, DeliveryStore } from './deliveries/store.ts';
import { BearerHost } from './interfaces/bearer-host.ts';
import { interfaceRoutes } from './interfaces/routes.ts';
import { InterfaceService } from './interfaces/service.ts';
import { InterfaceStore } from './interfaces/store.ts';
import { keyRoutes } from './keys/routes.ts';
import { messageView } from './messages/view.ts';
import { deliveryView } from './deliveries/view.ts';
import { type UplinkEnv, UplinkService } from './uplink/service.ts';
import { RetentionWorker } from './messages/retention.ts';
import { SendRateLimiter } from './messages/rate-limit.ts';
import { messageRoutes } from './messages/routes.ts';
import { MessageStore } from './messages/store.ts';
import { Pipeline } from './pipeline.ts';
import { routingRoutes } from '../bearers/rnode/routes.ts';
import { type RNodeSeed, seedRNode } from './interfaces/seed-rnode.ts';
import { ruleRoutes } from './rules/routes.ts';
import { RuleService } from './rules/service.ts';
import { RuleStore } from './rules/store.ts';
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
  /** SERVICE_RETENTION_DAYS (default 30; 0 keeps everything). */
  retentionDays?: number;
  /** SERVICE_HUB_MQTT_URL / SERVICE_HUB_TENANT overrides of the hub section. */
  uplinkEnv?: UplinkEnv;
  /** SERVICE_RNODE_PORT / SERVICE_RNODE_PRESET, applied on a fresh database only. */
  rnodeSeed?: RNodeSeed;
  /** Random source for retry jitter (tests make it deterministic). */
  random?: () => number;
}

export interface BridgeServices {
  db: DatabaseSync;
  keys: KeyService;
  metrics: MetricsRegistry;
  interfaces: InterfaceService;
  host: BearerHost;
  rules: RuleService;
  contacts: BookService<Record<string, string>>;
  groups: BookService<string[]>;
  messages: MessageStore;
  deliveries: DeliveryStore;
  dispatcher: Dispatcher;
  pipeline: Pipeline;
  audit: AuditStore;
  config: ConfigService;
  configFiles: ConfigFileService;
  sendLimiter: SendRateLimiter;
  uplink: UplinkService;
  clock: Clock;
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
    ...interfaceRoutes(services.interfaces),
    ...ruleRoutes(services.rules),
    ...contactRoutes(services.contacts, services.groups),
    ...messageRoutes({ store: services.messages, pipeline: services.pipeline, interfaces: services.interfaces, contacts: services.contacts, limiter: services.sendLimiter }),
    ...deliveryRoutes({ store: services.deliveries, dispatcher: services.dispatcher, interfaces: services.interfaces, clock: services.clock }),
    ...auditRoutes(services.audit),
    ...configRoutes(services.config),
    ...configExportRoutes(services.configFiles),
    ...routingRoutes(services.interfaces, services.host),
  );
  return routes;
}

/** The OpenAPI document without a database: handlers are never called while documenting. */
export function bridgeOpenApi(): Record<string, unknown> {
  const unused = new Proxy({}, { get: () => { throw new Error('not available while generating OpenAPI'); } }) as never;
  const services = new Proxy({}, { get: () => unused }) as BridgeServices;
  return buildOpenApi(BRIDGE_API_INFO, bridgeRoutes(services, { startedAt: 0, now: () => 0 }));
}

/** Opens and migrates the bridge database. */
export function openBridgeDatabase(dbPath: string, log?: Logger): DatabaseSync {
  return openMigrated(dbPath, log).db;
}

/** Opens and migrates; `fresh` is true when the file had no schema yet (first start). */
export function openMigrated(dbPath: string, log?: Logger): { db: DatabaseSync; fresh: boolean } {
  const db = openSqlite(dbPath);
  try {
    const result = migrate(db, bridgeMigrations, `bridge database ${dbPath}`);
    if (result.applied.length > 0) log?.info('db_migrated', { path: dbPath, from: result.from, to: result.to });
    return { db, fresh: result.from === 0 };
  } catch (error) {
    db.close();
    throw error;
  }
}

export async function startBridge(options: BridgeOptions): Promise<RunningBridge> {
  const clock = options.clock ?? systemClock;
  const log = options.log;
  const startedAt = clock.now();
  const { db, fresh } = openMigrated(options.dbPath, log);
  const services = createServices(db, clock, log, options.random, options.uplinkEnv);
  const { keys, metrics } = services;

  const ownerKeyFile = keys.ensureFirstOwnerKey(options.dbPath);
  if (ownerKeyFile) log.info('owner_key_created', { path: ownerKeyFile, note: 'first start: the owner key was written to this file (mode 0600)' });

  const handler = createRequestHandler({
    routes: bridgeRoutes(services, { startedAt, now: () => clock.now() }),
    log,
    authenticate: (token) => keys.authenticate(token),
    audit: (e) => services.audit.insert({ at: new Date(clock.now()).toISOString(), key_id: e.keyId, method: e.method, path: e.path, status: e.status, request_id: e.requestId }),
    metrics: httpMetrics(metrics, 'fieldbridge'),
    checkResponses: options.checkResponses,
  });
  const retention = new RetentionWorker({ messages: services.messages, deliveries: services.deliveries, clock, log, days: options.retentionDays ?? 30 });
  let server: RunningServer;
  try {
    server = await listen(handler, options.host, options.port);
  } catch (error) {
    db.close();
    throw error;
  }
  try {
    await seedRNode(options.rnodeSeed ?? {}, fresh, services.interfaces, log);
  } catch (error) {
    await server.close(0);
    db.close();
    throw error;
  }
  await services.interfaces.startAll();
  services.dispatcher.start();
  retention.start();
  services.uplink.start();
  log.info('bridge_listening', { url: server.url, db: options.dbPath, version: VERSION });

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    services,
    close: (graceMs = 10_000) =>
      (closing ??= (async () => {
        // Only unref'd timers may be left once the server closes; this keeps the process alive
        // until the database is closed.
        const keepAlive = setInterval(() => {}, 1000);
        await server.close(graceMs);
        retention.stop();
        // No new sends; stopping the bearers ends the ones on the air, which go back to their
        // queue without spending an attempt; then every state change is committed.
        services.dispatcher.pause();
        await services.host.stopAll();
        await services.dispatcher.drain(Math.min(graceMs, 5000));
        await services.uplink.close();
        services.audit.flush();
        clearInterval(keepAlive);
        // A clean close checkpoints the WAL, so no journal is left behind.
        db.close();
        log.info('bridge_stopped', {});
      })()),
  };
}

/** Builds every service of the bridge on an open, migrated database. */
export function createServices(db: DatabaseSync, clock: Clock, log: Logger, random?: () => number, uplinkEnv: UplinkEnv = {}): BridgeServices {
  const metrics = new MetricsRegistry();
  const keys = new KeyService(new KeyStore(db), clock);
  const interfaceStore = new InterfaceStore(db);
  const messages = new MessageStore(db);
  const deliveries = new DeliveryStore(db);
  const ruleStore = new RuleStore(db);
  const contacts = new BookService<Record<string, string>>(new BookStore(db, 'contacts', 'addresses'), {
    what: 'contact', refKind: 'contact', prefix: 'ctc', expand: (v) => Object.values(v as Record<string, string>),
  }, clock);
  const groups = new BookService<string[]>(new BookStore(db, 'object_groups', 'members'), {
    what: 'object group', refKind: 'group', prefix: 'grp', expand: (v) => v as string[],
  }, clock);
  contacts.setReferenceCheck({ rulesReferring: (k, id) => ruleStore.rulesReferring(k, id), nameUsedElsewhere: (n) => !!groups.store.find(n) });
  groups.setReferenceCheck({ rulesReferring: (k, id) => ruleStore.rulesReferring(k, id), nameUsedElsewhere: (n) => !!contacts.store.find(n) });

  // The bearer host and the dispatcher need each other (a link coming up wakes its queue), so
  // they are joined through these late-bound calls.
  let dispatcher!: Dispatcher;
  let pipeline!: Pipeline;
  const host = new BearerHost(log, clock, {
    receive: (interfaceId, frame) => {
      try {
        pipeline.receive(interfaceId, frame);
      } catch (error) {
        log.error('receive_failed', { interface_id: interfaceId, error: (error as Error).message });
      }
    },
    stateChanged: (interfaceId, connected) => {
      if (connected) dispatcher.kick(interfaceId);
    },
  });
  const config = new ConfigService(new ConfigStore(db), clock, log);
  const uplink = new UplinkService({
    db, config, env: uplinkEnv, log, clock, version: VERSION,
    interfaces: () => interfaceStore.list().map((i) => ({ id: i.id, name: i.name, kind: i.kind, enabled: i.enabled, bound: i.device !== null })),
  });
  const interfaces = new InterfaceService(interfaceStore, host, clock);
  const rules = new RuleService(ruleStore, { interfaces, contacts, groups, clock, defaultAction: () => config.section('routing').default_action });
  const sentMessages = metrics.counter('fieldbridge_messages_total', 'Messages that entered the router, by direction and the action decided.');
  const bearerErrors = metrics.counter('fieldbridge_bearer_errors_total', 'Failed send attempts, by interface.');
  // State changes outside the dispatcher (API retry and cancel, expiry, an interface removed)
  // reach the hub too; a failed write-behind flush is logged and retried.
  deliveries.onStateChange = (rows) => rows.forEach((d) => uplink.enqueue('delivery', deliveryView(d)));
  deliveries.onFlushError = (error) => log.error('delivery_state_write_failed', { error: error.message, action: 'kept in memory; retrying in 1 s' });
  dispatcher = new Dispatcher({
    store: deliveries, host, clock, log, random,
    findInterface: (id) => interfaceStore.find(id),
    onChange: (d) => {
      // An interrupted send (interface stopped) is no bearer error.
      if ((d.state === 'retrying' || d.state === 'dead') && !d.last_error?.startsWith('interrupted')) bearerErrors.inc({ interface: d.interface_id });
      uplink.enqueue('delivery', deliveryView(d));
    },
  });
  pipeline = new Pipeline({
    db, clock, log, messages, deliveries, interfaces, rules, contacts, groups,
    dispatch: (interfaceId, expires) => dispatcher.added(interfaceId, expires),
    record: ({ message, deliveries: created }) => {
      uplink.enqueue(message.kind === 'telemetry' || message.kind === 'position' ? message.kind : 'message', messageView(message));
      for (const d of created) uplink.enqueue('delivery', deliveryView(d));
    },
    onIngested: (r) => sentMessages.inc({ direction: r.message.direction, action: r.message.action ?? 'none' }),
  });
  interfaces.setHooks({
    deleteRulesNaming: (id) => rules.deleteNaming(id),
    cancelDeliveriesFor: (id, reason) => deliveries.cancelWaitingFor(id, reason, clock.now()),
    kick: (id) => dispatcher.kick(id),
    queueDepth: (id) => deliveries.queueDepth(id),
  });
  metrics.gauge('fieldbridge_deliveries', 'Deliveries by state.', () => {
    const counts = deliveries.countByState();
    return DELIVERY_STATES.map((state) => ({ labels: { state }, value: counts[state] ?? 0 }));
  });
  metrics.gauge('fieldbridge_queue_depth', 'Deliveries waiting per interface.', () =>
    deliveries.countByInterfaceWaiting().map((r) => ({ labels: { interface: r.interface_id }, value: r.n })),
  );
  const audit = new AuditStore(db);
  audit.onFlushError = (error) => log.error('audit_write_failed', { error: error.message, action: 'kept in memory; retrying in 1 s' });
  const configFiles = new ConfigFileService({ db, config, interfaces, rules, groups, contacts, deliveries, clock, log });
  return { db, keys, metrics, interfaces, host, rules, contacts, groups, messages, deliveries, dispatcher, pipeline, audit, config, configFiles, clock,
    uplink,
    sendLimiter: new SendRateLimiter(clock, () => config.section('routing').rate_limit) };
}
