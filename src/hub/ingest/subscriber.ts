import { connect, type IPublishPacket, type MqttClient } from 'mqtt';
import type { Counter, MetricsRegistry } from '../../lib/metrics.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { HubStore } from '../store/store.ts';
import { mqttClientOptions, parseMqttUrl } from '../../hubwire/mqtt-options.ts';
import { ackView, ingestSubscription, uplinkTopic } from '../../hubwire/topics.ts';
import { enrollTopic, signPayload } from '../../hubwire/credentials.ts';
import type { BridgeEnrollments } from '../bridges/service.ts';
import { IngestBatcher, MAX_BATCH, type SignedAck } from './batcher.ts';

// The hub learns about bridges over MQTT (docs/api.md sections 1 and 6, docs/design.md section 8).
// Delivery is at-least-once end to end: the hub keeps a persistent session (clean: false, a
// fixed client id, MQTT 5 session expiry) so the broker queues events while the hub is down,
// and it acknowledges a message (PUBACK) only after the store has it, by taking over mqtt.js's
// handleMessage. Messages are stored in batches, one transaction each (batcher.ts); a batch's
// PUBACKs go out after its commit. A store failure leaves the batch unacknowledged and drops
// the connection, so the broker sends it again after the reconnect. Duplicates are harmless:
// events are stored once per (tenant, event_id).
//
// Decisions (docs/hub.md): a message for a tenant the hub does not know, or one marked for
// deletion, is dropped and counted ("unknown_tenant", "tenant_deleted"): tenants are created
// by operators (create-key), never by whoever can publish. Malformed topics and payloads are
// dropped, counted by reason and logged (at most once a minute per reason), never fatal.
//
// Acknowledgements to the bridges (docs/hub.md, "Acknowledgements"): after a batch
// commits, each bridge whose events (or gone report, or online) it held gets its sequence
// state on fieldbridge/v1/<tenant>/<bridge>/ack, QoS 1, not retained: cumulative (upto), the
// highest number stored and the gaps between (which the hub asks for). At most one ack per
// bridge per ACK_INTERVAL_MS from this replica; what comes in between is folded into the next.
// The state is read from the database inside the batch's transaction, so an ack from any
// replica is true whenever it arrives, and the bridge may act on them in any order. An
// enrolled bridge's acks are signed with its secret, as its messages are.
//
// Enrollment (docs/hub.md, "Enrollment"): a request on
// fieldbridge/v1/_enroll/<nonce>/request is answered on .../reply (QoS 1, not retained) by
// BridgeEnrollments.exchange, in the batch that holds it; the outcome is counted in
// fieldbridge_hub_enrollments_total.

/** MQTT 5 session expiry: how long the broker keeps queueing for a hub that is down. */
export const SESSION_EXPIRY_S = 7 * 24 * 3600;
/** Messages taken but not yet being written at which the hub stops reading the socket. */
const HIGH_WATER = 2 * MAX_BATCH;
/** MQTT 5 Receive Maximum: unacknowledged messages the broker may have on the way to us. */
export const RECEIVE_MAXIMUM = 2 * MAX_BATCH;
/** Passed to mqtt.js's handleMessage callback: "no PUBACK now", see start(). */
const ACK_LATER = new Error('acknowledged after the batch commits');
const WARN_EVERY_MS = 60_000;
/** Least time between two acks to one bridge from this replica. */
export const ACK_INTERVAL_MS = 200;

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
  /** Defaults to RECEIVE_MAXIMUM. */
  receiveMaximum?: number;
  /** Batch size and flush delay, defaults in batcher.ts (tests and the benchmark vary them). */
  maxBatch?: number;
  flushDelayMs?: number;
  /** Defaults to ACK_INTERVAL_MS. */
  ackIntervalMs?: number;
  /** Answers enrollment requests; without it they are refused (counted). */
  enrollments?: BridgeEnrollments;
  /** HUB_ACCEPT_UNENROLLED=1: bridge ids never enrolled may publish unsigned (batcher.ts). */
  acceptUnenrolled?: boolean;
}

interface AckSlot {
  pending?: SignedAck;
  lastAt: number;
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * PUBACKs for the given message ids, as one buffer. MQTT 3.1.1 section 3.4 and MQTT 5 section
 * 3.4.2.1: fixed header 0x40, remaining length 2, the packet id; MQTT 5 lets the reason code
 * and properties be left out when the reason is 0 (success). One write per batch instead of
 * one packet object, encoding and stream write per message through mqtt.js.
 */
export function pubacks(ids: number[]): Buffer {
  const out = Buffer.allocUnsafe(ids.length * 4);
  for (let i = 0; i < ids.length; i++) {
    out[i * 4] = 0x40;
    out[i * 4 + 1] = 2;
    out.writeUInt16BE(ids[i], i * 4 + 2);
  }
  return out;
}

export class HubIngest {
  readonly #o: IngestOptions;
  readonly #stored: Counter;
  readonly #rejected: Counter;
  readonly #lastWarn = new Map<string, number>();
  readonly #batcher: IngestBatcher;
  #client: MqttClient | undefined;
  /** close() began: no message is taken any more, but acks still go out on #client. */
  #closing = false;
  #subscribed = false;
  #failedStream: unknown;
  #acks: number[] = [];
  #ackStream: unknown;
  readonly #seqAcks = new Map<string, AckSlot>();
  readonly #acksSent: Counter;
  readonly #enrolled: Counter;

  constructor(options: IngestOptions) {
    this.#o = options;
    this.#stored = options.metrics.counter('fieldbridge_hub_ingest_total', 'MQTT messages taken in, by kind and result (stored; duplicate: event already stored; ignored: status older than the one held; cleared: empty retained message).');
    this.#rejected = options.metrics.counter('fieldbridge_hub_ingest_rejected_total', 'MQTT messages dropped, by reason.');
    this.#acksSent = options.metrics.counter('fieldbridge_hub_acks_total', 'Acknowledgements published to bridges, by whether they asked for missing sequence numbers.');
    this.#enrolled = options.metrics.counter('fieldbridge_hub_enrollments_total', 'Enrollment exchanges answered, by outcome: exchanged, unknown_token, revoked, token_used, bad_request.');
    this.#batcher = new IngestBatcher({
      store: options.store,
      clock: options.clock,
      stored: this.#stored,
      reject: (reason, fields) => this.#reject(reason, fields),
      acknowledge: (acks) => this.#acknowledge(acks),
      enroll: options.enrollments ? (nonce, payload) => this.#enroll(nonce, payload) : undefined,
      acceptUnenrolled: options.acceptUnenrolled,
      maxBatch: options.maxBatch,
      flushDelayMs: options.flushDelayMs,
    });
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
        properties: {
          sessionExpiryInterval: this.#o.sessionExpiryS ?? SESSION_EXPIRY_S,
          // How many unacknowledged messages the broker may have on the way to us (MQTT 5
          // section 3.1.2.11.3; left out it means 65,535): a bound on what the hub holds in
          // memory while batches are written, and room for two full batches.
          receiveMaximum: this.#o.receiveMaximum ?? RECEIVE_MAXIMUM,
        },
        reconnectPeriod: this.#o.reconnectMs ?? 2000,
        connectTimeout: 10_000,
        resubscribe: true,
        // mqtt.js traces each packet through the `debug` package, several calls a message,
        // each asking whether DEBUG is set; a no-op spares that per message. Our own log
        // lines above and below say what an operator needs.
        log: () => {},
      }),
    );
    this.#client = client;
    // mqtt.js parses the next packet only after handleMessage calls back, then sends the
    // PUBACK itself (node_modules/mqtt/build/lib/handlers/publish.js, QoS 1). Calling back
    // with an error at once lets it parse on without that PUBACK (the error goes to its
    // parsing loop's callback, which ignores it); ours goes out when the message's batch has
    // committed (#ack), and only on the connection that brought the message (a PUBACK on a
    // later connection could name another message; the broker resends unacknowledged ones
    // after a reconnect anyway).
    client.handleMessage = (packet: IPublishPacket, callback: (error?: Error) => void) => {
      // Closing: not taken, not acknowledged; the broker keeps it for the next start.
      if (this.#client !== client || this.#closing) return callback(ACK_LATER);
      const stream = client.stream;
      const { messageId, qos } = packet;
      this.#batcher.take(packet.topic, packet.payload as Buffer, (error) => {
        if (error) return this.#storeFailed(client, stream, packet.topic, error);
        if (qos > 0) this.#ack(client, stream, messageId!);
      });
      // Back-pressure: with two batches waiting, mqtt.js stops parsing until one is written,
      // the socket fills, and the broker holds the rest as in flight to us, where its
      // max_queued_messages does not drop them (docs/hub.md, "The broker's queue").
      this.#batcher.whenBelow(HIGH_WATER, () => callback(ACK_LATER));
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

  /** One message, as if from the broker; resolves once its batch is stored. For tests. */
  handle(topic: string, payload: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => this.#batcher.take(topic, payload, (error) => (error ? reject(error) : resolve())));
  }

  async close(): Promise<void> {
    const client = this.#client;
    if (!client || this.#closing) return;
    this.#closing = true;
    // What has arrived is written and acknowledged before the connection ends: the client is
    // kept until then, so the acks of the last batches go out (to the bridges too).
    await this.#batcher.drain();
    for (const [key, slot] of this.#seqAcks) {
      clearTimeout(slot.timer);
      if (slot.pending) this.#sendAck(client, slot);
      this.#seqAcks.delete(key);
    }
    this.#client = undefined;
    // A clean end waits for the acks in flight; a broker that stopped answering must not hold
    // the shutdown (a hung close was seen under load in the tests): after 2 s the socket is
    // destroyed (mqtt.js ignores a second end() while the first waits).
    const ended = await Promise.race([new Promise<boolean>((resolve) => client.end(false, {}, () => resolve(true))), new Promise<boolean>((r) => setTimeout(() => r(false), 2000).unref())]);
    if (!ended) client.stream?.destroy();
  }

  // A batch's messages are done one after the other in one go: their PUBACKs are gathered
  // and written together once that run of callbacks is over, in the order they came.
  #ack(client: MqttClient, stream: unknown, messageId: number): void {
    if (stream !== this.#ackStream) {
      this.#acks = [];
      this.#ackStream = stream;
    }
    this.#acks.push(messageId);
    if (this.#acks.length > 1) return;
    queueMicrotask(() => {
      const ids = this.#acks;
      this.#acks = [];
      // Only on the connection that brought the messages (see start()).
      if (ids.length === 0 || client.stream !== this.#ackStream || !client.connected) return;
      client.stream.write(pubacks(ids));
    });
  }

  async #enroll(nonce: string, payload: Uint8Array): Promise<void> {
    const result = await this.#o.enrollments!.exchange(nonce, payload);
    this.#enrolled.inc({ outcome: result.outcome });
    if (result.outcome === 'exchanged') this.#o.log.info('hub_bridge_enrolled', { bridge_id: result.bridgeId, nonce });
    else this.#reject(`enroll_${result.outcome}`, { nonce });
    // Lost with the connection: the bridge asks again (the exchange can be repeated until
    // its first signed message arrives).
    this.#client?.publish(enrollTopic(nonce, 'reply'), result.reply, { qos: 1 }, () => {});
  }

  #acknowledge(acks: SignedAck[]): void {
    const client = this.#client;
    if (!client) return;
    const interval = this.#o.ackIntervalMs ?? ACK_INTERVAL_MS;
    for (const a of acks) {
      const key = a.tenantId + '/' + a.bridgeId;
      let slot = this.#seqAcks.get(key);
      if (!slot) this.#seqAcks.set(key, (slot = { lastAt: -Infinity }));
      // A handshake (conn) folded into a later state keeps its conn: the bridge waits for it.
      slot.pending = a.conn === undefined && slot.pending?.conn !== undefined ? { ...a, conn: slot.pending.conn } : a;
      if (slot.timer) continue;
      const wait = slot.lastAt + interval - performance.now();
      if (wait <= 0) this.#sendAck(client, slot);
      this.#armAck(key, slot, Math.max(wait, interval));
    }
  }

  /** Sends what waits when the interval is over; forgets the bridge when nothing does. */
  #armAck(key: string, slot: AckSlot, wait: number): void {
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      const client = this.#client;
      if (!slot.pending || !client) {
        this.#seqAcks.delete(key);
        return;
      }
      this.#sendAck(client, slot);
      this.#armAck(key, slot, this.#o.ackIntervalMs ?? ACK_INTERVAL_MS);
    }, wait);
    slot.timer.unref?.();
  }

  #sendAck(client: MqttClient, slot: AckSlot): void {
    const a = slot.pending!;
    slot.pending = undefined;
    slot.lastAt = performance.now();
    const { upto, high, missing } = ackView(a);
    const payload = { upto, high, missing, seen: a.seen, ...(a.conn !== undefined ? { conn: a.conn } : {}), ts: new Date(this.#o.clock.now()).toISOString() };
    this.#acksSent.inc({ missing: missing.length > 0 ? 'yes' : 'no' });
    const topic = uplinkTopic(a.tenantId, a.bridgeId, 'ack');
    const text = JSON.stringify(payload);
    // QoS 1; lost with a connection, it is followed by the next one (the bridge sends again
    // what stays unacknowledged, and its online after a reconnect asks for a fresh one).
    client.publish(topic, a.secret ? signPayload(a.secret, topic, text) : text, { qos: 1 }, () => {});
  }

  #storeFailed(client: MqttClient, stream: unknown, topic: string, error: Error): void {
    // One line per connection: the messages after it on the same connection fail alike.
    if (client.stream !== stream || stream === this.#failedStream) return;
    this.#failedStream = stream;
    this.#o.log.error('hub_ingest_store_failed', { topic, error: error.message, next: 'not acknowledged; reconnecting so the broker sends it again' });
    client.stream?.destroy();
  }

  #reject(reason: string, fields: Record<string, unknown>): void {
    this.#rejected.inc({ reason });
    const now = this.#o.clock.now();
    if (now - (this.#lastWarn.get(reason) ?? -Infinity) < WARN_EVERY_MS) return;
    this.#lastWarn.set(reason, now);
    this.#o.log.warn('hub_ingest_rejected', { reason, ...fields, note: 'dropped and counted in fieldbridge_hub_ingest_rejected_total; repeats are logged at most once a minute' });
  }
}
