import type { DatabaseSync } from 'node:sqlite';
import { isBusyError, transaction } from '../../db/sqlite.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { EventStream } from '../../lib/events.ts';
import { newId } from '../../lib/ids.ts';
import type { Logger } from '../../lib/log.ts';
import type { InterfaceRow } from '../interfaces/store.ts';
import type { MessageStore } from '../messages/store.ts';
import type { RouterEvent } from '../router/events.ts';
import { admit, newDelivery, type DeliveryTemplate } from './admission.ts';
import type { FallbackMemberRow, FallbackRow, FallbackStore, FallbackStrategy, TraceEntry } from './fallback-store.ts';
import type { DeliveryRow, DeliveryStore } from './store.ts';

// Fallback lists (docs/routing.md, "Fallback lists"): one message, several {interface, to}
// members, and a strategy for getting it through by whichever works.
//
// - ordered: one member at a time. The next starts when the current one is not delivered
//   within its ack_within_s (counted from its first attempt), or ends dead, expired or
//   cancelled. A member that cannot take the message now (interface disabled, unbound,
//   offline, out of budget) is skipped at once, with the reason.
// - first_available: the first member that can take it now, no deadline; the next only if it
//   ends without being delivered.
// - all: every member at once.
// The first member delivered cancels every other member still waiting ("superseded"); one
// delivered later (a late acknowledgement) is recorded, never hidden. Deadlines are stored:
// after a power cut, an escalation that fell due is made at start. Starting a member writes
// its delivery and moves the list's position in one transaction, conditional on the position
// read, so no member is ever started twice.

const WAITING = "('pending', 'held', 'retrying')";

export interface FallbackDeps {
  db: DatabaseSync;
  store: FallbackStore;
  deliveries: DeliveryStore;
  messages: MessageStore;
  interfaces: { find(id: string): InterfaceRow | undefined };
  events: EventStream<RouterEvent>;
  clock: Clock;
  log: Logger;
  /** Why an interface cannot take a message now (disabled, unbound, offline, budget spent); null when it can. */
  canTake(interfaceId: string): string | null;
}

export interface PlannedList {
  strategy: FallbackStrategy;
  keepTrying: boolean;
  members: FallbackMemberRow[];
}

export class FallbackService {
  readonly #d: FallbackDeps;
  #timer: TimerHandle | null = null;
  #timerAt: number | null = null;
  #stopped = false;

  constructor(deps: FallbackDeps) {
    this.#d = deps;
    deps.events.subscribe((event) => {
      // Emitted inside the transaction that wrote the delivery: react after it commits.
      if (event.type === 'delivery' && event.delivery.fallback_id) {
        const d = event.delivery;
        if (d.state === 'delivered' || d.state === 'dead' || d.state === 'expired' || d.state === 'cancelled') setImmediate(() => this.#react(d));
      }
    });
  }

  /** Inside the pipeline's transaction: stores the list and starts its first member (or, for
   *  `all`, every member). Answers the deliveries it inserted. */
  plan(template: DeliveryTemplate, planned: PlannedList): { list: FallbackRow; deliveries: DeliveryRow[] } {
    const now = template.nowMs;
    const at = iso(now);
    const list: FallbackRow = {
      id: newId('fbl', now), message_id: template.message.id, strategy: planned.strategy, keep_trying: planned.keepTrying, members: planned.members,
      position: -1, deadline_ms: null, state: 'active', trace: [], outcome: null, precedence: template.precedence, ttl_ms: template.ttlMs ?? null, created_at: at, updated_at: at,
    };
    const deliveries: DeliveryRow[] = [];
    if (planned.strategy === 'all') {
      planned.members.forEach((m, pos) => {
        const d = this.#startMember(list, pos, template, true);
        if (d) deliveries.push(d);
      });
      if (deliveries.length === 0) this.#exhaust(list, 'no member could be started');
    } else {
      const d = this.#startNext(list, 0, template);
      if (d) deliveries.push(d);
    }
    this.#d.store.insert(list);
    return { list, deliveries };
  }

  /** The dispatcher is about to make a delivery's first attempt: an ordered list's deadline for
   *  that member starts now. */
  firstAttempt(d: DeliveryRow, nowMs: number): void {
    if (!d.fallback_id || d.fallback_pos === null || d.fallback_pos === undefined) return;
    const list = this.#d.store.get(d.fallback_id);
    if (!list || list.strategy !== 'ordered' || list.position !== d.fallback_pos || list.deadline_ms !== null) return;
    const member = list.members[d.fallback_pos];
    if (this.#d.store.startDeadline(list.id, d.fallback_pos, nowMs + member.ack_within_s * 1000, iso(nowMs))) this.#arm();
  }

  /** Recovers after a restart: reactions a crash cut short, and escalations that fell due. */
  start(): void {
    this.#stopped = false;
    for (const list of this.#d.store.active()) {
      const members = this.#d.deliveries.byFallback(list.id);
      const delivered = members.find((d) => d.state === 'delivered');
      const current = members.filter((d) => d.fallback_pos === list.position);
      if (delivered) this.#react(delivered);
      else if (current.length > 0 && current.every((d) => isFinal(d.state))) this.#react(current[0]);
    }
    this.#fireDue();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) this.#d.clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#timerAt = null;
  }

  byMessage(messageId: string): FallbackRow[] {
    return this.#d.store.byMessage(messageId);
  }

  /** Cancels every leg of a message (waiting or on the air) and its lists (POST
   *  /api/messages/{id}/cancel). Answers the deliveries cancelled. */
  cancelMessage(messageId: string, reason: string): DeliveryRow[] {
    const now = this.#d.clock.now();
    return transaction(this.#d.db, () => {
      for (const list of this.#d.store.byMessage(messageId)) {
        if (list.state !== 'active') continue;
        const next = { ...list, state: 'cancelled' as const, deadline_ms: null, updated_at: iso(now), outcome: `cancelled: ${reason}` };
        next.trace = [...list.trace, { at: iso(now), member: list.position, interface: list.members[list.position]?.interface ?? '', event: 'cancelled', detail: reason }];
        this.#d.store.update(next, list);
      }
      return this.#d.deliveries.cancelMessage(messageId, reason, now);
    });
  }

  // ---- reacting to deliveries ---------------------------------------------------------------

  #react(d: DeliveryRow): void {
    if (this.#stopped) return;
    try {
      const list = d.fallback_id ? this.#d.store.get(d.fallback_id) : undefined;
      if (!list) return;
      if (d.state === 'delivered') this.#delivered(list, d);
      else if (list.state === 'active' && !byUs(d)) this.#memberEnded(list, d);
    } catch (error) {
      // Another process's lock: the reaction (one transaction, rolled back) is tried again in
      // a second; it reads the list afresh and records each event once.
      const busy = isBusyError(error);
      this.#d.log.error('fallback_reaction_failed', { delivery_id: d.id, error: (error as Error).message, ...(busy ? { action: 'retrying in 1 s' } : {}) });
      if (busy) this.#d.clock.setTimeout(() => this.#react(d), 1000);
    }
  }

  #delivered(list: FallbackRow, d: DeliveryRow): void {
    const now = this.#d.clock.now();
    const member = d.fallback_pos ?? 0;
    const name = list.members[member]?.interface ?? d.interface_id;
    if (list.trace.some((t) => t.member === member && (t.event === 'delivered' || t.event === 'late'))) return;
    // The dispatcher's unwritten 'sending' marks first: a sibling already on the air must not
    // read as waiting and be superseded (its own outcome would then be lost).
    this.#d.deliveries.flush();
    transaction(this.#d.db, () => {
      const next = { ...list, updated_at: iso(now), trace: [...list.trace] };
      if (list.state === 'active') {
        next.state = 'delivered';
        next.deadline_ms = null;
        next.trace.push({ at: iso(now), member, interface: name, event: 'delivered' });
        for (const other of this.#d.deliveries.supersede(list.id, d.id, `superseded: delivered via ${name}`, now)) {
          next.trace.push({ at: iso(now), member: other.fallback_pos ?? -1, interface: list.members[other.fallback_pos ?? 0]?.interface ?? other.interface_id, event: 'superseded' });
        }
        // An earlier member acknowledged after the list had moved on: delivered, but late.
        next.outcome = member < list.position ? `delivered via ${name} after its deadline (${list.members[list.position]?.interface} had started)` : outcomeOf(next, member);
      } else {
        // A late acknowledgement of an earlier member: recorded, never hidden.
        next.trace.push({ at: iso(now), member, interface: name, event: 'late', detail: 'delivered after another member had been' });
        next.outcome = `${list.outcome ?? list.state}; also delivered via ${name}`;
      }
      if (!this.#d.store.update(next, list)) throw new Error('the list changed meanwhile');
    });
    this.#arm();
  }

  /** A started member ended without being delivered (dead, expired, cancelled by an operator). */
  #memberEnded(list: FallbackRow, d: DeliveryRow): void {
    const member = d.fallback_pos ?? 0;
    const detail = `${d.state}${d.last_error ? `: ${d.last_error}` : ''}`;
    if (list.strategy === 'all') {
      const legs = this.#d.deliveries.byFallback(list.id);
      if (legs.every((l) => isFinal(l.state) && l.state !== 'delivered')) {
        const now = this.#d.clock.now();
        const next = { ...list, trace: [...list.trace, { at: iso(now), member, interface: list.members[member]?.interface ?? '', event: 'failed' as const, detail }], updated_at: iso(now) };
        this.#exhaust(next, 'every member ended without delivery');
        this.#d.store.update(next, list);
      }
      return;
    }
    if (member !== list.position) return; // an earlier member, already escalated past
    this.#escalate(list, { event: 'failed', detail });
  }

  // ---- escalation ---------------------------------------------------------------------------

  #arm(): void {
    if (this.#stopped) return;
    const at = this.#d.store.earliestDeadline();
    if (at === this.#timerAt) return;
    if (this.#timer) this.#d.clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#timerAt = at ?? null;
    if (at === undefined) return;
    this.#timer = this.#d.clock.setTimeout(() => {
      this.#timer = null;
      this.#timerAt = null;
      this.#fireDue();
    }, at - this.#d.clock.now());
  }

  #retryDueLater(): void {
    if (this.#timer) this.#d.clock.clearTimeout(this.#timer);
    this.#timerAt = this.#d.clock.now() + 1000;
    this.#timer = this.#d.clock.setTimeout(() => {
      this.#timer = null;
      this.#timerAt = null;
      this.#fireDue();
    }, 1000);
  }

  #fireDue(): void {
    if (this.#stopped) return;
    let failed = false;
    for (const list of this.#d.store.due(this.#d.clock.now())) {
      const member = list.members[list.position];
      try {
        this.#escalate(list, { event: 'escalated', detail: `timed out at ${member?.ack_within_s ?? '?'} s` });
      } catch (error) {
        this.#d.log.error('fallback_escalation_failed', { list_id: list.id, error: (error as Error).message });
        failed = true;
      }
    }
    // One still due: armed again now, the timer would fire at once and meet the same lock (or
    // full disk) in a tight loop. Again in a second.
    if (failed) this.#retryDueLater();
    else this.#arm();
  }

  /** Starts the next member that can take the message. The current one is cancelled unless the
   *  list keeps trying, or no next member exists (then it is the last hope and keeps going). */
  #escalate(list: FallbackRow, why: { event: 'escalated' | 'failed'; detail: string }): void {
    const now = this.#d.clock.now();
    const message = this.#d.messages.get(list.message_id);
    const started: DeliveryRow[] = [];
    this.#d.deliveries.flush(); // as in #delivered: nothing on the air reads as waiting
    transaction(this.#d.db, () => {
      const current = list.members[list.position];
      const next: FallbackRow = { ...list, trace: [...list.trace, { at: iso(now), member: list.position, interface: current?.interface ?? '', event: why.event, detail: why.detail }], deadline_ms: null, updated_at: iso(now) };
      if (!message) {
        this.#exhaust(next, 'the message was deleted from the history');
      } else {
        const template: DeliveryTemplate = { message, precedence: list.precedence, ttlMs: list.ttl_ms, nowMs: now };
        const d = this.#startNext(next, list.position + 1, template);
        if (d) {
          started.push(d);
          if (!list.keep_trying && why.event === 'escalated') this.#d.deliveries.escalateAway(list.id, list.position, `escalated: ${current?.interface ?? 'member'} ${why.detail}`, now);
        } else if (why.event === 'escalated') {
          // Past its deadline with nobody after it: the last member is the last hope and keeps
          // trying; the list stays active and ends with it.
          next.state = 'active';
          next.outcome = null;
          next.trace.push({ at: iso(now), member: list.position, interface: current?.interface ?? '', event: 'escalated', detail: 'no member left to start; it keeps trying' });
        }
      }
      if (!this.#d.store.update(next, list)) throw new Error('the list changed meanwhile');
    });
    for (const d of started) this.#d.events.emit({ type: 'queued', interfaceId: d.interface_id, earliestExpiryMs: d.expires_ms, precedence: d.precedence });
    this.#arm();
  }

  /** Which members plan() would start now, read only (the senders policy charges only those,
   *  issue 17 review): `all` every usable one; the others the first that can take it now, else
   *  the first usable one (held), as #startNext does. Queue caps are not asked here. */
  wouldStart(strategy: PlannedList['strategy'], members: readonly FallbackMemberRow[]): number[] {
    const usable = (m: FallbackMemberRow) => !m.unusable && m.to !== null && this.#d.interfaces.find(m.interface_id) !== undefined;
    if (strategy === 'all') return members.flatMap((m, i) => (usable(m) ? [i] : []));
    const now = members.findIndex((m) => usable(m) && this.#d.canTake(m.interface_id) === null);
    if (now >= 0) return [now];
    const held = members.findIndex(usable);
    return held >= 0 ? [held] : [];
  }

  /** Starts the first member from `from` on that can take the message now; when none can, the
   *  first usable one anyway (its dispatcher holds it until its interface returns). Mutates
   *  `list` (position, trace, state). */
  #startNext(list: FallbackRow, from: number, t: DeliveryTemplate): DeliveryRow | null {
    let fallbackPos: number | null = null;
    for (let pos = from; pos < list.members.length; pos++) {
      const m = list.members[pos];
      const why = m.unusable ?? (this.#d.interfaces.find(m.interface_id) ? this.#d.canTake(m.interface_id) : 'the interface was deleted');
      if (why !== null) {
        this.#trace(list, pos, 'skipped', why, t.nowMs);
        if (!m.unusable && this.#d.interfaces.find(m.interface_id) && fallbackPos === null) fallbackPos = pos;
        continue;
      }
      const d = this.#startMember(list, pos, t, false);
      if (d) return d;
    }
    if (fallbackPos !== null) {
      const d = this.#startMember(list, fallbackPos, t, false, 'no member can take it now; it waits here until its interface returns');
      if (d) return d;
    }
    this.#exhaust(list, 'no member left to try');
    return null;
  }

  #startMember(list: FallbackRow, pos: number, t: DeliveryTemplate, all: boolean, note?: string): DeliveryRow | null {
    const m = list.members[pos];
    const iface = this.#d.interfaces.find(m.interface_id);
    if (!iface || m.to === null) {
      this.#trace(list, pos, 'skipped', m.unusable ?? 'the interface was deleted', t.nowMs);
      return null;
    }
    const d = newDelivery(t, iface, m.to, { fallback_id: list.id, fallback_pos: pos });
    const refused = admit(this.#d.deliveries, d, iface, t.nowMs);
    if (refused) {
      this.#trace(list, pos, 'skipped', refused, t.nowMs);
      return null;
    }
    this.#d.deliveries.insert(d);
    if (!all || pos > list.position) list.position = pos;
    this.#trace(list, pos, 'started', note, t.nowMs);
    // Inside the transaction that wrote it, like every delivery change (the uplink hears it).
    this.#d.events.emit({ type: 'delivery', delivery: d, failedAttempt: false });
    return d;
  }

  #trace(list: FallbackRow, member: number, event: TraceEntry['event'], detail: string | undefined, nowMs: number): void {
    list.trace.push({ at: iso(nowMs), member, interface: list.members[member]?.interface ?? '', event, ...(detail ? { detail } : {}) });
  }

  #exhaust(list: FallbackRow, why: string): void {
    list.state = 'exhausted';
    list.deadline_ms = null;
    list.outcome = `not delivered: ${why}${storyOf(list, list.members.length) ? ` (${storyOf(list, list.members.length)})` : ''}`;
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
const isFinal = (s: DeliveryRow['state']) => s === 'delivered' || s === 'dead' || s === 'expired' || s === 'cancelled';
/** Cancelled by this service (superseded or escalated away): not a failure to react to. */
const byUs = (d: DeliveryRow) => d.state === 'cancelled' && /^(superseded|escalated):/.test(d.last_error ?? '');

/** "delivered via sms-0 after mesh-0 timed out at 60 s". */
function outcomeOf(list: FallbackRow, member: number): string {
  const name = list.members[member]?.interface ?? '?';
  const before = storyOf(list, member);
  return `delivered via ${name}${before ? ` after ${before}` : ''}`;
}

/** What became of the members before `upTo`, in the order it happened. */
function storyOf(list: FallbackRow, upTo: number): string {
  const parts: string[] = [];
  for (const t of list.trace) {
    if (t.member >= upTo) continue;
    if (t.event === 'escalated') parts.push(`${t.interface} ${t.detail ?? 'timed out'}`);
    else if (t.event === 'skipped') parts.push(`${t.interface} was skipped (${t.detail ?? 'unavailable'})`);
    else if (t.event === 'failed') parts.push(`${t.interface} ended ${t.detail ?? 'without delivery'}`);
  }
  return parts.join(', ');
}
