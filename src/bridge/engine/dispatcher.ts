import type { Bearer, FrameOrigin, OutboundFrame, SendResult } from '../../bearers/bearer.ts';
import { frameOrigin } from './frame-origin.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { EventStream } from '../../lib/events.ts';
import type { Logger } from '../../lib/log.ts';
import type { RouterEvent } from './events.ts';
import type { BearerHost } from './bearer-host.ts';
import { applyTransforms, type TransformStep } from './transforms.ts';
import { nextRetryDelayMs, retryPolicyOf } from './backoff.ts';
import { DEFAULT_PRECEDENCE, precedenceRank, retryCapMs } from './precedence.ts';
import type { DeliveryStore } from './delivery-store.ts';
import type { WriteBehind } from './write-behind.ts';
import type { InterfaceRow, DeliveryRow, MessageRow, NodeRow } from './rows.ts';

// One queue per interface (docs/routing.md): each interface sends one delivery at a time,
// and interfaces run independently, so a slow or failing bearer never holds up another.
// Timers, not polling: an interface with nothing due sleeps until its earliest retry, and an
// idle bridge schedules nothing but the next expiry.

// Due deliveries fetched per query; a retry-now refetches, so it never waits behind a batch.
const DUE_BATCH = 32;
// A send the bearer did not make (SendResult.notSent) waits at least this long.
const NOT_SENT_MIN_WAIT_MS = 1000;
const DEFAULT_RANK = precedenceRank(DEFAULT_PRECEDENCE);
// A bearer that never answers must not wedge its queue forever.
const SEND_TIMEOUT_MS = 120_000;

export interface DispatcherDeps {
  store: DeliveryStore;
  writeBehind: WriteBehind;
  host: BearerHost;
  /** The router's events: new deliveries and links coming up wake queues; every state change
   *  the dispatcher makes is told here (uplink, metrics). */
  events: EventStream<RouterEvent>;
  interfaces: { find(id: string): InterfaceRow | undefined };
  /** The stored message of a delivery, for OutboundFrame.origin. */
  messages?: { get(id: string): Pick<MessageRow, 'interface_id' | 'created_at' | 'decision'> | undefined };
  nodes?: { get(id: string): NodeRow | undefined }; // the node database, for OutboundFrame.origin.node
  clock: Clock;
  log: Logger;
  random?: () => number;
  /** Whether the database's write lock is free now (db/busy.ts writeLockFree); without it, writes
   *  are simply tried. */
  lockFree?: () => boolean;
}

export class Dispatcher {
  readonly #d: DispatcherDeps;
  readonly #busy = new Set<string>();
  readonly #again = new Set<string>();
  readonly #timers = new Map<string, TimerHandle>();
  /** Link changes that failed to write (another process's lock), retried once a second. */
  readonly #linkRetries = new Map<string, TimerHandle>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #sending = new Map<string, Set<Promise<void>>>();
  /** The same sends by delivery id, so one cancelled while on the air can give its place back. */
  readonly #sendingIds = new Map<string, { interfaceId: string; send: Promise<void> }>();
  /** Per interface, wakes a queue that waits for a place on the air when one is given back. */
  readonly #placeFreed = new Map<string, () => void>();
  #expiryTimer: TimerHandle | undefined;
  // Bearers come up (and kick their queues) before start() has recovered the deliveries a
  // crash left in 'sending'; sending before that recovery would have it take fresh sends for
  // interrupted ones. So nothing is sent until start().
  #started = false;
  #stopped = false;
  #expiryAt: number | undefined;
  /** Per interface, due deliveries fetched in queue order and not yet tried (one query per
   *  batch, not per send), with the store generation they were read at. `whole`: the read
   *  found fewer than it asked for, so once these are tried nothing was left due then, unless
   *  a delivery joined since (added() clears it). */
  readonly #due = new Map<string, { generation: number; rows: DeliveryRow[]; whole: boolean }>();

  constructor(deps: DispatcherDeps) {
    this.#d = deps;
    deps.events.subscribe((event) => {
      if (event.type === 'queued') this.added(event.interfaceId, event.earliestExpiryMs, event.precedence);
      else if (event.type === 'link') this.#linkChanged(event.interfaceId, event.connected);
      // Told inside the transaction that cancels it: looked at once that has committed.
      else if (event.type === 'delivery' && event.delivery.state === 'cancelled' && this.#sendingIds.has(event.delivery.id)) {
        const id = event.delivery.id;
        setImmediate(() => this.#abandon(id));
      }
    });
    // A delivery is waiting again: its queue needs a timer for it, and its TTL a timer too.
    deps.writeBehind.flushed.subscribe((interfaceIds) => {
      for (const id of interfaceIds) {
        this.#due.delete(id); // the delivery back in the queue may belong before the batch read
        this.kick(id);
      }
      // Told from inside a COMMIT (or the write-behind's timer): a read that fails here (an I/O
      // error) must not reach the commit's other waiters, nor end the process.
      this.#scheduleExpiryOrRetry();
    });
  }

  /** Recovers deliveries interrupted by a crash and starts every queue with work. */
  start(): void {
    const recovered = this.#d.store.recoverSending(this.#d.clock.now());
    if (recovered > 0) this.#d.log.warn('deliveries_recovered', { count: recovered, note: 'they were being sent when the bridge stopped; sending again (at least once)' });
    this.#started = true;
    this.#scheduleExpiry();
    for (const id of this.#d.store.interfacesWithWork()) this.kick(id);
  }

  /** Something changed for this interface (new delivery, enabled, connected): look at its queue. */
  kick(interfaceId: string): void {
    if (this.#stopped || !this.#started) return;
    if (this.#busy.has(interfaceId)) {
      this.#again.add(interfaceId);
      return;
    }
    const run = this.#run(interfaceId).catch((error) => {
      // A busy database must not leave the queue asleep: look again in a second.
      this.#d.log.error('dispatcher_failed', { interface_id: interfaceId, error: (error as Error).message, action: 'retrying in 1 s' });
      this.#d.clock.setTimeout(() => this.kick(interfaceId), 1000);
    });
    this.#inFlight.add(run);
    void run.finally(() => this.#inFlight.delete(run));
  }

  /** New deliveries joined an interface's queue: wake it, and the expiry timer when one of
   *  them may expire before the timer fires. A newcomer that outranks part of the batch read
   *  earlier goes before it: the batch is read again. */
  added(interfaceId: string, expiresMs: number, precedence = DEFAULT_RANK): void {
    if (this.#expiryAt === undefined || expiresMs < this.#expiryAt) this.#scheduleExpiry();
    const batch = this.#due.get(interfaceId);
    if (batch && batch.rows.some((r) => r.precedence > precedence)) this.#due.delete(interfaceId);
    else if (batch) batch.whole = false;
    this.kick(interfaceId);
  }

  /** Held while down, released when back (docs/routing.md, "Held, not failed"). */
  #linkChanged(interfaceId: string, connected: boolean): void {
    if (this.#stopped) return;
    const { store, clock } = this.#d;
    // A retry is already waiting: it reads the link's state when it runs.
    if (this.#linkRetries.has(interfaceId)) return;
    try {
      // Not worth a wait inside SQLite: straight to the retry.
      if (this.#d.lockFree?.() === false) throw new Error('database is locked by another process');
      if (connected) {
        if (store.releaseHeld(interfaceId, clock.now()) > 0) this.changed(interfaceId);
        else this.kick(interfaceId);
      } else {
        this.#hold(interfaceId);
      }
    } catch (error) {
      // Told from a bearer's callback: a lock another process holds (or a full disk) must not
      // reach the driver, nor leave the queue held or released wrongly. Again in a second,
      // with the link's state as it is then: one retry per interface, however often the link
      // flaps meanwhile.
      if (this.#linkRetries.has(interfaceId)) return;
      this.#d.log.error('link_change_failed', { interface_id: interfaceId, error: (error as Error).message, action: 'retrying in 1 s' });
      this.#linkRetries.set(
        interfaceId,
        this.#d.clock.setTimeout(() => {
          this.#linkRetries.delete(interfaceId);
          this.#linkChanged(interfaceId, this.#d.host.runtime(interfaceId).connected);
        }, 1000),
      );
    }
  }

  #hold(interfaceId: string): void {
    const row = this.#d.interfaces.find(interfaceId);
    const pause = retryPolicyOf(row?.retry).ttl_while_held !== 'running';
    if (this.#d.store.holdWaiting(interfaceId, this.#d.clock.now(), pause) > 0) {
      this.#due.delete(interfaceId);
      this.#scheduleExpiry();
    }
  }

  /** A delivery changed outside the queue (retry now goes to the front): refetch the queue. */
  changed(interfaceId: string): void {
    this.#due.delete(interfaceId);
    this.#scheduleExpiry();
    this.kick(interfaceId);
  }

  /** Stops taking new work: no queue starts another send and no timer fires. */
  pause(): void {
    this.#stopped = true;
    for (const t of this.#timers.values()) this.#d.clock.clearTimeout(t);
    this.#timers.clear();
    for (const t of this.#linkRetries.values()) this.#d.clock.clearTimeout(t);
    this.#linkRetries.clear();
    if (this.#expiryTimer) this.#d.clock.clearTimeout(this.#expiryTimer);
  }

  /** Waits (bounded) for sends in progress to settle, then commits every pending state change. */
  async drain(graceMs = 5000): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.allSettled([...this.#inFlight]), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    const wb = this.#d.writeBehind;
    wb.flush();
    // Still failing (a read-only or full disk): what is kept in memory ends with the process.
    // Nothing is lost that was acknowledged: those deliveries read as waiting after the restart
    // and are sent again (at least once, docs/routing.md); but say so.
    const unwritten = wb.dirtyIds();
    if (wb.backlogged && unwritten.length > 0) {
      this.#d.log.error('delivery_states_unwritten_at_stop', { deliveries: unwritten.length, action: 'they read as waiting after the restart and are sent again' });
    }
  }

  /**
   * A delivery cancelled while on the air (a fallback list escalated past it, its message was
   * cancelled) gives its place on the air back: what the bearer still waits for no longer holds
   * up the interface's queue. The send itself goes on, and its outcome is still written when it
   * comes (a late acknowledgement counts: DeliveryStore.settle).
   */
  #abandon(id: string): void {
    const entry = this.#sendingIds.get(id);
    if (!entry || this.#stopped) return;
    let state: string | undefined;
    try {
      state = this.#d.store.get(id)?.state;
    } catch (error) {
      this.#d.log.error('abandon_check_failed', { delivery_id: id, error: (error as Error).message, action: 'retrying in 1 s' });
      this.#d.clock.setTimeout(() => this.#abandon(id), 1000);
      return;
    }
    // The cancellation was rolled back: the send keeps its place.
    if (state !== 'cancelled') return;
    this.#sendingIds.delete(id);
    this.#onAir(entry.interfaceId).delete(entry.send);
    this.#d.log.info('send_abandoned', { delivery_id: id, interface_id: entry.interfaceId, note: 'cancelled while on the air; its place goes to the next in the queue, a late acknowledgement still counts' });
    this.#placeFreed.get(entry.interfaceId)?.();
    this.kick(entry.interfaceId);
  }

  /** Waits until a send of the interface settles or one gives its place back (#abandon). */
  async #placeOnAir(interfaceId: string, onAir: Set<Promise<void>>): Promise<void> {
    // A fresh signal per wait: one left pending across waits would gather a reaction per wait.
    const freed = new Promise<void>((resolve) => this.#placeFreed.set(interfaceId, resolve));
    try {
      await Promise.race([...onAir, freed]);
    } finally {
      this.#placeFreed.delete(interfaceId);
    }
  }

  /** pause() then drain(). */
  async stop(graceMs = 5000): Promise<void> {
    this.pause();
    await this.drain(graceMs);
  }

  async #run(interfaceId: string): Promise<void> {
    this.#busy.add(interfaceId);
    try {
      do {
        this.#again.delete(interfaceId);
        await this.#drain(interfaceId);
      } while (this.#again.has(interfaceId) && !this.#stopped);
    } finally {
      this.#busy.delete(interfaceId);
    }
  }

  async #drain(interfaceId: string): Promise<void> {
    const { store, clock, host } = this.#d;
    for (;;) {
      if (this.#stopped) return;
      const row = this.#d.interfaces.find(interfaceId);
      // Disabled, unbound or disconnected: deliveries are held, without spending attempts; the
      // interface's enable/bind/connect releases them (#linkChanged).
      if (!row || !row.enabled || row.device === null || !host.runtime(interfaceId).connected) {
        if (row) this.#hold(interfaceId);
        return;
      }
      const bearer = host.bearer(interfaceId);
      if (!bearer) return;
      // A bearer that waits for acknowledgements takes several sends at once (Bearer.concurrency).
      const onAir = this.#onAir(interfaceId);
      if (onAir.size >= Math.max(1, bearer.concurrency ?? 1)) {
        await this.#placeOnAir(interfaceId, onAir);
        continue;
      }
      // Delivery states cannot be written now (write-behind.ts, backlogged): a send
      // could not be recorded. Look again in a second.
      if (this.#d.writeBehind.backlogged) {
        clock.setTimeout(() => this.kick(interfaceId), 1000);
        return;
      }
      const now = clock.now();
      const delivery = this.#nextDue(interfaceId, now);
      if (delivery === null) {
        this.#sleepUntilDue(interfaceId);
        return;
      }
      if (delivery.expires_ms <= now) {
        this.#record(delivery, 'expired', 'message TTL passed before delivery', () => store.expire(delivery.id, now));
        continue;
      }
      this.#d.writeBehind.deferSending(delivery.id, interfaceId, now, () => store.markSending(delivery.id, now));
      const bearerAtStart = host.bearer(interfaceId);
      // A driver or transform that throws (the contract says send never throws) is a retryable
      // failure, never a delivery left in 'sending'.
      const send = this.#attempt(row, delivery)
        .catch((error: Error) => ({ ok: false as const, error: `driver error: ${error?.message ?? String(error)}`, retryable: true }))
        .then((outcome) => this.#settle(row, delivery, outcome, bearerAtStart));
      onAir.add(send);
      this.#sendingIds.set(delivery.id, { interfaceId, send });
      this.#inFlight.add(send);
      void send.finally(() => {
        onAir.delete(send);
        this.#sendingIds.delete(delivery.id);
        this.#inFlight.delete(send);
        // A slot came free while the loop may have returned: look at the queue again.
        if ((bearer.concurrency ?? 1) > 1) this.kick(interfaceId);
      });
      if ((bearer.concurrency ?? 1) <= 1) await this.#placeOnAir(interfaceId, onAir);
    }
  }

  /** Sends of an interface that are on the air (waiting for the bearer's answer). */
  #onAir(interfaceId: string): Set<Promise<void>> {
    let set = this.#sending.get(interfaceId);
    if (!set) this.#sending.set(interfaceId, (set = new Set()));
    return set;
  }

  /** The next due delivery, or null when none is due. */
  #nextDue(interfaceId: string, now: number): DeliveryRow | null {
    const { store } = this.#d;
    let batch = this.#due.get(interfaceId);
    // The last read held every due delivery and all of them were tried: asking again would find
    // none (what became due since is found by the sleep's timer, which reads the queue). One
    // query saved per wake-up, which at a few messages a second is every message.
    if (batch && batch.rows.length === 0 && batch.whole && batch.generation === store.generation) {
      this.#due.delete(interfaceId);
      return null;
    }
    // Anything written outside the dispatcher since the batch was read (a cancel, a retry, an
    // expiry) may have changed its rows: read again.
    if (!batch || batch.rows.length === 0 || batch.generation !== store.generation) {
      const rows = store.dueRows(interfaceId, now, DUE_BATCH);
      batch = { generation: store.generation, rows, whole: rows.length < DUE_BATCH };
      if (batch.rows.length === 0) {
        this.#due.delete(interfaceId);
        return null;
      }
      this.#due.set(interfaceId, batch);
    }
    return batch.rows.shift()!;
  }

  async #attempt(row: InterfaceRow, d: DeliveryRow): Promise<SendResult | { dropped: string }> {
    const transformed = applyTransforms(row.transforms.outbound as TransformStep[], {
      text: d.text,
      payload: d.payload,
      from: d.from,
      to: d.to,
      interface: row.name,
      channel: d.channel,
    });
    if (transformed.kind === 'dropped') return { dropped: `dropped by outbound transform step ${transformed.step + 1}: ${transformed.reason}` };
    const bearer = this.#d.host.bearer(row.id);
    if (!bearer) return { ok: false, error: 'the interface stopped while sending', retryable: true };
    // What the bearer said of each part (a split message: of the last one, field by field).
    const meta: Record<string, unknown> = {};
    // Read only by the bearers that say where a frame comes from (TAK, webhooks): two reads
    // of the stores that the other bearers' sends do not pay.
    const sources = this.#d;
    let origin: FrameOrigin | undefined;
    const count = transformed.outputs.length;
    for (const [i, part] of transformed.outputs.entries()) {
      const payload = part.payload ?? Buffer.from(part.text ?? '', 'utf8');
      const frame: OutboundFrame = {
        deliveryId: d.id, messageId: d.message_id, to: part.to, channel: part.channel, kind: d.kind, text: part.text, payload,
        ...(count > 1 ? { part: { index: i + 1, count } } : {}),
        get origin() {
          return (origin ??= frameOrigin(d, sources));
        },
      };
      // A bearer that waits for acknowledgements or reports names how long a send may take.
      const result = await withTimeout(Promise.resolve().then(() => bearer.send(frame)), Math.max(SEND_TIMEOUT_MS, bearer.maxSendMs ?? 0));
      if (!result.ok) return result;
      if (result.meta) Object.assign(meta, result.meta);
    }
    return { ok: true, meta };
  }

  #settle(row: InterfaceRow, d: DeliveryRow, outcome: SendResult | { dropped: string }, bearer: Bearer | undefined): void {
    const { store, clock, host } = this.#d;
    const now = clock.now();
    const attempts = d.attempts + 1;
    const sent = { ...d, attempts };
    if ('dropped' in outcome) {
      this.#record(sent, 'cancelled', outcome.dropped, (w) => store.settle(d.id, 'cancelled', outcome.dropped, now, w));
    } else if (outcome.ok) {
      host.noteSend(row.id, true);
      const result = outcome.meta && Object.keys(outcome.meta).length > 0 ? outcome.meta : null;
      this.#record({ ...sent, result }, 'delivered', null, (w) => store.settle(d.id, 'delivered', null, now, w, result));
    } else if (host.bearer(row.id) !== bearer) {
      // The interface was disabled, unbound or reconfigured while this was on its way: that is
      // no failure of the delivery, so the attempt is not counted (deliveries to a stopped
      // interface wait without spending attempts).
      const why = `interrupted: interface '${row.name}' stopped or restarted while sending`;
      this.#record(d, 'retrying', why, (w) => store.requeue(d.id, why, now, { next_attempt_ms: d.next_attempt_ms, front_ms: d.front_ms }, w));
    } else if (outcome.notSent) {
      // Nothing went out and nothing was spent (a send budget, a busy modem): back in the queue
      // without spending an attempt, due when the bearer says (at least a second from now, so
      // a bearer that says nothing cannot make the queue spin).
      const at = Math.max(outcome.retryAtMs ?? 0, now + NOT_SENT_MIN_WAIT_MS);
      this.#record({ ...d, next_attempt_ms: at }, 'retrying', outcome.error, (w) => store.requeue(d.id, outcome.error, now, { next_attempt_ms: at, front_ms: null }, w));
    } else {
      host.noteSend(row.id, false, outcome.error, outcome.reason);
      const policy = retryPolicyOf(row.retry);
      if (!outcome.retryable || attempts >= d.max_attempts) {
        const why = outcome.retryable ? `${outcome.error} (gave up after ${attempts} attempts)` : `${outcome.error} (not retryable)`;
        this.#record(sent, 'dead', why, (w) => store.settle(d.id, 'dead', why, now, w), true);
        this.#d.log.warn('delivery_dead', { delivery_id: d.id, interface: row.name, attempts, error: outcome.error });
      } else {
        // A bearer that paces its own sessions (an Iridium modem after a failed session) names
        // the earliest sensible retry; the backoff never brings it sooner.
        // override and flash never wait out a long backoff (precedence.ts).
        const cap = retryCapMs(d.precedence);
        const delay = Math.min(nextRetryDelayMs(attempts, policy, this.#d.random), cap ?? Infinity);
        const next = Math.max(now + delay, outcome.retryAtMs ?? 0);
        this.#record({ ...sent, next_attempt_ms: next }, 'retrying', outcome.error, (w) => store.scheduleRetry(d.id, next, outcome.error, now, w), true);
      }
    }
  }

  #sleepUntilDue(interfaceId: string): void {
    const existing = this.#timers.get(interfaceId);
    if (existing) this.#d.clock.clearTimeout(existing);
    this.#timers.delete(interfaceId);
    const at = this.#d.store.earliestWaiting(interfaceId);
    if (at === undefined) return;
    this.#timers.set(
      interfaceId,
      this.#d.clock.setTimeout(() => {
        this.#timers.delete(interfaceId);
        this.kick(interfaceId);
      }, at - this.#d.clock.now()),
    );
  }

  /** #scheduleExpiry where nothing may throw (a timer, a commit's listeners): a failed read is
   *  logged and tried again in a second. */
  #scheduleExpiryOrRetry(): void {
    try {
      this.#scheduleExpiry();
    } catch (error) {
      this.#expiryFailed(error);
    }
  }

  #expiryFailed(error: unknown): void {
    this.#d.log.error('expiry_failed', { error: (error as Error).message, action: 'retrying in 1 s' });
    if (this.#expiryTimer) this.#d.clock.clearTimeout(this.#expiryTimer);
    this.#expiryAt = this.#d.clock.now() + 1000;
    this.#expiryTimer = this.#d.clock.setTimeout(() => this.#scheduleExpiryOrRetry(), 1000);
  }

  #scheduleExpiry(): void {
    if (this.#stopped) return;
    if (this.#expiryTimer) this.#d.clock.clearTimeout(this.#expiryTimer);
    this.#expiryTimer = undefined;
    const now = this.#d.clock.now();
    const at = this.#d.store.earliestExpiry(now);
    this.#expiryAt = at;
    if (at === undefined) return;
    this.#expiryTimer = this.#d.clock.setTimeout(() => {
      this.#expiryTimer = undefined;
      try {
        const n = this.#d.store.expireDue(this.#d.clock.now());
        if (n > 0) this.#d.log.info('deliveries_expired', { count: n });
        this.#scheduleExpiry();
      } catch (error) {
        // Busy past 5 s: try again in a second rather than crash or stop expiring.
        this.#expiryFailed(error);
      }
    }, at - now);
  }

  /**
   * Queues a delivery's new state (written behind, see write-behind.ts) and, in the same
   * transaction, tells the event stream (the uplink outbox), so the event exists exactly when
   * the state does. `failedAttempt`: the bearer failed this attempt (the bearer-error metric).
   */
  #record(d: DeliveryRow, state: DeliveryRow['state'], error: string | null, write: (fromWaiting: boolean) => boolean, failedAttempt = false): void {
    const at = new Date(this.#d.clock.now()).toISOString();
    const final = state === 'delivered' || state === 'dead' || state === 'cancelled' || state === 'expired';
    // A delivered delivery keeps no error (delivery-store.ts settle).
    const row: DeliveryRow = { ...d, state, last_error: state === 'delivered' ? null : error ?? d.last_error, front_ms: null, updated_at: at, finished_at: final ? at : null };
    this.#d.writeBehind.defer(
      d.id,
      d.interface_id,
      (fromWaiting) => {
        // A cancellation that landed meanwhile wins: nothing changed, nothing to tell.
        if (write(fromWaiting)) this.#d.events.emit({ type: 'delivery', delivery: row, failedAttempt });
      },
      !final,
    );
  }
}

function withTimeout(p: Promise<SendResult>, ms: number): Promise<SendResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<SendResult>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, error: `the bearer did not answer within ${ms / 1000} s`, retryable: true }), ms);
    timer.unref();
  });
  return Promise.race([p.catch((e: Error) => ({ ok: false as const, error: `driver error: ${e.message}`, retryable: true })), timeout]).finally(() => clearTimeout(timer));
}
