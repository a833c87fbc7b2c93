import type { DatabaseSync } from 'node:sqlite';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { mqttClientOptions, parseMqttUrl } from '../../lib/mqtt-options.ts';
import { EVENT_KINDS, TOPIC_SEGMENT, type UplinkEventKind, uplinkTopic } from '../../lib/topics.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Logger } from '../../lib/log.ts';
import { UplinkOutbox } from './outbox.ts';

// The bridge's link to the hub (docs/design.md section 8, issue 7 item 7). Events go into the
// outbox table first (enqueue), then a drain loop publishes them in order at QoS 1 and
// deletes each row only after the broker's PUBACK: a broker outage, a dropped connection or
// a restart loses nothing, and at worst sends an event twice (the hub stores it once, by
// event_id). mqtt.js keeps its own outgoing store only in memory (docs/dependencies.md, "Mosquitto 2.0.11"), so it gets one
// connection attempt at a time (reconnectPeriod 0) and this class does the reconnecting, with
// backoff on the injected clock.
//
// Each connection: the last will is status offline with this boot's session and the
// connection's start time; after CONNACK, hello and status online are published retained,
// then the outbox drains. close() publishes the offline status itself before a clean
// disconnect, because a clean DISCONNECT suppresses the will.

export interface UplinkConfig {
  mqtt_url: string;
  tenant: string;
  bridge_id: string;
  username?: string | null;
  password?: string | null;
}

export interface UplinkPublisherOptions {
  db: DatabaseSync;
  log: Logger;
  clock: Clock;
  config: UplinkConfig;
  version: string;
  interfaces(): unknown[];
  /** Reconnect backoff: base doubles per failed attempt up to max, with full jitter. */
  backoff?: { baseMs: number; maxMs: number };
  /** Rows published per round trip of the drain loop. */
  batch?: number;
}

export type UplinkState = 'idle' | 'connecting' | 'connected' | 'backoff' | 'stopped';

const CONNECT_TIMEOUT_MS = 10_000;
const OFFLINE_PUBLISH_TIMEOUT_MS = 3000;
const BUSY_RETRY_MS = 50;

export class UplinkPublisher {
  readonly #o: UplinkPublisherOptions;
  readonly #outbox: UplinkOutbox;
  readonly #topic: (kind: UplinkEventKind | 'hello' | 'status') => string;
  #client: MqttClient | undefined;
  #state: UplinkState = 'idle';
  #session = 0;
  #connectionTs = '';
  #attempt = 0;
  #timer: TimerHandle | undefined;
  #draining = false;
  #again = false;
  #drainDone: Promise<void> = Promise.resolve();

  constructor(options: UplinkPublisherOptions) {
    const { tenant, bridge_id, mqtt_url } = options.config;
    const problems: string[] = [];
    if (!TOPIC_SEGMENT.test(tenant)) problems.push(`tenant ${JSON.stringify(tenant)} must be 1 to 64 letters, digits, "_", "." or "-"`);
    if (!TOPIC_SEGMENT.test(bridge_id)) problems.push(`bridge_id ${JSON.stringify(bridge_id)} must be 1 to 64 letters, digits, "_", "." or "-"`);
    try {
      parseMqttUrl(mqtt_url);
    } catch (e) {
      problems.push(`mqtt_url: ${(e as Error).message}`);
    }
    if (problems.length > 0) throw new AppError('ERR_UPLINK_CONFIG', 400, `hub uplink settings: ${problems.join('; ')}`);
    this.#o = options;
    this.#outbox = new UplinkOutbox(options.db);
    this.#topic = (kind) => uplinkTopic(tenant, bridge_id, kind);
  }

  get session(): number {
    return this.#session;
  }

  state(): UplinkState {
    return this.#state;
  }

  /** Rows still waiting for the broker. */
  pending(): number {
    return this.#outbox.count();
  }

  /** Counts this boot (the session in status messages) and starts connecting. */
  start(): void {
    if (this.#state !== 'idle') return;
    this.#session = this.#outbox.nextSession();
    this.#o.log.info('uplink_starting', { tenant: this.#o.config.tenant, bridge_id: this.#o.config.bridge_id, session: this.#session, pending: this.pending() });
    this.#connect();
  }

  /**
   * Writes an event to the outbox and returns its event_id. It runs on the bridge's database
   * connection, so inside a transaction the caller has open it commits or rolls back with it.
   */
  enqueue(kind: UplinkEventKind, payload: Record<string, unknown>): string {
    if (!(EVENT_KINDS as readonly string[]).includes(kind)) throw new AppError('ERR_UPLINK_KIND', 400, `unknown uplink event kind ${JSON.stringify(kind)}; expected one of ${EVENT_KINDS.join(', ')}`);
    const now = this.#o.clock.now();
    const eventId = newId('evt', now);
    const ts = new Date(now).toISOString();
    this.#outbox.insert(eventId, kind, JSON.stringify({ ...payload, event_id: eventId, ts }), ts);
    // After the caller's synchronous work (and its COMMIT) is done.
    queueMicrotask(() => this.#drain());
    return eventId;
  }

  /** Resolves when the current drain round (if any) has finished; for tests and shutdown. */
  idle(): Promise<void> {
    return this.#drainDone;
  }

  /** Publishes status offline, disconnects cleanly and stops reconnecting. */
  async close(): Promise<void> {
    if (this.#state === 'stopped') return;
    const wasConnected = this.#state === 'connected';
    this.#state = 'stopped';
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    if (wasConnected) {
      const offline = this.#statusPayload('offline');
      const published = client.publishAsync(this.#topic('status'), offline, { qos: 1, retain: true }).catch(() => {});
      await Promise.race([published, new Promise((r) => setTimeout(r, OFFLINE_PUBLISH_TIMEOUT_MS).unref())]);
      await client.endAsync().catch(() => {});
    } else {
      await client.endAsync(true).catch(() => {});
    }
    this.#o.log.info('uplink_stopped', { session: this.#session, pending: this.pending() });
  }

  #statusPayload(state: 'online' | 'offline'): string {
    return JSON.stringify({ state, session: this.#session, ts: this.#connectionTs });
  }

  #connect(): void {
    if (this.#state === 'stopped') return;
    const { config, log } = this.#o;
    this.#state = 'connecting';
    this.#connectionTs = new Date(this.#o.clock.now()).toISOString();
    const endpoint = parseMqttUrl(config.mqtt_url);
    const extra: IClientOptions = {
      clientId: `fieldbridge-${config.tenant}-${config.bridge_id}`.slice(0, 128),
      protocolVersion: 4,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: CONNECT_TIMEOUT_MS,
      will: { topic: this.#topic('status'), payload: Buffer.from(this.#statusPayload('offline')), qos: 1, retain: true },
    };
    if (config.username) extra.username = config.username;
    if (config.password) extra.password = config.password;
    const client = connect(mqttClientOptions(endpoint, extra));
    this.#client = client;
    client.on('connect', () => {
      if (this.#client !== client) return;
      this.#state = 'connected';
      this.#attempt = 0;
      log.info('uplink_connected', { host: endpoint.host, port: endpoint.port, session: this.#session, pending: this.pending() });
      const hello = JSON.stringify({ version: this.#o.version, interfaces: this.#o.interfaces(), ts: this.#connectionTs });
      client.publishAsync(this.#topic('hello'), hello, { qos: 1, retain: true }).catch(() => {});
      client.publishAsync(this.#topic('status'), this.#statusPayload('online'), { qos: 1, retain: true }).catch(() => {});
      this.#drain();
    });
    client.on('error', (e) => {
      if (this.#client === client) log.warn('uplink_error', { error: e.message });
    });
    client.on('close', () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      client.end(true);
      this.#scheduleReconnect();
    });
  }

  #scheduleReconnect(): void {
    if (this.#state === 'stopped') return;
    const { baseMs, maxMs } = this.#o.backoff ?? { baseMs: 1000, maxMs: 60_000 };
    // Exponential with full jitter: a fleet that lost its broker does not return in lockstep.
    const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(this.#attempt, 20));
    const delay = Math.max(baseMs / 2, Math.floor(Math.random() * ceiling));
    this.#attempt++;
    this.#state = 'backoff';
    this.#o.log.warn('uplink_disconnected', { retry_in_ms: delay, attempt: this.#attempt, pending: this.pending(), note: 'events stay in the outbox until the broker acknowledges them' });
    this.#timer = this.#o.clock.setTimeout(() => this.#connect(), delay);
  }

  #drain(): void {
    if (this.#draining) {
      this.#again = true;
      return;
    }
    const client = this.#client;
    if (!client || this.#state !== 'connected') return;
    this.#draining = true;
    this.#drainDone = this.#drainRounds(client)
      .catch((error) => this.#o.log.warn('uplink_publish_failed', { error: (error as Error).message, note: 'kept in the outbox; sent again after the reconnect' }))
      .finally(() => {
        this.#draining = false;
        if (this.#again) {
          this.#again = false;
          this.#drain();
        }
      });
  }

  async #drainRounds(client: MqttClient): Promise<void> {
    const batch = this.#o.batch ?? 50;
    while (this.#client === client && this.#state === 'connected') {
      if (this.#o.db.isTransaction) {
        // Someone's transaction is open on our connection: reading now could publish a row
        // that is then rolled back. Look again shortly.
        await new Promise((r) => setTimeout(r, BUSY_RETRY_MS));
        continue;
      }
      const rows = this.#outbox.oldest(batch);
      if (rows.length === 0) return;
      // Published in seq order on one connection, so the broker forwards them in order; each
      // row goes only when its own PUBACK arrives.
      await Promise.all(
        rows.map((row) =>
          client.publishAsync(this.#topic(row.kind), row.payload, { qos: 1 }).then(() => {
            this.#outbox.delete(row.seq);
          }),
        ),
      );
    }
  }
}
