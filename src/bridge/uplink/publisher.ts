import type { DatabaseSync } from 'node:sqlite';
import { commitGroup, isBusyError, withoutBusyWait } from '../../db/sqlite.ts';
import { SIG_SUFFIX_BYTES } from '../../hubwire/credentials.ts';
import { parseMqttUrl } from '../../hubwire/mqtt-options.ts';
import { EVENT_KINDS, MAX_PAYLOAD_BYTES, SEQ_PREFIX_MAX_BYTES, TOPIC_SEGMENT, type UplinkEventKind } from '../../hubwire/topics.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Logger } from '../../lib/log.ts';
import { Counter } from '../../lib/metrics.ts';
import { AckedRows } from './acked.ts';
import { Acknowledgements } from './acks.ts';
import { Boot } from './boot.ts';
import { OutboxCap } from './cap.ts';
import type { UplinkConfig } from './config.ts';
import { type ConnectionState, UplinkConnection } from './connection.ts';
import { OutboxDrain } from './drain.ts';
import { Enrollment } from './enrollment.ts';
import { pickIdentity, UplinkIdentity } from './identity.ts';
import { InFlight } from './in-flight.ts';
import { UplinkOutbox } from './outbox.ts';
import type { UplinkParts } from './parts.ts';
import { HubSession } from './session.ts';

// The bridge's link to the hub (docs/design.md section 8; the wire protocol in docs/hub.md and
// src/hubwire/). Events go into the outbox table first (enqueue, inside the router's
// transaction), then the drain publishes them in order, and a row is deleted once the hub has
// acknowledged it. This class validates the settings, builds the parts in the order they
// depend on each other and runs them for one configuration (UplinkService starts a new one when
// the hub section changes):
//
//   identity.ts    who the bridge publishes as, and the signing of what it publishes
//   boot.ts        this start's session number and sequence numbering, settled with the hub
//   in-flight.ts   rows published and not yet acknowledged, and the ack timeout
//   cap.ts         the outbox's size cap          acked.ts  deleting acknowledged rows
//   connection.ts  one MQTT connection at a time, reconnecting with backoff
//   enrollment.ts  a connection that trades an enrollment token for credentials
//   session.ts     a connection as the bridge: ack subscription, hello, status, timeouts
//   acks.ts        the hub's acknowledgements and the gaps it asks for
//   drain.ts       publishing the outbox in order, within the window and the rate
//
// Nothing is wired after construction: each part gets the parts it uses in its constructor
// (the common ones named in parts.ts).

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
export type UplinkState = ConnectionState | 'waiting_for_hub';
export const UPLINK_STATES: readonly UplinkState[] = ['idle', 'enrolling', 'connecting', 'connected', 'waiting_for_hub', 'backoff', 'stopped'];

const TICK_MS = 250;
const RECOUNT_EVERY_MS = 300_000;
const BEGIN_RETRY_MS = 1000;
export const DEFAULT_OUTBOX_MAX_BYTES = 64 * 1024 * 1024;

export class UplinkPublisher {
  readonly #o: UplinkPublisherOptions;
  readonly #outbox: UplinkOutbox;
  readonly #identity = new UplinkIdentity();
  readonly #boot: Boot;
  readonly #cap: OutboxCap;
  readonly #acked: AckedRows;
  readonly #connection: UplinkConnection;
  readonly #drain: OutboxDrain;
  readonly #acks: Acknowledgements;
  readonly #session: HubSession;
  readonly #enrollment: Enrollment;
  #beginTimer: ReturnType<Clock['setTimeout']> | undefined;
  #tick: ReturnType<typeof setInterval> | undefined;
  #lastRecount = 0;

  constructor(options: UplinkPublisherOptions) {
    const { db, log, clock, config } = options;
    const outbox = new UplinkOutbox(db);
    const identity = pickIdentity(config, outbox.credentials());
    const problems: string[] = [];
    if (identity !== 'enroll') {
      const { tenant, bridgeId } = identity;
      if (!TOPIC_SEGMENT.test(tenant)) problems.push(`tenant ${JSON.stringify(tenant)} must be 1 to 64 letters, digits, "_", "." or "-"`);
      if (!TOPIC_SEGMENT.test(bridgeId)) problems.push(`bridge_id ${JSON.stringify(bridgeId)} must be 1 to 64 letters, digits, "_", "." or "-"`);
    }
    try {
      parseMqttUrl(config.mqtt_url);
    } catch (e) {
      problems.push(`mqtt_url: ${(e as Error).message}`);
    }
    if (problems.length > 0) throw new AppError('ERR_UPLINK_CONFIG', 400, `hub uplink settings: ${problems.join('; ')}`);
    this.#o = options;
    this.#outbox = outbox;
    if (identity !== 'enroll') this.#identity.use(identity);
    this.#boot = new Boot(db, outbox, log);
    const inFlight = new InFlight(options.ackTimeoutMs ?? 10_000);
    const counters = options.counters ?? { dropped: new Counter(), refused: new Counter() };
    this.#cap = new OutboxCap(outbox, options.outboxMaxBytes ?? DEFAULT_OUTBOX_MAX_BYTES, log, counters, () => clock.now(), inFlight);
    this.#acked = new AckedRows(db, outbox, log, this.#cap);
    // The handler of each new connection: the enrollment while credentials are missing.
    this.#connection = new UplinkConnection({ config, log, clock, backoff: options.backoff, cap: this.#cap, handler: () => (this.#enrollment.pending ? this.#enrollment : this.#session) });
    const parts: UplinkParts = { db, log, clock, outbox, identity: this.#identity, boot: this.#boot, inFlight, acked: this.#acked, connection: this.#connection };
    this.#drain = new OutboxDrain({ ...parts, batch: options.batch, window: options.window, rate: options.rate });
    this.#acks = new Acknowledgements({ ...parts, drain: this.#drain });
    this.#session = new HubSession({ ...parts, cap: this.#cap, version: options.version, interfaces: options.interfaces, acks: this.#acks, drain: this.#drain });
    this.#enrollment = new Enrollment({ ...parts, config, cap: this.#cap, dropped: counters.dropped, pending: identity === 'enroll' });
  }

  /** This boot's number (status messages carry it). */
  get session(): number {
    return this.#boot.session;
  }

  /** The tenant and bridge id in use (empty until an enrollment gave them). */
  identity(): { tenant: string; bridge_id: string; enrolled: boolean } {
    return { tenant: this.#identity.tenant, bridge_id: this.#identity.bridgeId, enrolled: this.#identity.enrolled };
  }

  state(): UplinkState {
    // Connected to the broker, but the hub has not answered yet: nothing is published.
    if (this.#connection.state === 'connected' && !this.#boot.numbered) return 'waiting_for_hub';
    return this.#connection.state;
  }

  /** Rows still waiting for the hub's acknowledgement. */
  pending(): number {
    return this.#outbox.count();
  }

  /** What the outbox holds as counted. */
  outboxSize(): { rows: number; bytes: number; max_bytes: number } {
    return { rows: this.#cap.rows, bytes: this.#cap.bytes, max_bytes: this.#cap.maxBytes };
  }

  /** True once this boot's numbering is settled with the hub (and rows may be published). */
  get numbered(): boolean {
    return this.#boot.numbered;
  }

  /** Counts this boot (the session in status messages) and starts connecting. */
  start(): void {
    if (!this.#connection.starting()) return;
    this.#begin();
  }

  #begin(): void {
    if (this.#connection.state === 'stopped') return;
    const { db, log } = this.#o;
    try {
      withoutBusyWait(db, () => {
        this.#boot.count();
        this.#enrollment.noteWhomQueued();
      });
    } catch (error) {
      // Another process holds the lock: never wait for it on the event loop (db/busy.ts).
      if (!isBusyError(error)) throw error;
      this.#beginTimer = this.#o.clock.setTimeout(() => this.#begin(), BEGIN_RETRY_MS);
      return;
    }
    this.#boot.begin();
    const id = this.#identity;
    log.info('uplink_starting', { tenant: id.tenant || undefined, bridge_id: id.bridgeId || undefined, enrolled: id.enrolled, enrolling: this.#enrollment.pending, session: this.#boot.session, pending: this.#cap.rows });
    this.#tick = setInterval(() => this.#onTick(), TICK_MS);
    this.#tick.unref?.();
    this.#connection.connect();
  }

  /**
   * Writes an event to the outbox and returns its event_id, or null when the outbox is full
   * (counted and logged, the caller's transaction goes on). It runs on the bridge's database
   * connection, so inside a transaction the caller has open it commits or rolls back with it.
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
    queueMicrotask(() => this.#drain.run());
    return eventId;
  }

  /** Resolves when the current drain round (if any) has finished; for tests and shutdown. */
  idle(): Promise<void> {
    return this.#drain.done;
  }

  /** Publishes status offline, disconnects cleanly and stops reconnecting. */
  async close(): Promise<void> {
    if (this.#connection.state === 'stopped') return;
    const farewell = this.#session.status('offline');
    if (this.#beginTimer) this.#o.clock.clearTimeout(this.#beginTimer);
    this.#enrollment.stop();
    clearInterval(this.#tick);
    await this.#connection.close(farewell);
    // A drain round waiting on a publish of the closed connection ends with it; never hang here.
    await Promise.race([this.#drain.done, new Promise((r) => setTimeout(r, 1000).unref())]);
    // An open group first: flushNow() would only ride it, and stop() leaves the ride.
    try {
      commitGroup(this.#o.db);
    } catch {
      // A failed group is told to its own waiters; the rows stay and are acknowledged again.
    }
    this.#acked.flushNow();
    this.#acked.stop();
    this.#o.log.info('uplink_stopped', { session: this.#boot.session, pending: this.#cap.rows });
  }

  #onTick(): void {
    const { db } = this.#o;
    if (this.#connection.state === 'stopped' || !db.isOpen) return;
    const now = this.#o.clock.now();
    this.#acks.tick();
    if (now - this.#lastRecount > RECOUNT_EVERY_MS && !db.isTransaction) {
      this.#lastRecount = now;
      this.#cap.recount();
    }
    this.#session.tick(now);
  }
}
