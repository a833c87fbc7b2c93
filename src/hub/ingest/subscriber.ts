import { connect, type IPublishPacket, type MqttClient } from 'mqtt';
import type { Counter, MetricsRegistry } from '../../lib/metrics.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { HubStore } from '../store/store.ts';
import { mqttClientOptions, parseMqttUrl } from '../../lib/mqtt-options.ts';
import { decodeUplinkPayload, ingestSubscription, parseUplinkTopic } from '../../lib/topics.ts';

// The hub learns about bridges over MQTT (docs/api.md sections 1 and 6, docs/design.md section 8).
// Delivery is at-least-once end to end: the hub keeps a persistent session (clean: false, a
// fixed client id, MQTT 5 session expiry) so the broker queues events while the hub is down,
// and it acknowledges a message (PUBACK) only after the store has it, by taking over mqtt.js's
// handleMessage. A store failure leaves the message unacknowledged and drops the connection,
// so the broker sends it again after the reconnect. Duplicates are harmless: events are
// stored once per (tenant, event_id).
//
// Decisions (docs/hub.md): a message for a tenant the hub does not know, or one marked for
// deletion, is dropped and counted ("unknown_tenant", "tenant_deleted"): tenants are created
// by operators (create-key), never by whoever can publish. Malformed topics and payloads are
// dropped, counted by reason and logged (at most once a minute per reason), never fatal.

/** MQTT 5 session expiry: how long the broker keeps queueing for a hub that is down. */
export const SESSION_EXPIRY_S = 7 * 24 * 3600;
const WARN_EVERY_MS = 60_000;

export interface IngestOptions {
  store: HubStore;
  log: Logger;
  clock: Clock;
  metrics: MetricsRegistry;
  url: string;
  shared: boolean;
  clientId: string;
  reconnectMs?: number;
  /** Defaults to SESSION_EXPIRY_S; tests on a shared broker pass 0 to leave nothing behind. */
  sessionExpiryS?: number;
}

export class HubIngest {
  readonly #o: IngestOptions;
  readonly #stored: Counter;
  readonly #rejected: Counter;
  readonly #lastWarn = new Map<string, number>();
  #client: MqttClient | undefined;
  #subscribed = false;

  constructor(options: IngestOptions) {
    this.#o = options;
    this.#stored = options.metrics.counter('fieldbridge_hub_ingest_total', 'MQTT messages taken in, by kind and result (stored; duplicate: event already stored; ignored: status older than the one held; cleared: empty retained message).');
    this.#rejected = options.metrics.counter('fieldbridge_hub_ingest_rejected_total', 'MQTT messages dropped, by reason.');
  }

  /** Connects and subscribes; resolves once the subscription is acknowledged. */
  start(): Promise<void> {
    const { log } = this.#o;
    const endpoint = parseMqttUrl(this.#o.url);
    const client = connect(
      mqttClientOptions(endpoint, {
        clientId: this.#o.clientId,
        protocolVersion: 5,
        clean: false,
        properties: { sessionExpiryInterval: this.#o.sessionExpiryS ?? SESSION_EXPIRY_S },
        reconnectPeriod: this.#o.reconnectMs ?? 2000,
        connectTimeout: 10_000,
        resubscribe: true,
      }),
    );
    this.#client = client;
    client.handleMessage = (packet: IPublishPacket, done: (error?: Error) => void) => {
      this.handle(packet.topic, packet.payload as Buffer).then(
        () => done(),
        (error) => {
          log.error('hub_ingest_store_failed', { topic: packet.topic, error: (error as Error).message, next: 'not acknowledged; reconnecting so the broker sends it again' });
          done(error as Error);
          client.stream?.destroy();
        },
      );
    };
    client.on('error', (e) => log.warn('hub_mqtt_error', { error: e.message }));
    client.on('offline', () => log.warn('hub_mqtt_offline', { url: endpoint.host + ':' + endpoint.port, next: 'reconnecting' }));
    return new Promise((resolve) => {
      client.on('connect', (connack) => {
        log.info('hub_mqtt_connected', { host: endpoint.host, port: endpoint.port, session_present: connack.sessionPresent, shared: this.#o.shared });
        // A present session still has our subscription; subscribing again is harmless and
        // covers a broker that lost its persistence.
        client.subscribe(ingestSubscription(this.#o.shared), { qos: 1 }, (error) => {
          if (error) log.error('hub_mqtt_subscribe_failed', { error: error.message });
          else {
            this.#subscribed = true;
            resolve();
          }
        });
      });
    });
  }

  state(): 'connected' | 'disconnected' {
    return this.#client?.connected && this.#subscribed ? 'connected' : 'disconnected';
  }

  /** One message from the broker. Public so tests can feed bad input without a broker. */
  async handle(topic: string, payload: Uint8Array): Promise<void> {
    const { store, clock } = this.#o;
    const t = parseUplinkTopic(topic);
    if (!t.ok) return this.#reject(t.reason, { topic });
    const decoded = decodeUplinkPayload(t.kind, payload);
    if (!decoded.ok) {
      if (decoded.reason === 'empty') return void this.#stored.inc({ kind: t.kind, result: 'cleared' });
      return this.#reject(decoded.reason, { topic, detail: decoded.detail });
    }
    const tenant = await store.getTenant(t.tenant);
    if (!tenant) return this.#reject('unknown_tenant', { tenant: t.tenant });
    if (tenant.deleted_at) return this.#reject('tenant_deleted', { tenant: t.tenant });
    const at = new Date(clock.now()).toISOString();
    if (decoded.kind === 'hello') {
      await store.recordHello(t.tenant, t.bridgeId, { version: decoded.value.version, interfaces: decoded.value.interfaces, at });
      this.#stored.inc({ kind: 'hello', result: 'stored' });
    } else if (decoded.kind === 'status') {
      const applied = await store.recordStatus(t.tenant, t.bridgeId, { ...decoded.value, at });
      this.#stored.inc({ kind: 'status', result: applied ? 'stored' : 'ignored' });
    } else {
      const kind = decoded.kind;
      const inserted = await store.insertEvent(kind, {
        tenant_id: t.tenant,
        event_id: decoded.value.event_id,
        bridge_id: t.bridgeId,
        ts: decoded.value.ts,
        body: decoded.text,
        received_at: at,
      });
      await store.touchBridge(t.tenant, t.bridgeId, at);
      this.#stored.inc({ kind, result: inserted ? 'stored' : 'duplicate' });
    }
  }

  async close(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    this.#client = undefined;
    await new Promise<void>((resolve) => client.end(false, {}, () => resolve()));
  }

  #reject(reason: string, fields: Record<string, unknown>): void {
    this.#rejected.inc({ reason });
    const now = this.#o.clock.now();
    if (now - (this.#lastWarn.get(reason) ?? -Infinity) < WARN_EVERY_MS) return;
    this.#lastWarn.set(reason, now);
    this.#o.log.warn('hub_ingest_rejected', { reason, ...fields, note: 'dropped and counted in fieldbridge_hub_ingest_rejected_total; repeats are logged at most once a minute' });
  }
}
