import type { MqttClient } from 'mqtt';
import { verifyPayload } from '../../hubwire/credentials.ts';
import { decodeUplinkPayload } from '../../hubwire/topics.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { Acknowledgements } from './acks.ts';
import type { Boot } from './boot.ts';
import type { ConnectionHandler, UplinkConnection } from './connection.ts';
import type { OutboxDrain } from './drain.ts';
import type { UplinkIdentity } from './identity.ts';
import type { InFlight } from './in-flight.ts';

// A connection as the bridge (any connection but an enrollment's): its last will is status
// offline; once connected it subscribes to its ack topic first (so the hub's answer to the
// online cannot be missed), then publishes hello and status online, retained, and starts the
// drain. Every reconnect sends again whatever is not acknowledged, oldest first. An enrolled
// bridge takes only acks signed by the hub with its secret: an ack deletes rows.
//
// Until the hub's first answer this boot the state is `waiting_for_hub` (health, /metrics) and
// nothing is published; the online is published again at the ack timeout, doubling, with one
// warning naming the likely causes. Afterwards, when nothing is acknowledged within the ack
// timeout, everything unacknowledged is sent again.

export interface HubSessionOptions {
  log: Logger;
  clock: Clock;
  version: string;
  interfaces(): unknown[];
  identity: UplinkIdentity;
  boot: Boot;
  inFlight: InFlight;
  acks: Acknowledgements;
  drain: OutboxDrain;
  connection: UplinkConnection;
  /** The outbox cap, whose count of rows the log shows. */
  cap: { readonly rows: number };
}

export class HubSession implements ConnectionHandler {
  readonly upState = 'connected';
  readonly #o: HubSessionOptions;
  /** When the online was last published (the hub answers it with an ack). */
  #askedAt = 0;
  #warnedWaiting = false;
  #warnedBadAck = false;

  constructor(options: HubSessionOptions) {
    this.#o = options;
  }

  /** A status message of this connection: session, the connection's opening time and id. */
  status(state: 'online' | 'offline'): { topic: string; payload: string } {
    const { identity, connection } = this.#o;
    const topic = identity.topic('status');
    return { topic, payload: identity.seal(topic, JSON.stringify({ state, session: this.#o.boot.session, ts: connection.openedAt, conn: connection.conn })) };
  }

  clientOptions(): { clientId: string; will: { topic: string; payload: Buffer; qos: 1; retain: true } } {
    const { identity } = this.#o;
    const offline = this.status('offline');
    return {
      clientId: `fieldbridge-${identity.tenant}-${identity.bridgeId}`.slice(0, 128),
      will: { topic: offline.topic, payload: Buffer.from(offline.payload), qos: 1, retain: true },
    };
  }

  connected(client: MqttClient): void {
    const { log, identity, connection } = this.#o;
    this.#o.inFlight.reconnected(this.#o.clock.now());
    log.info('uplink_connected', { host: connection.endpoint.host, port: connection.endpoint.port, session: this.#o.boot.session, conn: connection.conn, pending: this.#o.cap.rows });
    client.subscribe(identity.topic('ack'), { qos: 1 }, (error) => {
      if (connection.client !== client) return;
      if (error) {
        log.warn('uplink_subscribe_failed', { error: error.message, next: 'reconnecting' });
        client.stream?.destroy();
        return;
      }
      connection.subscribed();
      const hello = JSON.stringify({ version: this.#o.version, interfaces: this.#o.interfaces(), ts: connection.openedAt });
      const helloTopic = identity.topic('hello');
      client.publishAsync(helloTopic, identity.seal(helloTopic, hello), { qos: 1, retain: true }).catch(() => {});
      this.#askHub(client);
      this.#o.drain.run();
    });
  }

  message(_client: MqttClient, topic: string, payload: Buffer): void {
    const { log, identity } = this.#o;
    if (topic !== identity.topic('ack')) return;
    let body: Uint8Array = payload;
    if (identity.secret) {
      const check = verifyPayload(identity.secret, topic, payload);
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
    this.#o.acks.receive(decoded.value);
  }

  closed(): undefined {
    return undefined;
  }

  /** The publisher's tick: asks a silent hub again, or resends after the ack timeout. */
  tick(now: number): void {
    const { inFlight, identity } = this.#o;
    const client = this.#o.connection.live;
    if (!client) return;
    if (!this.#o.boot.numbered) {
      // No answer from the hub yet (it is down, or our online was lost): ask again, less often.
      if (now - this.#askedAt > inFlight.timeout) {
        if (!this.#warnedWaiting) {
          this.#warnedWaiting = true;
          this.#o.log.warn('uplink_waiting_for_hub', {
            tenant: identity.tenant, bridge_id: identity.bridgeId, waited_ms: now - this.#askedAt, pending: this.#o.cap.rows,
            note: 'connected to the broker, but no hub has answered this bridge\'s online, so nothing is published (events stay in the outbox): a hub older than this release (upgrade hubs first), a bridge that is not enrolled (the hub stores only signed events of enrolled bridges unless HUB_ACCEPT_UNENROLLED=1: give it hub.enrollment_token), a tenant the hub does not know or has marked deleted, a hub that is down or not subscribed, a broker ACL that keeps the hub\'s ack from this bridge, or the online was lost; asking again with a doubling interval up to 5 minutes',
          });
        }
        inFlight.lengthenTimeout();
        this.#askHub(client);
      }
      return;
    }
    if (inFlight.overdue(now)) {
      // Nothing acknowledged for a while: the broker may have dropped them (its queue limit,
      // a restart without persistence). Everything unacknowledged again, oldest first.
      this.#o.log.info('uplink_resending', { unacknowledged: inFlight.count, after_ms: inFlight.timeout, note: 'no acknowledgement from the hub; sending again from the oldest' });
      inFlight.resendAll(now);
      this.#o.drain.run();
    }
  }

  /** Status online (retained): the hub answers it with an ack, which settles the numbering. */
  #askHub(client: MqttClient): void {
    this.#askedAt = this.#o.clock.now();
    const online = this.status('online');
    client.publishAsync(online.topic, online.payload, { qos: 1, retain: true }).catch(() => {});
  }
}
