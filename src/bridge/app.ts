import { dirname } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { DRIVERS } from '../bearers/drivers.ts';
import { deviceProblem } from './device-problems.ts';
import { migrate } from '../db/migrate.ts';
import { BUSY_SLICE_MS, retryWhileBusy, writeMark } from '../db/busy.ts';
import { writeWantedWatcher } from '../db/write-wanted.ts';
import { fileSystemFreeBytes } from '../db/health.ts';
import { commitGroup, commitMark, committed, databaseOpenError, enableGroupCommit, expectWrite, type GroupPolicy, type OpenOptions, openSqlite, setSynchronous } from '../db/sqlite.ts';
import { httpMetrics } from '../http/metrics.ts';
import { buildOpenApi } from '../http/openapi.ts';
import type { Route } from '../http/route.ts';
import { AuthFailureLimiter } from '../http/auth-failures.ts';
import { createRequestHandler, listen, type RunningServer } from '../http/server.ts';
import { type Clock, systemClock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { MetricsRegistry } from '../lib/metrics.ts';
import { VERSION } from '../lib/version.ts';
import { AuditRetention } from './audit/retention.ts';
import { auditRoutes } from './audit/routes.ts';
import { AuditStore } from './audit/store.ts';
import { deviceConfigSource } from './config/device-config.ts';
import { ConfigFileService } from './config/import.ts';
import { configExportRoutes, configRoutes } from './config/routes.ts';
import { ConfigService } from './config/service.ts';
import { ConfigStore } from './config/store.ts';
import { contactRoutes } from './contacts/routes.ts';
import { prepareDatabaseFiles } from './data-files.ts';
import { BookService } from './contacts/service.ts';
import { BookStore } from './contacts/store.ts';
import type { Dispatcher } from './engine/dispatcher.ts';
import { deliveryRoutes } from './deliveries/routes.ts';
import type { DeliveryStore } from './engine/delivery-store.ts';
import type { WriteBehind } from './engine/write-behind.ts';
import type { BearerHost } from './engine/bearer-host.ts';
import { driverApi } from './interfaces/driver-api.ts';
import { interfaceMetrics } from './interfaces/metrics.ts';
import { interfaceRoutes } from './interfaces/routes.ts';
import { AlertStore } from './alerts/store.ts';
import { AlertWatch } from './alerts/watch.ts';
import { EventFeed } from './events/feed.ts';
import { eventRoutes } from './events/routes.ts';
import { followSources } from './events/sources.ts';
import { EventLogStore } from './events/store.ts';
import { type SeedRequest, seedInterfaces } from './interfaces/seed.ts';
import { InterfaceService } from './interfaces/service.ts';
import { InterfaceStore } from './engine/interface-store.ts';
import { keyRoutes } from './keys/routes.ts';
import { KeyService } from './keys/service.ts';
import { KeyStore } from './keys/store.ts';
import { SendRateLimiter } from './messages/rate-limit.ts';
import { RetentionWorker } from './messages/retention.ts';
import { messageRoutes } from './messages/routes.ts';
import type { MessageStore } from './engine/message-store.ts';
import { followUsage, UsageStore } from './messages/usage.ts';
import { bridgeMigrations } from './migrations.ts';
import { nodeRoutes } from './nodes/routes.ts';
import { positionRoutes } from './positions/routes.ts';
import { PositionStore } from './positions/store.ts';
import type { NodeStore } from './engine/node-store.ts';
import { NodeIdentity } from './engine/node-identity.ts';
import { RoutingCore } from './engine/core.ts';
import type { FallbackService } from './engine/fallback.ts';
import { lockWaitMetrics, routerMetrics } from './engine/metrics.ts';
import { PREVIEW_PATH, previewRoutes } from './preview/routes.ts';
import { PreviewService } from './preview/service.ts';
import { senderRoutes } from './senders/routes.ts';
import { SenderService } from './senders/service.ts';
import type { AddressBooks, NodeAddresses } from './engine/deciders.ts';
import type { Pipeline } from './engine/pipeline.ts';
import { ruleRoutes } from './rules/routes.ts';
import { RuleService } from './rules/service.ts';
import { RuleStore, type RuleRef } from './rules/store.ts';
import { systemRoutes } from './system/routes.ts';
import { ClockGuard, type ClockStatus } from './clock/guard.ts';
import { followRouter } from './uplink/router-events.ts';
import { type UplinkEnv, UplinkService } from './uplink/service.ts';

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
  /** Interfaces the environment asks a fresh database to start with (interfaces/seed.ts). */
  seeds?: readonly SeedRequest[];
  /** Random source for retry jitter (tests make it deterministic). */
  random?: () => number;
  /** What benchmarks compare (page size, checkpoints): over BRIDGE_DB. The sync level is the
   *  configuration's (bridge.storage.sync). */
  db?: OpenOptions;
  /** Group commit window of ingests (benchmarks compare); default INGEST_GROUP_MS, 0: off. */
  ingestGroupMs?: number;
  /** How ingests group (the benchmark measures the older rule beside it); default
   *  'writers' (db/transaction.ts). */
  groupPolicy?: GroupPolicy;
}

/**
 * How the bridge opens its database (docs/decisions.md "Issue 22: a write path made
 * for flash"): chosen by measurement with scripts/bench-writes.ts. The page size applies to a
 * database made by this release; an existing one keeps its own.
 */
export const BRIDGE_DB: OpenOptions = { pageSize: 1024, walAutocheckpoint: 1000, tempStore: 'memory' };

/**
 * The longest an ingest waits for a group (group commit, db/transaction.ts):
 * frames from senders that repeat, coming within this long of the last commit, share the next
 * one, at most one commit per window; ingests with other writes announced (API calls in flight)
 * share one as soon as all of them wait. Chosen by measurement with scripts/bench-writes.ts
 * (docs/decisions.md "Issue 22: a write path made for flash").
 */
export const INGEST_GROUP_MS = 300;

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
  /** The routing core: the parts a message passes through (engine/core.ts). */
  core: RoutingCore;
  deliveries: DeliveryStore;
  writeBehind: WriteBehind;
  nodes: NodeStore;
  dispatcher: Dispatcher;
  pipeline: Pipeline;
  fallbacks: FallbackService;
  audit: AuditStore;
  config: ConfigService;
  configFiles: ConfigFileService;
  sendLimiter: SendRateLimiter;
  /** POST /api/messages/preview. */
  preview: PreviewService;
  /** The senders policy and counters (the pipeline's, docs/senders.md). */
  senders: SenderService;
  /** What was sent per interface and day (GET /api/messages/stats `usage`). */
  usage: UsageStore;
  uplink: UplinkService;
  /** GET /api/events: the event log and its live followers (events/feed.ts). */
  eventFeed: EventFeed;
  /** Alerts as messages (alerts/watch.ts, bridge.alerts). */
  alerts: AlertWatch;
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

/** `startedAt`: the clock's monotonic time at start (uptime); `now`: the wall clock (previews);
 *  `clock`: the bridge clock's state for health. */
export function bridgeRoutes(services: BridgeServices, extra: { startedAt: number; now: () => number; clock?: () => ClockStatus }): Route[] {
  const routes: Route[] = [];
  const openapi = () => buildOpenApi(BRIDGE_API_INFO, routes);
  routes.push(
    ...systemRoutes({ db: services.db, metrics: services.metrics, startedAt: extra.startedAt, now: () => services.clock.monotonic(), openapi, uplink: services.uplink, clock: extra.clock }),
    ...keyRoutes(services.keys),
    ...interfaceRoutes(services.interfaces),
    ...ruleRoutes(services.rules),
    ...contactRoutes(services.contacts, services.groups),
    ...previewRoutes({ preview: services.preview, interfaces: services.interfaces, now: extra.now }),
    ...senderRoutes(services.senders),
    ...messageRoutes({ usage: services.usage, store: services.messages, pipeline: services.pipeline, interfaces: services.interfaces, contacts: services.contacts, limiter: services.sendLimiter, fallbacks: services.fallbacks }),
    ...deliveryRoutes({ store: services.deliveries, dispatcher: services.dispatcher, interfaces: services.interfaces, clock: services.clock, fallbacks: services.fallbacks, messages: services.messages }),
    ...nodeRoutes(services.nodes, services.interfaces),
    ...positionRoutes({ positions: new PositionStore(services.db), nodes: services.nodes, interfaces: services.interfaces, now: () => services.clock.now() }),
    ...auditRoutes(services.audit),
    ...eventRoutes({ feed: services.eventFeed, clock: services.clock, interfaceId: (ref) => services.interfaces.get(ref).id }),
    ...configRoutes(services.config),
    ...configExportRoutes(services.configFiles),
    ...DRIVERS.flatMap((d) => d.routes?.(driverApi(d, services.interfaces, services.host)) ?? []),
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
export function openBridgeDatabase(dbPath: string, log?: Logger, options: OpenOptions = {}): DatabaseSync {
  return openMigrated(dbPath, log, options).db;
}

/** Opens and migrates; `fresh` is true when the file had no schema yet (first start). */
export function openMigrated(dbPath: string, log?: Logger, options: OpenOptions = {}): { db: DatabaseSync; fresh: boolean } {
  let db: DatabaseSync;
  try {
    // The file is made 0600 before SQLite opens it; SQLite gives -wal and -shm its mode.
    prepareDatabaseFiles(dbPath, log);
    db = openSqlite(dbPath, { ...BRIDGE_DB, ...options });
  } catch (error) {
    // A path that cannot be opened (read-only file system, no permission, a file where a
    // folder should be) stops the start with one line, not a stack trace.
    throw databaseOpenError(error, dbPath, 'SERVICE_DB_PATH');
  }
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
  const log = options.log;
  const { db, fresh } = openMigrated(options.dbPath, log, options.db);
  // Every time the bridge reads comes from the guard's clock, which a system clock step does
  // not move (clock/guard.ts).
  let guard: ClockGuard;
  try {
    guard = new ClockGuard(db, options.clock ?? systemClock, log);
  } catch (error) {
    db.close();
    throw error;
  }
  const clock = guard.clock;
  const startedAt = clock.monotonic();
  const services = createServices(db, clock, log, options.random, options.uplinkEnv);
  const { keys, metrics } = services;
  // bridge.storage.sync: applied at start and whenever it changes.
  const applySync = () => setSynchronous(db, services.config.section('bridge').storage.sync);
  applySync();
  services.config.on('change', (target: string) => {
    if (target === 'bridge' && db.isOpen) applySync();
  });

  const ownerKeyFile = keys.ensureFirstOwnerKey(options.dbPath);
  if (ownerKeyFile) log.info('owner_key_created', { path: ownerKeyFile, note: 'first start: the owner key was written to this file (mode 0600)' });

  const handler = createRequestHandler({
    routes: bridgeRoutes(services, { startedAt, now: () => clock.now(), clock: () => guard.status() }),
    log,
    now: () => clock.now(),
    authenticate: (token) => keys.authenticate(token),
    authFailures: new AuthFailureLimiter({ clock, log, metrics, prefix: 'fieldbridge' }),
    // A preview changes nothing, so it is not audited.
    audit: (e) => {
      if (e.path !== PREVIEW_PATH) services.audit.insert({ at: new Date(clock.now()).toISOString(), key_id: e.keyId, method: e.method, path: e.path, status: e.status, request_id: e.requestId });
    },
    metrics: httpMetrics(metrics, 'fieldbridge'),
    // A change is answered once it is committed: an ingest may wait in an open group,
    // while other calls that may change something are on their way: each counts from
    // its arrival until its handler is done. A failed group COMMIT rejects here and is answered
    // like the write's own error (507, ...). A call that wrote nothing (a preview, a refused
    // change) does not wait, nor hurry a group.
    expectWrite: () => expectWrite(db),
    runHandler: async (work, how) => {
      const mark = commitMark(db);
      let before: string | undefined;
      const run = () => ((before ??= writeMark(db)), work());
      let result;
      try {
        result = await retryWhileBusy(db, how.writer ? () => how.writer!.run(run) : run, how);
      } finally {
        how.writer?.done();
      }
      if (how.gate && writeMark(db) !== before) await committed(db, mark);
      return result;
    },
    // A driver's error that reaches an answer gets its status from one table of codes.
    problemOf: deviceProblem,
    checkResponses: options.checkResponses,
  });
  const retention = new RetentionWorker({
    db, messages: services.messages, deliveries: services.deliveries, seen: services.core.seen, senders: services.senders.store, usage: services.usage, clock, log, days: options.retentionDays ?? 30,
  });
  const auditRetention = new AuditRetention({ store: services.audit, clock, log, limits: () => services.config.section('bridge').audit });
  let server: RunningServer;
  try {
    server = await listen(handler, options.host, options.port);
  } catch (error) {
    db.close();
    throw error;
  }
  try {
    await seedInterfaces(options.seeds ?? [], fresh, services.interfaces, log);
  } catch (error) {
    await server.close(0);
    db.close();
    throw error;
  }
  await services.interfaces.startAll();
  services.core.start();
  services.alerts.start();
  guard.start({
    beforeRebase: () => services.deliveries.flush(),
    // Queues read their retry and expiry times again (their timers run on the monotonic clock).
    rebased: () => {
      for (const id of services.deliveries.interfacesWithWork()) services.dispatcher.changed(id);
    },
    allows: (source) => (services.config.section('bridge').clock.radio_time as readonly string[]).includes(source),
  });
  services.core.events.subscribe((event) => {
    if (event.type === 'time') guard.offer(event.kind, event.atMs);
  });
  retention.start();
  auditRetention.start();
  services.uplink.start();
  // From now on SQLite waits at most a slice for another process's lock; whoever meets it waits
  // on a timer instead, so the event loop keeps serving (db/busy.ts). Start-up
  // (recovery, the uplink's session) kept SQLite's full wait: nothing else runs yet.
  db.exec(`PRAGMA busy_timeout = ${BUSY_SLICE_MS}`);
  // No group while another process asks for the lock (`fieldbridge keys create`: db/write-wanted.ts).
  enableGroupCommit(db, options.ingestGroupMs ?? INGEST_GROUP_MS, writeWantedWatcher(options.dbPath), options.groupPolicy);
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
        services.eventFeed.closeStreams('the bridge is stopping');
        await server.close(graceMs);
        retention.stop();
        auditRetention.stop();
        services.alerts.stop();
        await services.core.stop(graceMs);
        await services.uplink.close();
        services.audit.flush();
        guard.stop();
        try {
          commitGroup(db);
        } catch (error) {
          log.error('final_commit_failed', { error: (error as Error).message });
        }
        try {
          // After the last commit: the events of everything stored are in.
          services.eventFeed.save();
        } catch (error) {
          log.error('event_log_not_saved', { error: (error as Error).message, note: 'clients that reconnect after the restart are told of the gap' });
        }
        clearInterval(keepAlive);
        // A clean close checkpoints the WAL, so no journal is left behind.
        db.close();
        log.info('bridge_stopped', {});
      })()),
  };
}

/** Builds every service of the bridge on an open, migrated database, in the order data flows:
 *  configuration and books, the routing core, then what follows the core (uplink, metrics). */
export function createServices(db: DatabaseSync, clock: Clock, log: Logger, random?: () => number, uplinkEnv: UplinkEnv = {}): BridgeServices {
  const metrics = new MetricsRegistry();
  const keys = new KeyService(new KeyStore(db), clock);
  const config = new ConfigService(new ConfigStore(db), clock, log);
  const interfaceStore = new InterfaceStore(db);
  const ruleStore = new RuleStore(db);
  const books = (other: () => BookService<unknown>) => ({ rulesReferring: (k: RuleRef['kind'], id: string) => ruleStore.rulesReferring(k, id), nameUsedElsewhere: (n: string) => !!other().store.find(n), policyReferring: (n: string) => senders.referring(n) });
  const contacts: BookService<Record<string, string>> = new BookService<Record<string, string>>(new BookStore(db, 'contacts', 'addresses'), {
    what: 'contact', refKind: 'contact', prefix: 'ctc', expand: (v) => Object.values(v as Record<string, string>),
  }, clock, books(() => groups));
  const groups: BookService<string[]> = new BookService<string[]>(new BookStore(db, 'object_groups', 'members'), {
    what: 'object group', refKind: 'group', prefix: 'grp', expand: (v) => v as string[],
  }, clock, books(() => contacts));
  // Which node an address names now (a renumbered node at its new id): the rules, the senders
  // policy and the pipeline all read addresses through it.
  const identity = new NodeIdentity(db);
  const rules = new RuleService(ruleStore, { interfaces: interfaceStore, contacts, groups, clock, defaultAction: () => config.section('routing').default_action, nodes: identity });

  const senders = newSenderService(db, clock, contacts, groups, identity);
  const core = new RoutingCore({ db, clock, log, random, interfaceStore, rules, books: addressBooks(contacts, groups), senders, deviceConfig: deviceConfigSource(config), identity });
  const { host, deliveries, messages, pipeline, dispatcher, writeBehind, events } = core;
  config.setDeviceCheck((section, value, part) => host.deviceProblems(section, value, part));
  const interfaces = new InterfaceService(interfaceStore, host, { rules, deliveries, clock });

  const uplink = new UplinkService({
    db, config, env: uplinkEnv, log, clock, version: VERSION, metrics,
    interfaces: () => interfaceStore.list().map((i) => ({ id: i.id, name: i.name, kind: i.kind, enabled: i.enabled, bound: i.device !== null })),
  });
  followRouter(uplink, events);
  routerMetrics(metrics, events, deliveries, interfaceStore);
  const usage = new UsageStore(db);
  followUsage(events, usage, interfaceStore, metrics, clock);
  lockWaitMetrics(metrics, core);
  interfaceMetrics(metrics, interfaces);
  const audit = new AuditStore(db, log, () => config.section('bridge').audit);
  const eventFeed = new EventFeed({ db, store: new EventLogStore(db), clock, log, limits: () => config.section('bridge').events });
  followSources(eventFeed, { router: events, interfaceName: (id) => interfaceStore.find(id)?.name ?? null, runtime: (id) => host.runtime(id), config });
  const alerts = new AlertWatch({
    clock, log, router: events, store: new AlertStore(db),
    limits: () => config.section('bridge').alerts,
    bridgeName: () => config.section('bridge').name,
    interfaceOf: (id) => interfaceStore.find(id),
    runtime: (id) => host.runtime(id),
    uplinkState: () => uplink.state(),
    freeBytes: () => fileSystemFreeBytes(dirname(db.location() ?? '.')),
    send: (m) => void pipeline.ingest(m),
  });
  const configFiles = new ConfigFileService({ db, config, interfaces, rules, groups, contacts, deliveries, clock, log, senderPolicyNames: () => senders.names() });
  return {
    db, keys, metrics, interfaces, core, host, nodes: core.nodes, rules, contacts, groups, messages, deliveries, writeBehind, dispatcher, pipeline, fallbacks: core.fallbacks, audit, config, configFiles, clock, uplink, eventFeed, alerts,
    sendLimiter: new SendRateLimiter(clock, () => config.section('routing').rate_limit),
    preview: new PreviewService({ pipeline, interfaces, host, clock }),
    senders,
    usage,
  };
}

/** The address books as the engine asks for them (engine/deciders.ts). */
export function addressBooks(contacts: BookService<Record<string, string>>, groups: BookService<string[]>): AddressBooks {
  return { group: (name) => groups.store.find(name)?.value, contact: (name) => contacts.store.find(name)?.value };
}

/** The senders policy, reading @references in both books (groups first). */
export function newSenderService(db: DatabaseSync, clock: Clock, contacts: BookService<Record<string, string>>, groups: BookService<string[]>, nodes?: NodeAddresses): SenderService {
  return new SenderService(db, clock, {
    current: nodes && ((address) => nodes.current(address)),
    expand: (ref) => groups.expand(ref.slice(1)) ?? contacts.expand(ref.slice(1)),
    exists: (name) => groups.store.find(name) !== undefined || contacts.store.find(name) !== undefined,
    version: () => groups.store.version + contacts.store.version,
  });
}
