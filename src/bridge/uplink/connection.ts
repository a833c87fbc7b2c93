import { randomBytes } from 'node:crypto';
import type { IClientOptions, MqttClient } from 'mqtt';
import { type MqttEndpoint, mqttClientOptions, parseMqttUrl } from '../../hubwire/mqtt-options.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { UplinkConfig } from './config.ts';

// One MQTT connection to the broker at a time, and the reconnecting. mqtt.js keeps its own
// outgoing store only in memory (docs/dependencies.md, "Mosquitto 2.0.11"), so it gets one
// connection attempt at a time (reconnectPeriod 0) and this class reconnects, with exponential
// backoff and full jitter on the injected clock.
//
// What a connection is for is its handler's business, chosen when it opens: the enrollment
// (enrollment.ts) while the bridge has no credentials, else the session as the bridge
// (session.ts). The handler hears only its own client: events of a client this class has left
// behind are not passed on. Each connection has a random id (conn) and the time it was opened,
// which its status messages carry.

const CONNECT_TIMEOUT_MS = 10_000;
const OFFLINE_PUBLISH_TIMEOUT_MS = 3000;

export type ConnectionState = 'idle' | 'enrolling' | 'connecting' | 'connected' | 'backoff' | 'stopped';

export interface ConnectionHandler {
  /** The state while the connection is up; 'connected' also resets the backoff (a connection
   *  that only ends in an enrollment refusal must keep backing off). */
  readonly upState: 'enrolling' | 'connected';
  /** Client id and last will of a new connection (conn and openedAt are already set). */
  clientOptions(): Pick<IClientOptions, 'clientId' | 'will'>;
  connected(client: MqttClient): void;
  message(client: MqttClient, topic: string, payload: Buffer): void;
  /** The connection closed; the answer is a fixed delay before the next one, or undefined for
   *  the backoff. */
  closed(): number | undefined;
}

export interface UplinkConnectionOptions {
  config: UplinkConfig;
  log: Logger;
  clock: Clock;
  /** Reconnect backoff: base doubles per failed attempt up to max, with full jitter. */
  backoff?: { baseMs: number; maxMs: number };
  /** The handler for the next connection. */
  handler(): ConnectionHandler;
  /** The outbox cap, whose count of rows the log shows. */
  cap: { readonly rows: number };
}

/** mqtt.js, once the first connection loaded it. */
let mqtt: typeof import('mqtt') | undefined;

export class UplinkConnection {
  readonly #o: UplinkConnectionOptions;
  readonly #endpoint: MqttEndpoint;
  #client: MqttClient | undefined;
  #state: ConnectionState = 'idle';
  #subscribed = false;
  #conn = '';
  #openedAt = '';
  #attempt = 0;
  #timer: TimerHandle | undefined;

  constructor(options: UplinkConnectionOptions) {
    this.#o = options;
    this.#endpoint = parseMqttUrl(options.config.mqtt_url);
  }

  get state(): ConnectionState {
    return this.#state;
  }

  get endpoint(): MqttEndpoint {
    return this.#endpoint;
  }

  /** The current client, connected or not. */
  get client(): MqttClient | undefined {
    return this.#client;
  }

  /** The client while connected as the bridge. */
  get up(): MqttClient | undefined {
    return this.#state === 'connected' ? this.#client : undefined;
  }

  /** The client while connected as the bridge with its subscriptions in place. */
  get live(): MqttClient | undefined {
    return this.#subscribed ? this.up : undefined;
  }

  /** This connection's random id. */
  get conn(): string {
    return this.#conn;
  }

  /** When this connection was opened (ISO). */
  get openedAt(): string {
    return this.#openedAt;
  }

  /** The handler's subscriptions are in place: the connection is live. */
  subscribed(): void {
    this.#subscribed = true;
  }

  /** Leaves idle for connecting; false when started or stopped already. */
  starting(): boolean {
    if (this.#state !== 'idle') return false;
    this.#state = 'connecting';
    return true;
  }

  connect(): void {
    if (this.#state === 'stopped') return;
    const { config, log } = this.#o;
    this.#state = 'connecting';
    // mqtt.js (some 120 modules) loads with the first connection, not with every bridge: one
    // without a hub never needs it (docs/performance.md "Memory and start-up").
    if (!mqtt) {
      import('mqtt').then(
        (loaded) => {
          mqtt = loaded;
          this.connect();
        },
        (error: Error) => {
          log.error('uplink_mqtt_unavailable', { error: error.message });
          this.#reconnectLater();
        },
      );
      return;
    }
    this.#openedAt = new Date(this.#o.clock.now()).toISOString();
    this.#conn = randomBytes(9).toString('base64url');
    const handler = this.#o.handler();
    const extra: IClientOptions = {
      protocolVersion: 4,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: CONNECT_TIMEOUT_MS,
      ...handler.clientOptions(),
    };
    if (config.username) extra.username = config.username;
    if (config.password) extra.password = config.password;
    const client = mqtt.connect(mqttClientOptions(this.#endpoint, extra));
    this.#client = client;
    client.on('connect', () => {
      if (this.#client !== client) return;
      this.#state = handler.upState;
      if (handler.upState === 'connected') this.#attempt = 0;
      this.#subscribed = false;
      handler.connected(client);
    });
    client.on('message', (topic, payload) => {
      if (this.#client !== client) return;
      handler.message(client, topic, payload);
    });
    client.on('error', (e) => {
      if (this.#client === client) log.warn('uplink_error', { error: e.message });
    });
    client.on('close', () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      this.#subscribed = false;
      const delay = handler.closed();
      client.end(true);
      this.#reconnectLater(delay);
    });
  }

  /** Ends this client and connects again at once, without backoff (enrollment stored the
   *  credentials: the next connection is the bridge's own, with its client id and last will). */
  restart(client: MqttClient): void {
    this.#client = undefined;
    client.end(true, {}, () => this.connect());
  }

  /** Publishes the farewell (status offline) if connected, disconnects cleanly and stops
   *  reconnecting. Publishing it before a clean disconnect suppresses the last will. */
  async close(farewell: { topic: string; payload: string }): Promise<void> {
    if (this.#state === 'stopped') return;
    const wasConnected = this.#state === 'connected';
    this.#state = 'stopped';
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    if (wasConnected) {
      const published = client.publishAsync(farewell.topic, farewell.payload, { qos: 1, retain: true }).catch(() => {});
      await Promise.race([published, new Promise((r) => setTimeout(r, OFFLINE_PUBLISH_TIMEOUT_MS).unref())]);
      // A clean end waits for what is in flight; a broker that no longer answers must not
      // hold the shutdown: after a second the connection is dropped.
      // (mqtt.js ignores a second end() while the first waits, so the socket is destroyed.)
      const ended = await Promise.race([client.endAsync().then(() => true, () => true), new Promise<boolean>((r) => setTimeout(() => r(false), 1000).unref())]);
      if (!ended) client.stream?.destroy();
    } else {
      await client.endAsync(true).catch(() => {});
    }
  }

  #reconnectLater(fixedDelayMs?: number): void {
    if (this.#state === 'stopped') return;
    const { baseMs, maxMs } = this.#o.backoff ?? { baseMs: 1000, maxMs: 60_000 };
    // Exponential with full jitter: a fleet that lost its broker does not return in lockstep.
    const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(this.#attempt, 20));
    const delay = fixedDelayMs ?? Math.max(baseMs / 2, Math.floor(Math.random() * ceiling));
    this.#attempt++;
    this.#state = 'backoff';
    this.#o.log.warn('uplink_disconnected', { retry_in_ms: delay, attempt: this.#attempt, pending: this.#o.cap.rows, note: 'events stay in the outbox until the hub acknowledges them' });
    this.#timer = this.#o.clock.setTimeout(() => this.connect(), delay);
  }
}
