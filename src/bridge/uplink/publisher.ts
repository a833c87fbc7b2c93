import { type KeyObject, randomBytes } from 'node:crypto';
import { hashKey } from '../../auth/secrets.ts';
import type { DatabaseSync } from 'node:sqlite';
import type { IClientOptions, MqttClient } from 'mqtt';
import { commitGroup, committed, inTransaction, isBusyError, pendingCommit, withoutBusyWait } from '../../db/sqlite.ts';
import { mqttClientOptions, parseMqttUrl } from '../../hubwire/mqtt-options.ts';
import { type AckMessage, decodeUplinkPayload, EVENT_KINDS, MAX_PAYLOAD_BYTES, MAX_RANGES, type Range, SEQ_PREFIX_MAX_BYTES, TOPIC_SEGMENT, toRanges, type UplinkEventKind, type UplinkKind, uplinkTopic } from '../../hubwire/topics.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Logger } from '../../lib/log.ts';
import { Counter } from '../../lib/metrics.ts';
import { type EnrollRequest, enrollTopic, makeEnrollRequest, openEnrollReply, SIG_SUFFIX_BYTES, signingKey, signPayload, verifyPayload } from '../../hubwire/credentials.ts';
import { AckedRows } from './acked.ts';
import { OutboxCap } from './cap.ts';
import { type StoredCredentials, UplinkOutbox } from './outbox.ts';
import { clampTo, storedLocal, subtract } from './sequence.ts';

// The bridge's link to the hub (docs/design.md section 8, issue 7 item 7, issue 15; the wire
// protocol in docs/hub.md). Events go into the outbox table first (enqueue, inside the
// router's transaction), then a drain loop publishes them in order at QoS 1, each with its
// sequence number. A row is deleted only when the HUB has acknowledged it (ack topic), never
// on the broker's PUBACK: a broker that drops queued messages (max_queued_messages) or loses
// them in a restart without persistence costs nothing but a resend. mqtt.js keeps its own
// outgoing store only in memory (docs/dependencies.md, "Mosquitto 2.0.11"), so it gets one
// connection attempt at a time (reconnectPeriod 0) and this class does the reconnecting, with
// backoff on the injected clock.
//
// Sequence numbers: wire seq = the row's local seq (AUTOINCREMENT, contiguous: a rolled-back
// insert gives its number back) + an offset kept in uplink_state. A restored or recreated
// database would give out numbers the hub has seen again, so nothing of a boot is published
// before the hub has answered once (its ack to our online, or any ack): when the hub has seen
// a number at or past the first one this boot would give out, the offset moves every row still
// held past the hub's highest (docs/hub.md, "A restored database").
//
// Flow: at most `window` rows published and not yet acknowledged; at most `rate` publishes a
// second; rows not acknowledged within the ack timeout (doubling while nothing moves, up to
// 5 minutes) and after every reconnect are published again, oldest first. Gaps the hub asks
// for are sent again (or reported gone when the outbox cap dropped them).
//
// Acks are checked against what this boot published (issue 15 review): the numbers an ack says
// are stored are applied only up to the highest row published this boot, so an ack of another
// bridge with our bridge_id (a cloned card) or a forged one cannot delete rows never sent.
// Until the hub's first answer the state is `waiting_for_hub` (health, /metrics), with one
// warning naming the likely causes once the first ack timeout has passed.
//
// Each connection has a random id (conn) in its status: the last will is status offline with
// it; after the ack subscription, hello and status online are published retained. close()
// publishes the offline status itself before a clean disconnect, which suppresses the will.
//
// Enrollment (issue 15 item 3; docs/hub.md, "Enrollment"): given an enrollment token
// (hub.enrollment_token or SERVICE_HUB_ENROLL_TOKEN) and no credentials from it yet, the first
// connection only trades the token for the bridge's tenant, id and secret (state `enrolling`;
// src/hubwire/credentials.ts), stores them in uplink_state, and connects again as that bridge.
// Credentials once stored are used whether or not the token stays in the configuration; a
// different token makes a new exchange. An enrolled bridge signs everything it publishes (its
// last will included) and takes only acks signed by the hub with the same secret. Without a
// token and credentials the bridge publishes unsigned under hub.tenant and its bridge id, which
// a hub takes only with HUB_ACCEPT_UNENROLLED=1.

export interface UplinkConfig {
  mqtt_url: string;
  /** hub.tenant; unused once enrolled (the hub names the tenant). */
  tenant: string;
  /** The bridge's own id; unused once enrolled (the hub names the bridge). */
  bridge_id: string;
  /** A one-time enrollment token (fbe_...) to trade for credentials (issue 15 item 3). */
  enrollment_token?: string | null;
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
  /** Rows published per round of the drain loop. */
  batch?: number;
  /** Rows published and not yet acknowledged, at most (default 500). */
  window?: number;
  /** Publishes per second, at most (default 1000). */
  rate?: number;
  /** First ack timeout (default 10 s; doubles while nothing is acknowledged, up to 5 min). */
  ackTimeoutMs?: number;
  /** Outbox cap in bytes (hub.outbox_max_mb; default 64 MiB). */
  outboxMaxBytes?: number;
  /** Shared across restarts of the publisher (UplinkService owns them). */
  counters?: { dropped: Counter; refused: Counter };
}

/** waiting_for_hub: connected to the broker, but no hub has answered this boot's online yet
 *  (nothing is published until one does). */
export type UplinkState = 'idle' | 'enrolling' | 'connecting' | 'connected' | 'waiting_for_hub' | 'backoff' | 'stopped';
export const UPLINK_STATES: readonly UplinkState[] = ['idle', 'enrolling', 'connecting', 'connected', 'waiting_for_hub', 'backoff', 'stopped'];

const CONNECT_TIMEOUT_MS = 10_000;
const OFFLINE_PUBLISH_TIMEOUT_MS = 3000;
const BUSY_RETRY_MS = 50;
const TICK_MS = 250;
const MAX_ACK_TIMEOUT_MS = 300_000;
/** A gap the hub asks for is sent again only if its last send is older than this (or than
 *  half the ack timeout, if shorter): it may still be on its way. */
const MIN_RESEND_MS = 2000;
const RECOUNT_EVERY_MS = 300_000;
/** Outbox rows looked at per gap request at most (a wide `missing` range is answered in parts:
 *  the hub asks again for what is left). */
const GAP_ROWS_MAX = 1000;
export const DEFAULT_OUTBOX_MAX_BYTES = 64 * 1024 * 1024;
/** How long an enrollment request waits for the hub's reply before it is asked again. */
const ENROLL_REPLY_TIMEOUT_MS = 30_000;
/** ... doubling while no reply comes, up to this: a hub far behind (a backlog after an outage)
 *  answers each request late, and every new request would make the one before it stale. */
const ENROLL_REPLY_TIMEOUT_MAX_MS = 600_000;
/** After a refusal only a new token can cure (unknown, revoked, spent), the next ask waits this
 *  long: a bridge with a dead token must not hammer the broker and the hub. */
const ENROLL_REFUSED_RETRY_MS = 300_000;

/** Which credentials the bridge publishes with: stored ones, or none yet (enroll), or the
 *  configuration's tenant and id, unsigned (a bridge that was never given a token). */
export function pickIdentity(config: UplinkConfig, stored: StoredCredentials | null): { tenant: string; bridgeId: string; secret?: KeyObject } | 'enroll' {
  const token = config.enrollment_token ?? null;
  if (stored && (token === null || stored.token_sha256 === hashKey(token))) return { tenant: stored.tenant, bridgeId: stored.bridge_id, secret: signingKey(Buffer.from(stored.secret, 'base64url')) };
  if (token !== null) return 'enroll';
  return { tenant: config.tenant, bridgeId: config.bridge_id };
}


/** mqtt.js, once the first connection loaded it. */
let mqtt: typeof import('mqtt') | undefined;

export class UplinkPublisher {
  readonly #o: UplinkPublisherOptions;
  readonly #outbox: UplinkOutbox;
  /** Who this bridge publishes as; tenant and bridgeId empty while it must still enroll. */
  #tenant = '';
  #bridgeId = '';
  #secret: KeyObject | undefined;
  #enrolling = false;
  #enrollRequest: EnrollRequest | undefined;
  #enrollTimer: ReturnType<typeof setTimeout> | undefined;
  #lastRefusal = '';
  #refusedForGood = false;
  #enrollWaitMs = ENROLL_REPLY_TIMEOUT_MS;
  #warnedBadAck = false;
  readonly #acked: AckedRows;
  readonly #cap: OutboxCap;
  readonly #window: number;
  readonly #rate: number;
  readonly #baseTimeout: number;
  #client: MqttClient | undefined;
  #state: UplinkState = 'idle';
  #session = 0;
  #conn = '';
  #connectionTs = '';
  #attempt = 0;
  #timer: TimerHandle | undefined;
  #tick: ReturnType<typeof setInterval> | undefined;
  #draining = false;
  #again = false;
  #drainDone: Promise<void> = Promise.resolve();
  // Numbering (per boot).
  #offset = 0;
  #bootFirstLocal = 1;
  #numbered = false;
  /** The highest local seq published this boot: acks are applied up to it, never past. */
  #highestPublished = 0;
  #warnedBeyond = false;
  #warnedWaiting = false;
  // Per connection.
  #subscribed = false;
  #cursor = 0;
  readonly #sent = new Map<number, number>();
  #resend = new Set<number>();
  #acksWaiting: AckMessage[] = [];
  /** Acks wait for the open group of ingests to commit (#takeAcks). */
  #acksAfterCommit = false;
  #lastProgress = 0;
  #timeout: number;
  #askedAt = 0;
  #lastGone = -Infinity;
  #lastRecount = 0;
  #paceAt = 0;

  constructor(options: UplinkPublisherOptions) {
    const { mqtt_url } = options.config;
    const outbox = new UplinkOutbox(options.db);
    const stored = outbox.credentials();
    const identity = pickIdentity(options.config, stored);
    const problems: string[] = [];
    if (identity !== 'enroll') {
      const { tenant, bridgeId } = identity;
      if (!TOPIC_SEGMENT.test(tenant)) problems.push(`tenant ${JSON.stringify(tenant)} must be 1 to 64 letters, digits, "_", "." or "-"`);
      if (!TOPIC_SEGMENT.test(bridgeId)) problems.push(`bridge_id ${JSON.stringify(bridgeId)} must be 1 to 64 letters, digits, "_", "." or "-"`);
    }
    try {
      parseMqttUrl(mqtt_url);
    } catch (e) {
      problems.push(`mqtt_url: ${(e as Error).message}`);
    }
    if (problems.length > 0) throw new AppError('ERR_UPLINK_CONFIG', 400, `hub uplink settings: ${problems.join('; ')}`);
    this.#o = options;
    this.#outbox = outbox;
    if (identity === 'enroll') this.#enrolling = true;
    else this.#useIdentity(identity);
    this.#window = options.window ?? 500;
    this.#rate = options.rate ?? 1000;
    this.#baseTimeout = options.ackTimeoutMs ?? 10_000;
    this.#timeout = this.#baseTimeout;
    this.#acked = new AckedRows(options.db, this.#outbox, options.log);
    const counters = options.counters ?? { dropped: new Counter(), refused: new Counter() };
    this.#cap = new OutboxCap(this.#outbox, options.outboxMaxBytes ?? DEFAULT_OUTBOX_MAX_BYTES, options.log, counters, () => options.clock.now());
    this.#cap.onDropped = (seq) => {
      this.#sent.delete(seq);
      this.#resend.delete(seq);
    };
    this.#acked.onDeleted = (rows, bytes) => this.#cap.removed(rows, bytes);
  }

  get session(): number {
    return this.#session;
  }

  /** The tenant and bridge id in use (empty until an enrollment gave them). */
  identity(): { tenant: string; bridge_id: string; enrolled: boolean } {
    return { tenant: this.#tenant, bridge_id: this.#bridgeId, enrolled: this.#secret !== undefined };
  }

  #useIdentity(identity: { tenant: string; bridgeId: string; secret?: KeyObject }): void {
    this.#tenant = identity.tenant;
    this.#bridgeId = identity.bridgeId;
    this.#secret = identity.secret;
  }

  #topic(kind: UplinkKind): string {
    return uplinkTopic(this.#tenant, this.#bridgeId, kind);
  }

  /** The payload as published: signed with the secret once enrolled (hubwire/credentials.ts). */
  #sealed(topic: string, json: string): string {
    return this.#secret ? signPayload(this.#secret, topic, json) : json;
  }

  state(): UplinkState {
    // Connected to the broker, but the hub has not answered yet: nothing is published.
    if (this.#state === 'connected' && !this.#numbered) return 'waiting_for_hub';
    return this.#state;
  }

  /** Rows still waiting for the hub's acknowledgement. */
  pending(): number {
    return this.#outbox.count();
  }

  /** What the outbox holds as counted (issue 15 item 2). */
  outboxSize(): { rows: number; bytes: number; max_bytes: number } {
    return { rows: this.#cap.rows, bytes: this.#cap.bytes, max_bytes: this.#cap.maxBytes };
  }

  /** True once this boot's numbering is settled with the hub (and rows may be published). */
  get numbered(): boolean {
    return this.#numbered;
  }

  /** Counts this boot (the session in status messages) and starts connecting. */
  start(): void {
    if (this.#state !== 'idle') return;
    this.#state = 'connecting';
    this.#begin();
  }

  #begin(): void {
    if (this.#state === 'stopped') return;
    try {
      withoutBusyWait(this.#o.db, () => {
        this.#session = this.#outbox.nextSession();
        this.#noteWhomQueued();
      });
    } catch (error) {
      // Another process holds the lock: never wait for it on the event loop (issue 14).
      if (!isBusyError(error)) throw error;
      this.#timer = this.#o.clock.setTimeout(() => this.#begin(), 1000);
      return;
    }
    this.#bootFirstLocal = this.#outbox.lastAssigned() + 1;
    this.#offset = this.#outbox.seqOffset();
    this.#o.log.info('uplink_starting', { tenant: this.#tenant || undefined, bridge_id: this.#bridgeId || undefined, enrolled: this.#secret !== undefined, enrolling: this.#enrolling, session: this.#session, pending: this.#cap.rows });
    this.#tick = setInterval(() => this.#onTick(), TICK_MS);
    this.#tick.unref?.();
    this.#connect();
  }

  /**
   * Writes an event to the outbox and returns its event_id, or null when the outbox is full
   * (issue 15 item 2; counted and logged, the caller's transaction goes on). It runs on the
   * bridge's database connection, so inside a transaction the caller has open it commits or
   * rolls back with it.
   */
  enqueue(kind: UplinkEventKind, payload: Record<string, unknown>): string | null {
    if (!(EVENT_KINDS as readonly string[]).includes(kind)) throw new AppError('ERR_UPLINK_KIND', 400, `unknown uplink event kind ${JSON.stringify(kind)}; expected one of ${EVENT_KINDS.join(', ')}`);
    const now = this.#o.clock.now();
    const eventId = newId('evt', now);
    const ts = new Date(now).toISOString();
    // seq is spliced in front when published (`{"seq":N,` + this text): a record's own
    // top-level seq would come after it, and JSON's last duplicate key wins at the hub.
    const { seq: _ownSeq, ...record } = payload;
    const text = JSON.stringify({ ...record, event_id: eventId, ts });
    const bytes = Buffer.byteLength(text);
    // The hub refuses a payload past MAX_PAYLOAD_BYTES: never written, counted as refused.
    if (bytes + SEQ_PREFIX_MAX_BYTES + SIG_SUFFIX_BYTES > MAX_PAYLOAD_BYTES) {
      this.#cap.refuseTooLarge(kind, bytes + SEQ_PREFIX_MAX_BYTES + SIG_SUFFIX_BYTES, MAX_PAYLOAD_BYTES);
      return null;
    }
    if (!this.#cap.admit(kind, bytes)) return null;
    this.#outbox.insert(eventId, kind, text, ts);
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
    clearTimeout(this.#enrollTimer);
    clearInterval(this.#tick);
    const client = this.#client;
    this.#client = undefined;
    if (client) {
      if (wasConnected) {
        const offline = this.#sealed(this.#topic('status'), this.#statusPayload('offline'));
        const published = client.publishAsync(this.#topic('status'), offline, { qos: 1, retain: true }).catch(() => {});
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
    // A drain round waiting on a publish of the closed connection ends with it; never hang here.
    await Promise.race([this.#drainDone, new Promise((r) => setTimeout(r, 1000).unref())]);
    // An open group first: flushNow() would only ride it, and stop() leaves the ride (review).
    try {
      commitGroup(this.#o.db);
    } catch {
      // A failed group is told to its own waiters; the rows stay and are acknowledged again.
    }
    this.#acked.flushNow();
    this.#acked.stop();
    this.#o.log.info('uplink_stopped', { session: this.#session, pending: this.#cap.rows });
  }

  #statusPayload(state: 'online' | 'offline'): string {
    return JSON.stringify({ state, session: this.#session, ts: this.#connectionTs, conn: this.#conn });
  }

  #connect(): void {
    if (this.#state === 'stopped') return;
    const { config, log } = this.#o;
    this.#state = 'connecting';
    // mqtt.js (some 120 modules) loads with the first connection, not with every bridge: one
    // without a hub never needs it (issue 22 item 3; docs/performance.md "Memory and start-up").
    if (!mqtt) {
      import('mqtt').then(
        (loaded) => {
          mqtt = loaded;
          this.#connect();
        },
        (error: Error) => {
          log.error('uplink_mqtt_unavailable', { error: error.message });
          this.#scheduleReconnect();
        },
      );
      return;
    }
    this.#connectionTs = new Date(this.#o.clock.now()).toISOString();
    this.#conn = randomBytes(9).toString('base64url');
    const endpoint = parseMqttUrl(config.mqtt_url);
    const extra: IClientOptions = {
      clientId: this.#enrolling ? `fieldbridge-enroll-${this.#conn}` : `fieldbridge-${this.#tenant}-${this.#bridgeId}`.slice(0, 128),
      protocolVersion: 4,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: CONNECT_TIMEOUT_MS,
    };
    // An enrolling connection has no topics of its own yet, so no last will.
    if (!this.#enrolling) extra.will = { topic: this.#topic('status'), payload: Buffer.from(this.#sealed(this.#topic('status'), this.#statusPayload('offline'))), qos: 1, retain: true };
    if (config.username) extra.username = config.username;
    if (config.password) extra.password = config.password;
    const client = mqtt.connect(mqttClientOptions(endpoint, extra));
    this.#client = client;
    if (this.#enrolling) {
      this.#enrollOn(client, endpoint);
      return;
    }
    client.on('connect', () => {
      if (this.#client !== client) return;
      this.#state = 'connected';
      this.#attempt = 0;
      // Every reconnect sends again whatever is not acknowledged, oldest first.
      this.#subscribed = false;
      this.#cursor = 0;
      this.#sent.clear();
      this.#resend.clear();
      this.#lastProgress = this.#o.clock.now();
      log.info('uplink_connected', { host: endpoint.host, port: endpoint.port, session: this.#session, conn: this.#conn, pending: this.#cap.rows });
      // The ack subscription first, so the hub's answer to our online cannot be missed.
      client.subscribe(this.#topic('ack'), { qos: 1 }, (error) => {
        if (this.#client !== client) return;
        if (error) {
          log.warn('uplink_subscribe_failed', { error: error.message, next: 'reconnecting' });
          client.stream?.destroy();
          return;
        }
        this.#subscribed = true;
        const hello = JSON.stringify({ version: this.#o.version, interfaces: this.#o.interfaces(), ts: this.#connectionTs });
        client.publishAsync(this.#topic('hello'), this.#sealed(this.#topic('hello'), hello), { qos: 1, retain: true }).catch(() => {});
        this.#askHub(client);
        this.#drain();
      });
    });
    client.on('message', (topic, payload) => {
      if (this.#client !== client || topic !== this.#topic('ack')) return;
      // An enrolled bridge takes only acks the hub signed with its secret: an ack deletes rows.
      let body: Uint8Array = payload;
      if (this.#secret) {
        const check = verifyPayload(this.#secret, topic, payload);
        if (!check.ok) {
          if (!this.#warnedBadAck) {
            this.#warnedBadAck = true;
            log.warn('uplink_ack_not_signed', { reason: check.reason, note: 'an acknowledgement not signed with this bridge\'s secret was ignored (a hub older than enrollment, another bridge\'s hub, or a forgery); logged once per start' });
          }
          return;
        }
        body = Buffer.from(check.text, 'utf8');
      }
      const decoded = decodeUplinkPayload('ack', body);
      if (!decoded.ok || decoded.kind !== 'ack') {
        log.warn('uplink_bad_ack', { reason: decoded.ok ? 'kind' : decoded.reason, detail: decoded.ok ? undefined : decoded.detail });
        return;
      }
      this.#acksWaiting.push(decoded.value);
      this.#takeAcks();
    });
    client.on('error', (e) => {
      if (this.#client === client) log.warn('uplink_error', { error: e.message });
    });
    client.on('close', () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      this.#subscribed = false;
      client.end(true);
      this.#scheduleReconnect();
    });
  }

  /** Status online (retained): the hub answers it with an ack, which settles the numbering. */
  #askHub(client: MqttClient): void {
    this.#askedAt = this.#o.clock.now();
    client.publishAsync(this.#topic('status'), this.#sealed(this.#topic('status'), this.#statusPayload('online')), { qos: 1, retain: true }).catch(() => {});
  }

  /**
   * Whom the outbox's rows are for (issue 15 review): with a concrete identity, its tenant and
   * broker host; when a new enrollment token first appears, the rows queued so far and for whom
   * (kept across restarts, so events queued for the new owner while the hub could not be reached
   * are never taken for the old one's).
   */
  #noteWhomQueued(): void {
    const host = parseMqttUrl(this.#o.config.mqtt_url).host;
    if (!this.#enrolling) {
      this.#outbox.setQueuedFor({ tenant: this.#tenant, host });
      return;
    }
    const token = hashKey(this.#o.config.enrollment_token!);
    if (this.#outbox.handover()?.token_sha256 !== token) this.#outbox.setHandover({ token_sha256: token, through: this.#outbox.lastAssigned(), from: this.#outbox.queuedFor() });
  }

  /** An enrolling connection: ask the hub for credentials, store them, connect again as the bridge. */
  #enrollOn(client: MqttClient, endpoint: { host: string; port: number }): void {
    const { log, config } = this.#o;
    const token = config.enrollment_token!;
    const ask = () => {
      if (this.#client !== client || !client.connected) return;
      const request = makeEnrollRequest(token, this.#o.clock.now());
      const previous = this.#enrollRequest;
      this.#enrollRequest = request;
      if (previous) client.unsubscribe(enrollTopic(previous.nonce, 'reply'));
      client.subscribe(enrollTopic(request.nonce, 'reply'), { qos: 1 }, (error) => {
        if (this.#client !== client) return;
        if (error) {
          log.warn('uplink_subscribe_failed', { error: error.message, next: 'reconnecting' });
          client.stream?.destroy();
          return;
        }
        client.publishAsync(request.topic, request.payload, { qos: 1 }).catch(() => {});
      });
      // No reply (no hub subscribed, or it was lost): asked again with a new nonce, waiting
      // twice as long each time. After a refusal only a new token helps: the connection ends and
      // the next one comes after ENROLL_REFUSED_RETRY_MS. The refusal is not authenticated, so
      // until then a sealed reply to the same request is still taken.
      clearTimeout(this.#enrollTimer);
      const waited = this.#enrollWaitMs;
      this.#enrollTimer = setTimeout(() => {
        if (this.#client !== client) return;
        if (this.#refusedForGood) {
          client.stream?.destroy();
          return;
        }
        log.warn('uplink_enroll_no_reply', { waited_ms: waited, note: 'no hub answered the enrollment request; asking again (is a hub of this release subscribed to the broker?)' });
        this.#enrollWaitMs = Math.min(this.#enrollWaitMs * 2, ENROLL_REPLY_TIMEOUT_MAX_MS);
        ask();
      }, this.#refusedForGood ? Math.min(waited, 5000) : waited);
      this.#enrollTimer.unref?.();
    };
    client.on('connect', () => {
      if (this.#client !== client) return;
      // #attempt is not reset: a connection that only ends in a refusal must keep backing off.
      this.#state = 'enrolling';
      this.#refusedForGood = false;
      log.info('uplink_enrolling', { host: endpoint.host, port: endpoint.port, note: 'trading the enrollment token for this bridge\'s credentials' });
      ask();
    });
    client.on('message', (topic, payload) => {
      const request = this.#enrollRequest;
      if (this.#client !== client || !request || topic !== enrollTopic(request.nonce, 'reply')) return;
      const reply = openEnrollReply(payload, token, request, (s) => TOPIC_SEGMENT.test(s));
      if (!reply.ok) {
        // Not authenticated when refused (anyone could have sent it): logged; the connection
        // ends a few seconds later unless a sealed reply comes meanwhile (the timer above), and
        // a config change (a new token) restarts the uplink at once.
        const forGood = reply.refused === 'unknown_token' || reply.refused === 'revoked' || reply.refused === 'token_used';
        if (reply.detail !== this.#lastRefusal) {
          log.error('uplink_enroll_refused', { reason: reply.refused ?? 'bad_reply', detail: reply.detail, note: forGood ? `give the bridge a new enrollment token (POST /api/bridges on the hub); asking again every ${ENROLL_REFUSED_RETRY_MS / 60_000} minutes meanwhile` : 'asking again' });
        }
        this.#lastRefusal = reply.detail;
        if (forGood && !this.#refusedForGood) {
          this.#refusedForGood = true;
          clearTimeout(this.#enrollTimer);
          this.#enrollTimer = setTimeout(() => this.#client === client && client.stream?.destroy(), 5000);
          this.#enrollTimer.unref?.();
        }
        return;
      }
      const stored: StoredCredentials = { token_sha256: hashKey(token), tenant: reply.tenant, bridge_id: reply.bridgeId, secret: reply.secret.toString('base64url'), enrolled_at: new Date(this.#o.clock.now()).toISOString() };
      // Rows queued for another tenant or broker before the token came are not sent to this
      // one: a gateway handed from one owner to another must not carry the first one's events
      // over (#noteWhomQueued).
      const handover = this.#outbox.handover();
      const from = handover?.token_sha256 === stored.token_sha256 ? handover.from : null;
      const moved = from !== null && (from.tenant !== reply.tenant || from.host !== endpoint.host);
      let dropped = { rows: 0, bytes: 0 };
      try {
        withoutBusyWait(this.#o.db, () => {
          this.#outbox.setCredentials(stored);
          if (moved) dropped = this.#outbox.deleteThrough(handover!.through);
          this.#outbox.setQueuedFor({ tenant: reply.tenant, host: endpoint.host });
          this.#outbox.clearHandover();
        });
      } catch (error) {
        // The secret is not kept unless stored: the next exchange makes a new one.
        log.warn('uplink_enroll_store_failed', { error: (error as Error).message, next: 'asking again' });
        client.stream?.destroy();
        return;
      }
      if (dropped.rows > 0) {
        this.#cap.removed(dropped.rows, dropped.bytes);
        this.#o.counters?.dropped.inc({ kind: 'tenant_changed' }, dropped.rows);
        log.warn('uplink_outbox_dropped_tenant_changed', { rows: dropped.rows, previous_tenant: from!.tenant, previous_broker: from!.host, tenant: reply.tenant, note: 'events queued for the previous tenant or broker are not sent to the new one' });
      }
      clearTimeout(this.#enrollTimer);
      this.#enrolling = false;
      this.#refusedForGood = false;
      this.#enrollWaitMs = ENROLL_REPLY_TIMEOUT_MS;
      this.#enrollRequest = undefined;
      this.#useIdentity({ tenant: reply.tenant, bridgeId: reply.bridgeId, secret: signingKey(reply.secret) });
      log.info('uplink_enrolled', { tenant: reply.tenant, bridge_id: reply.bridgeId, note: 'credentials stored; connecting as this bridge' });
      // Connected again at once as the bridge: with its own client id and signed last will.
      this.#client = undefined;
      client.end(true, {}, () => this.#connect());
    });
    client.on('error', (e) => {
      if (this.#client === client) log.warn('uplink_error', { error: e.message });
    });
    client.on('close', () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      clearTimeout(this.#enrollTimer);
      client.end(true);
      this.#scheduleReconnect(this.#refusedForGood ? ENROLL_REFUSED_RETRY_MS : undefined);
    });
  }

  #scheduleReconnect(fixedDelayMs?: number): void {
    if (this.#state === 'stopped') return;
    const { baseMs, maxMs } = this.#o.backoff ?? { baseMs: 1000, maxMs: 60_000 };
    // Exponential with full jitter: a fleet that lost its broker does not return in lockstep.
    const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(this.#attempt, 20));
    const delay = fixedDelayMs ?? Math.max(baseMs / 2, Math.floor(Math.random() * ceiling));
    this.#attempt++;
    this.#state = 'backoff';
    this.#o.log.warn('uplink_disconnected', { retry_in_ms: delay, attempt: this.#attempt, pending: this.#cap.rows, note: 'events stay in the outbox until the hub acknowledges them' });
    this.#timer = this.#o.clock.setTimeout(() => this.#connect(), delay);
  }

  #onTick(): void {
    if (this.#state === 'stopped' || !this.#o.db.isOpen) return;
    const now = this.#o.clock.now();
    if (this.#acksWaiting.length > 0) this.#takeAcks();
    if (now - this.#lastRecount > RECOUNT_EVERY_MS && !this.#o.db.isTransaction) {
      this.#lastRecount = now;
      this.#cap.recount();
    }
    const client = this.#client;
    if (!client || this.#state !== 'connected' || !this.#subscribed) return;
    if (!this.#numbered) {
      // No answer from the hub yet (it is down, or our online was lost): ask again, less often.
      if (now - this.#askedAt > this.#timeout) {
        if (!this.#warnedWaiting) {
          this.#warnedWaiting = true;
          this.#o.log.warn('uplink_waiting_for_hub', {
            tenant: this.#tenant, bridge_id: this.#bridgeId, waited_ms: now - this.#askedAt, pending: this.#cap.rows,
            note: 'connected to the broker, but no hub has answered this bridge\'s online, so nothing is published (events stay in the outbox): a hub older than this release (upgrade hubs first), a bridge that is not enrolled (the hub stores only signed events of enrolled bridges unless HUB_ACCEPT_UNENROLLED=1: give it hub.enrollment_token), a tenant the hub does not know or has marked deleted, a hub that is down or not subscribed, a broker ACL that keeps the hub\'s ack from this bridge, or the online was lost; asking again with a doubling interval up to 5 minutes',
          });
        }
        this.#timeout = Math.min(this.#timeout * 2, MAX_ACK_TIMEOUT_MS);
        this.#askHub(client);
      }
      return;
    }
    if (this.#sent.size > 0 && now - this.#lastProgress > this.#timeout) {
      // Nothing acknowledged for a while: the broker may have dropped them (its queue limit,
      // a restart without persistence). Everything unacknowledged again, oldest first.
      this.#o.log.info('uplink_resending', { unacknowledged: this.#sent.size, after_ms: this.#timeout, note: 'no acknowledgement from the hub; sending again from the oldest' });
      this.#timeout = Math.min(this.#timeout * 2, MAX_ACK_TIMEOUT_MS);
      this.#lastProgress = now;
      this.#cursor = 0;
      this.#sent.clear();
      this.#drain();
    }
  }

  #takeAcks(): void {
    // Reading the outbox inside someone's open transaction could act on rows it rolls back.
    if (!this.#o.db.isOpen) return;
    if (this.#o.db.isTransaction) {
      // An open group of ingests (db/transaction.ts) stays open most of the time under a steady
      // flow: the acks are taken as soon as it commits, not at a tick that may find it open too.
      if (!this.#acksAfterCommit && groupBetweenUnits(this.#o.db)) {
        this.#acksAfterCommit = true;
        void groupCommitted(this.#o.db).then(() => {
          this.#acksAfterCommit = false;
          if (this.#acksWaiting.length > 0) this.#takeAcks();
        });
      }
      return;
    }
    const acks = this.#acksWaiting;
    this.#acksWaiting = [];
    for (const ack of acks) {
      try {
        this.#onAck(ack);
      } catch (error) {
        this.#o.log.warn('uplink_ack_failed', { error: (error as Error).message });
      }
    }
    this.#drain();
  }

  /** The hub's first answer this boot settles the numbering: false when it moved it (the ack
   *  speaks of numbers this database did not give out, so it is not applied). */
  #settle(ack: AckMessage): boolean {
    const firstWire = this.#bootFirstLocal + this.#offset;
    this.#timeout = this.#baseTimeout;
    // seen: the highest number the hub ever heard (high may stop below it at a gap).
    const hubHigh = Math.max(ack.high, ack.seen ?? 0);
    if (hubHigh < firstWire) {
      this.#numbered = true;
      return true;
    }
    // The hub has seen numbers this boot would give out: the database was restored from a
    // backup or made anew. Every row still held moves past the hub's highest.
    const oldest = this.#outbox.oldest(1)[0]?.seq ?? this.#outbox.lastAssigned() + 1;
    const offset = hubHigh + 1 - oldest;
    try {
      withoutBusyWait(this.#o.db, () => this.#outbox.setSeqOffset(offset));
    } catch (error) {
      if (!isBusyError(error)) throw error;
      return false; // the next ack settles it
    }
    this.#o.log.warn('uplink_sequence_moved', {
      hub_high: hubHigh, would_have_started_at: firstWire, offset, first_seq: oldest + offset,
      note: 'the hub has seen sequence numbers this database had not given out (restored from a backup, or new): events still held are numbered after them',
    });
    this.#offset = offset;
    this.#numbered = true;
    return false;
  }

  #onAck(ack: AckMessage): void {
    this.#o.log.debug('uplink_ack', { upto: ack.upto, high: ack.high, missing: ack.missing.length, conn: ack.conn, sent: this.#sent.size, resend: this.#resend.size, cursor: this.#cursor });
    if (!this.#numbered && !this.#settle(ack)) return;
    const claimed = storedLocal(ack, this.#offset);
    // Only what this boot published can be stored at the hub (a row of an earlier boot is
    // published again at connect, then acknowledged): an ack past that is of another bridge
    // with our bridge_id, or forged, and would delete rows the hub never had.
    const stored = clampTo(claimed, this.#highestPublished);
    const claimedHigh = claimed.length > 0 ? claimed[claimed.length - 1][1] : 0;
    // Rows of an earlier boot (below this boot's first number) may be stored: not suspicious.
    if (claimedHigh > Math.max(this.#highestPublished, this.#bootFirstLocal - 1) && !this.#warnedBeyond) {
      this.#warnedBeyond = true;
      this.#o.log.warn('uplink_ack_beyond_sent', {
        ack_upto: ack.upto, ack_high: ack.high, highest_published: this.#highestPublished + this.#offset,
        note: 'the hub acknowledged sequence numbers this bridge has not published: another bridge with the same bridge_id (a cloned SD card?) or a forged ack; applied only up to what was published (logged once per start)',
      });
    }
    const before = this.#acked.upto;
    const sentBefore = this.#sent.size;
    this.#acked.add(stored);
    for (const seq of this.#sent.keys()) if (this.#acked.has(seq)) this.#sent.delete(seq);
    for (const seq of this.#resend) if (this.#acked.has(seq)) this.#resend.delete(seq);
    if (this.#acked.upto > before || this.#sent.size < sentBefore) {
      this.#lastProgress = this.#o.clock.now();
      this.#timeout = this.#baseTimeout;
    }
    if (ack.missing.length > 0) this.#answerGaps(ack.missing);
  }

  /** Gaps the hub asks for: rows still held are sent again; numbers no longer held are gone. */
  #answerGaps(missing: Range[]): void {
    const now = this.#o.clock.now();
    const off = this.#offset;
    const maxWire = this.#outbox.lastAssigned() + off;
    let budget = GAP_ROWS_MAX;
    let gone: Range[] = [];
    for (const [wlo, whi] of missing) {
      const hi = Math.min(whi, maxWire);
      if (hi < wlo) continue;
      if (budget <= 0) break;
      const present = this.#outbox.present(Math.max(wlo - off, 1), hi - off, budget);
      budget -= present.length;
      // A range wider than the budget is answered up to the last row read; the hub asks again.
      const upper = budget <= 0 && present.length > 0 ? present[present.length - 1] + off : hi;
      // Held: rows present only. The rest of the range is gone: dropped by the cap, numbers of
      // an older copy of the database (at or below the offset), or acknowledged and deleted
      // already (a stale request: reporting those gone changes nothing at the hub).
      gone.push(...subtract([wlo, upper], toRanges(present.map((l) => l + off))));
      for (const local of present) {
        if (this.#acked.has(local)) continue;
        const at = this.#sent.get(local);
        if (at === undefined ? local <= this.#cursor : now - at > Math.min(MIN_RESEND_MS, this.#baseTimeout / 2)) {
          this.#sent.delete(local);
          this.#resend.add(local);
        }
      }
    }
    gone = gone.filter(([lo, hi]) => hi >= lo && hi >= 1).map(([lo, hi]): Range => [Math.max(lo, 1), hi]);
    if (gone.length > 0 && now - this.#lastGone >= 1000 && this.#client && this.#state === 'connected') {
      this.#lastGone = now;
      const ranges = gone.slice(0, MAX_RANGES);
      const topic = this.#topic('gone');
      this.#client.publishAsync(topic, this.#sealed(topic, JSON.stringify({ ranges, ts: new Date(now).toISOString() })), { qos: 1 }).catch(() => {});
      this.#o.log.info('uplink_gone', { ranges: JSON.stringify(ranges), note: 'the hub asked for events this bridge no longer holds (dropped by the outbox cap, or numbers of an older copy of this database)' });
    }
  }

  #drain(): void {
    if (this.#draining) {
      this.#again = true;
      return;
    }
    const client = this.#client;
    if (!client || this.#state !== 'connected' || !this.#subscribed || !this.#numbered) return;
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
        // that is then rolled back. Look again shortly, or once the open group of ingests
        // commits (db/transaction.ts; a failed group's rows are never published).
        if (groupBetweenUnits(this.#o.db)) await groupCommitted(this.#o.db);
        else await new Promise((r) => setTimeout(r, BUSY_RETRY_MS));
        continue;
      }
      if (!this.#o.db.isOpen) return;
      const room = Math.min(batch, this.#window - this.#sent.size);
      if (room <= 0) return; // the next ack (or the timeout) goes on
      let rows;
      if (this.#resend.size > 0) {
        const wanted = [...this.#resend].sort((a, b) => a - b).slice(0, room);
        for (const seq of wanted) this.#resend.delete(seq);
        rows = toRanges(wanted).flatMap(([lo, hi]) => this.#outbox.after(lo - 1, hi - lo + 1).filter((r) => r.seq <= hi && !this.#acked.has(r.seq)));
      } else {
        rows = this.#outbox.after(this.#cursor, room).filter((r) => !this.#acked.has(r.seq));
        if (rows.length === 0) {
          const more = this.#outbox.after(this.#cursor, room);
          if (more.length === 0) return;
          this.#cursor = more[more.length - 1].seq;
          continue;
        }
      }
      if (rows.length === 0) continue;
      // Paced: at most `rate` a second, whether first sends or resends. Counted on the same
      // clock as the setTimeout below (monotonic, real): a wall-clock step never stalls it.
      const now = performance.now();
      this.#paceAt = Math.max(this.#paceAt, now) + (rows.length * 1000) / this.#rate;
      const sentAt = this.#o.clock.now();
      // The ack timeout runs from the oldest unacknowledged publish: after a quiet moment,
      // not from the last progress long ago (which resent every first publish at once).
      if (this.#sent.size === 0) this.#lastProgress = sentAt;
      const published = rows.map((row) => {
        this.#sent.set(row.seq, sentAt);
        if (row.seq > this.#cursor) this.#cursor = row.seq;
        if (row.seq > this.#highestPublished) this.#highestPublished = row.seq;
        const wire = `{"seq":${row.seq + this.#offset},${row.payload.slice(1)}`;
        const topic = this.#topic(row.kind);
        return client.publishAsync(topic, this.#sealed(topic, wire), { qos: 1 });
      });
      // The broker's PUBACK only paces us (mqtt.js holds what is in flight in memory); the row
      // stays until the hub acknowledges it.
      await Promise.all(published);
      const wait = this.#paceAt - performance.now() - 1000 / this.#rate;
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }
}

/** A group of ingests is open and nothing runs inside it now: committed() settles soon. */
function groupBetweenUnits(db: DatabaseSync): boolean {
  return pendingCommit(db) && !inTransaction(db);
}

/** Settles when the open group has committed or failed (a failed group's rows are gone, so
 *  there is nothing to publish from it). The uplink only watches: it does not hurry the group
 *  as an acknowledgement would (db/transaction.ts, MAX_WAITING). */
function groupCommitted(db: DatabaseSync): Promise<void> {
  return committed(db, undefined, { hurry: false }).catch(() => {});
}
