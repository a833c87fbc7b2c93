import type { DatabaseSync } from 'node:sqlite';
import { isBusyError, transaction } from '../../db/sqlite.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { EventStream } from '../../lib/events.ts';
import { newId } from '../../lib/ids.ts';
import type { Logger } from '../../lib/log.ts';
import type { MessageStore } from './message-store.ts';
import type { RouterEvent } from './events.ts';
import { admit, newDelivery, type DeliveryTemplate } from './admission.ts';
import type { FallbackStore } from './fallback-store.ts';
import type { DeliveryStore } from './delivery-store.ts';
import type { InterfaceRow, FallbackMemberRow, FallbackRow, FallbackStrategy, TraceEntry, DeliveryRow } from './rows.ts';
import type { NodeAddresses } from './deciders.ts';

// Fallback lists (docs/routing.md, "Fallback lists"): one message, several {interface, to}
// members, and a strategy for getting it through by whichever works.
//
// - ordered: one member at a time. The next starts when the current one is not delivered
//   within its ack_within_s, or ends dead, expired or cancelled. The deadline counts from when
//   the member became the active one, whether its interface sends it at once or not: "mesh
//   first, SMS after 60 s" means 60 s from when the mesh was chosen, busy or jammed. A member
//   that cannot take the message now (interface disabled, unbound, offline, out of budget) is
//   skipped at once, with the reason.
// - first_available: the first member that can take it now, no deadline; the next only if it
//   ends without being delivered.
// - all: every member at once.
// The first member delivered cancels every other member still waiting ("superseded"); one
// delivered later (a late acknowledgement) is recorded, never hidden. Deadlines are stored:
// after a power cut, an escalation that fell due is made at start, before any queue sends
// (routing core start()), so a member past its deadline never goes on the air again. Starting
// a member writes its delivery and moves the list's position in one transaction, conditional
// on the position read, so no member is ever started twice.


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
  /** Where a node is now: a member started after its node was renumbered goes to the new id. */
  addresses?: NodeAddresses;
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
    if (list.deadline_ms !== null) this.#armBy(list.deadline_ms);
    return { list, deliveries };
  }

  /** Recovers after a restart: reactions a crash cut short, and escalations that fell due.
   *  Runs before the dispatcher starts, so nothing past its deadline is sent again first. */
  start(): void {
    this.#stopped = false;
    for (const list of this.#d.store.active()) {
      const members = this.#d.deliveries.byFallback(list.id);
      const delivered = members.find((d) => d.state === 'delivered');
      const current = members.filter((d) => d.fallback_pos === list.position);
      if (delivered) this.#react(delivered);
      else if (current.length > 0 && current.every((d) => isFinal(d.state))) this.#react(current[0]);
      else this.#giveDeadline(list);
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
    this.#setTimer(at ?? null);
  }

  /** A new deadline: the timer fires by then (no query; planned lists come one per message). A
   *  deadline rolled back with its transaction only makes the timer find nothing due. */
  #armBy(at: number): void {
    if (this.#stopped || (this.#timerAt !== null && this.#timerAt <= at)) return;
    this.#setTimer(at);
  }

  #setTimer(at: number | null): void {
    if (this.#timer) this.#d.clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#timerAt = at;
    if (at === null) return;
    this.#timer = this.#d.clock.setTimeout(() => {
      this.#timer = null;
      this.#timerAt = null;
      this.#fireDue();
    }, at - this.#d.clock.now());
  }

  #fireDue(): void {
    if (this.#stopped) return;
    let failed = false;
    // Every reason is read before any list moves: an escalation cancels sends on the air, and
    // a member queued behind them must be told what held it, not the queue as it is after.
    const due = this.#d.store.due(this.#d.clock.now()).map((list) => ({ list, detail: this.#timedOut(list) }));
    for (const { list, detail } of due) {
      try {
        this.#escalate(list, { event: 'escalated', detail });
      } catch (error) {
        this.#d.log.error('fallback_escalation_failed', { list_id: list.id, error: (error as Error).message });
        failed = true;
      }
    }
    // One still due: armed again now, the timer would fire at once and meet the same lock (or
    // full disk) in a tight loop. Again in a second.
    if (failed) this.#setTimer(this.#d.clock.now() + 1000);
    else this.#arm();
  }

  /** Why the current member of a list past its deadline is not delivered: "timed out at 60 s"
   *  when it went on the air, else "not started within 60 s: <what held it>". */
  #timedOut(list: FallbackRow): string {
    const member = list.members[list.position];
    const seconds = `${member?.ack_within_s ?? '?'} s`;
    const d = this.#d.deliveries.byFallback(list.id).filter((x) => x.fallback_pos === list.position).at(-1);
    if (!d || d.attempts > 0 || d.state === 'sending' || isFinal(d.state)) return `timed out at ${seconds}`;
    return `not started within ${seconds}: ${this.#notStartedWhy(d)}`;
  }

  #notStartedWhy(d: DeliveryRow): string {
    const cannot = this.#d.canTake(d.interface_id);
    if (cannot !== null) return cannot.startsWith('the interface') ? cannot : `the interface was ${cannot}`;
    if (d.state === 'held') return d.until_heard ? `held until ${d.until_heard} is heard` : 'the interface was down';
    // A send the bearer did not make (a budget, a busy modem) says why in its last error.
    if (d.last_error) return d.last_error;
    const byState = new Map<string, number>();
    for (const r of this.#d.deliveries.queueByPrecedence(d.interface_id)) byState.set(r.state, (byState.get(r.state) ?? 0) + r.n);
    const onAir = byState.get('sending') ?? 0;
    const waiting = (byState.get('pending') ?? 0) + (byState.get('retrying') ?? 0) + (byState.get('held') ?? 0) - 1;
    return `the interface was busy with other sends (${onAir} on the air, ${Math.max(waiting, 0)} more waiting)`;
  }

  /** A list stored before deadlines counted from the member's start (its member not yet on the
   *  air then had none): its deadline counts from when that member started, as the trace says. */
  #giveDeadline(list: FallbackRow): void {
    if (list.strategy !== 'ordered' || list.deadline_ms !== null) return;
    // The last member kept past its deadline has none any more, on purpose.
    if (list.trace.some((t) => t.member === list.position && t.event === 'escalated')) return;
    const started = list.trace.findLast((t) => t.member === list.position && t.event === 'started');
    const member = list.members[list.position];
    if (!started || !member) return;
    this.#d.store.update({ ...list, deadline_ms: Date.parse(started.at) + member.ack_within_s * 1000 }, list);
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

  /** Which members plan() would start now, read only (the senders policy charges only
   *  those): `all` every usable one; the others the first that can take it now, else
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
    const d = newDelivery(t, iface, this.#d.addresses?.current(m.to) ?? m.to, { fallback_id: list.id, fallback_pos: pos });
    const refused = admit(this.#d.deliveries, d, iface, t.nowMs);
    if (refused) {
      this.#trace(list, pos, 'skipped', refused, t.nowMs);
      return null;
    }
    this.#d.deliveries.insert(d);
    if (!all || pos > list.position) list.position = pos;
    // Its deadline runs from now, whether its interface sends it now or later.
    if (list.strategy === 'ordered') list.deadline_ms = t.nowMs + m.ack_within_s * 1000;
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
const byUs = (d: DeliveryRow) => d.state === 'cancelled' && (d.last_error?.startsWith('superseded:') === true || d.last_error?.startsWith('escalated:') === true);

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
