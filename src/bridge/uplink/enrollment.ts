import type { DatabaseSync } from 'node:sqlite';
import type { MqttClient } from 'mqtt';
import { hashKey } from '../../auth/secrets.ts';
import { withoutBusyWait } from '../../db/sqlite.ts';
import { type EnrollRequest, enrollTopic, makeEnrollRequest, openEnrollReply, signingKey } from '../../hubwire/credentials.ts';
import { TOPIC_SEGMENT } from '../../hubwire/topics.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { Counter } from '../../lib/metrics.ts';
import type { OutboxCap } from './cap.ts';
import type { UplinkConfig } from './config.ts';
import type { ConnectionHandler, UplinkConnection } from './connection.ts';
import type { UplinkIdentity } from './identity.ts';
import type { StoredCredentials, UplinkOutbox } from './outbox.ts';

// Enrollment (docs/hub.md, "Enrollment"): given an enrollment token (hub.enrollment_token or
// SERVICE_HUB_ENROLL_TOKEN) and no credentials from it yet, a connection of its own trades the
// token for the bridge's tenant, id and secret (state `enrolling`; the exchange in
// hubwire/credentials.ts), stores them in uplink_state and has the connection start again as
// that bridge. Events queued before the token came stay for the tenant and broker they were
// queued for: a gateway handed from one owner to another does not carry the first one's events
// over to the second.

/** How long an enrollment request waits for the hub's reply before it is asked again. */
const ENROLL_REPLY_TIMEOUT_MS = 30_000;
/** ... doubling while no reply comes, up to this: a hub far behind (a backlog after an outage)
 *  answers each request late, and every new request would make the one before it stale. */
const ENROLL_REPLY_TIMEOUT_MAX_MS = 600_000;
/** After a refusal only a new token can cure (unknown, revoked, spent), the next ask waits this
 *  long: a bridge with a dead token must not hammer the broker and the hub. */
const ENROLL_REFUSED_RETRY_MS = 300_000;

export interface EnrollmentOptions {
  db: DatabaseSync;
  log: Logger;
  clock: Clock;
  config: UplinkConfig;
  outbox: UplinkOutbox;
  cap: OutboxCap;
  dropped: Counter;
  identity: UplinkIdentity;
  connection: UplinkConnection;
  /** True when the bridge must enroll before it can publish (identity.ts pickIdentity). */
  pending: boolean;
}

export class Enrollment implements ConnectionHandler {
  readonly upState = 'enrolling';
  readonly #o: EnrollmentOptions;
  #pending: boolean;
  #request: EnrollRequest | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastRefusal = '';
  #refusedForGood = false;
  #waitMs = ENROLL_REPLY_TIMEOUT_MS;

  constructor(options: EnrollmentOptions) {
    this.#o = options;
    this.#pending = options.pending;
  }

  /** True until credentials are stored: the next connection enrolls. */
  get pending(): boolean {
    return this.#pending;
  }

  /**
   * Notes whom the outbox's rows are for: with a concrete identity, its tenant and broker host;
   * when a new enrollment token first appears, the rows queued so far and for whom (kept across
   * restarts, so events queued for the new owner while the hub could not be reached are never
   * taken for the old one's). Runs on the caller's database write.
   */
  noteWhomQueued(): void {
    const { config, outbox, identity } = this.#o;
    const host = this.#o.connection.endpoint.host;
    if (!this.#pending) {
      outbox.setQueuedFor({ tenant: identity.tenant, host });
      return;
    }
    const token = hashKey(config.enrollment_token!);
    if (outbox.handover()?.token_sha256 !== token) outbox.setHandover({ token_sha256: token, through: outbox.lastAssigned(), from: outbox.queuedFor() });
  }

  stop(): void {
    clearTimeout(this.#timer);
  }

  clientOptions(): { clientId: string } {
    // No topics of its own yet, so no last will.
    return { clientId: `fieldbridge-enroll-${this.#o.connection.conn}` };
  }

  connected(client: MqttClient): void {
    const { host, port } = this.#o.connection.endpoint;
    this.#refusedForGood = false;
    this.#o.log.info('uplink_enrolling', { host, port, note: 'trading the enrollment token for this bridge\'s credentials' });
    this.#ask(client);
  }

  closed(): number | undefined {
    clearTimeout(this.#timer);
    return this.#refusedForGood ? ENROLL_REFUSED_RETRY_MS : undefined;
  }

  /** Asks the hub for credentials with a new request. */
  #ask(client: MqttClient): void {
    const { log, connection } = this.#o;
    if (connection.client !== client || !client.connected) return;
    const request = makeEnrollRequest(this.#o.config.enrollment_token!, this.#o.clock.now());
    const previous = this.#request;
    this.#request = request;
    if (previous) client.unsubscribe(enrollTopic(previous.nonce, 'reply'));
    client.subscribe(enrollTopic(request.nonce, 'reply'), { qos: 1 }, (error) => {
      if (connection.client !== client) return;
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
    clearTimeout(this.#timer);
    const waited = this.#waitMs;
    this.#timer = setTimeout(() => {
      if (connection.client !== client) return;
      if (this.#refusedForGood) {
        client.stream?.destroy();
        return;
      }
      log.warn('uplink_enroll_no_reply', { waited_ms: waited, note: 'no hub answered the enrollment request; asking again (is a hub of this release subscribed to the broker?)' });
      this.#waitMs = Math.min(this.#waitMs * 2, ENROLL_REPLY_TIMEOUT_MAX_MS);
      this.#ask(client);
    }, this.#refusedForGood ? Math.min(waited, 5000) : waited);
    this.#timer.unref?.();
  }

  message(client: MqttClient, topic: string, payload: Buffer): void {
    const { log, connection, outbox } = this.#o;
    const request = this.#request;
    if (!request || topic !== enrollTopic(request.nonce, 'reply')) return;
    const token = this.#o.config.enrollment_token!;
    const reply = openEnrollReply(payload, token, request, (s) => TOPIC_SEGMENT.test(s));
    if (!reply.ok) {
      // Not authenticated when refused (anyone could have sent it): logged; the connection
      // ends a few seconds later unless a sealed reply comes meanwhile (the timer in #ask), and
      // a config change (a new token) restarts the uplink at once.
      const forGood = reply.refused === 'unknown_token' || reply.refused === 'revoked' || reply.refused === 'token_used';
      if (reply.detail !== this.#lastRefusal) {
        log.error('uplink_enroll_refused', { reason: reply.refused ?? 'bad_reply', detail: reply.detail, note: forGood ? `give the bridge a new enrollment token (POST /api/bridges on the hub); asking again every ${ENROLL_REFUSED_RETRY_MS / 60_000} minutes meanwhile` : 'asking again' });
      }
      this.#lastRefusal = reply.detail;
      if (forGood && !this.#refusedForGood) {
        this.#refusedForGood = true;
        clearTimeout(this.#timer);
        this.#timer = setTimeout(() => connection.client === client && client.stream?.destroy(), 5000);
        this.#timer.unref?.();
      }
      return;
    }
    const { host } = connection.endpoint;
    const stored: StoredCredentials = { token_sha256: hashKey(token), tenant: reply.tenant, bridge_id: reply.bridgeId, secret: reply.secret.toString('base64url'), enrolled_at: new Date(this.#o.clock.now()).toISOString() };
    // Rows queued for another tenant or broker before the token came are not sent to this
    // one (noteWhomQueued).
    const handover = outbox.handover();
    const from = handover?.token_sha256 === stored.token_sha256 ? handover.from : null;
    const moved = from !== null && (from.tenant !== reply.tenant || from.host !== host);
    let dropped = { rows: 0, bytes: 0 };
    try {
      withoutBusyWait(this.#o.db, () => {
        outbox.setCredentials(stored);
        if (moved) dropped = outbox.deleteThrough(handover!.through);
        outbox.setQueuedFor({ tenant: reply.tenant, host });
        outbox.clearHandover();
      });
    } catch (error) {
      // The secret is not kept unless stored: the next exchange makes a new one.
      log.warn('uplink_enroll_store_failed', { error: (error as Error).message, next: 'asking again' });
      client.stream?.destroy();
      return;
    }
    if (dropped.rows > 0) {
      this.#o.cap.removed(dropped.rows, dropped.bytes);
      this.#o.dropped.inc({ kind: 'tenant_changed' }, dropped.rows);
      log.warn('uplink_outbox_dropped_tenant_changed', { rows: dropped.rows, previous_tenant: from!.tenant, previous_broker: from!.host, tenant: reply.tenant, note: 'events queued for the previous tenant or broker are not sent to the new one' });
    }
    clearTimeout(this.#timer);
    this.#pending = false;
    this.#refusedForGood = false;
    this.#waitMs = ENROLL_REPLY_TIMEOUT_MS;
    this.#request = undefined;
    this.#o.identity.use({ tenant: reply.tenant, bridgeId: reply.bridgeId, secret: signingKey(reply.secret) });
    log.info('uplink_enrolled', { tenant: reply.tenant, bridge_id: reply.bridgeId, note: 'credentials stored; connecting as this bridge' });
    connection.restart(client);
  }
}
