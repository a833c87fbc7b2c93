import type { DatabaseSync } from 'node:sqlite';
import type { FrameKind, InboundFrame } from '../../bearers/bearer.ts';
import { transaction } from '../../db/sqlite.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import type { EventStream } from '../../lib/events.ts';
import type { Logger } from '../../lib/log.ts';
import { admit, newDelivery, type DeliveryTemplate } from './admission.ts';
import type { FallbackService } from './fallback.ts';
import { DEFAULT_PRECEDENCE, precedenceName, precedenceRank, type Precedence } from './precedence.ts';
import { nodeKey } from './node-key.ts';
import { type DeliveryStore } from './delivery-store.ts';
import { AUTOMATION_META, DEFAULT_ACK_WITHIN_S, isFallback, SENDER_ADDRESS, type Decision, type Destination, type FallbackDestination, type PlainDestination, type RoutableMessage, type RuleTraceEntry } from './decisions.ts';
import type { AddressBooks, InterfaceLookup, NodeAddresses, PendingTakes, RuleDecider, SenderScreen, SenderVerdict } from './deciders.ts';
import { driverFor } from '../../bearers/drivers.ts';
import { applyTransforms, type TransformStep } from './transforms.ts';
import type { MessageStore } from './message-store.ts';
import type { RouterEvent } from './events.ts';
import { DEDUPE_WINDOW_MS, type SeenFrameStore } from './seen-frames.ts';
import { ReplyGuard } from './reply-guard.ts';
import { NEVER_MS, type FallbackMemberRow, type FallbackStrategy, type DeliveryRow, type InterfaceRow, type MessageRow } from './rows.ts';

// The one path every message takes (docs/architecture.md, "The message path"): received by a bearer, sent through
// the API or injected by simulate-mesh-rx, it passes the inbound transforms of the interface
// it came from, meets the rules, is stored with the decision and why, and becomes one
// delivery per destination. The dispatcher takes it from there.

/** A destination `to` of "{to}" means: the message's own destination address. */
export const SAME_TO = '{to}';

export interface IngressMessage {
  direction: 'inbound' | 'outbound';
  interfaceId: string | null;
  from: string;
  to: string;
  channel: number | null;
  kind: FrameKind;
  text: string | null;
  payload: Uint8Array | null;
  meta?: Record<string, unknown>;
  /** A repeatable frame's key (InboundFrame.dedupeKey): remembered with the message. */
  dedupeKey?: string;
  /** From the send request; wins over the deciding rule's (default routine). */
  precedence?: Precedence;
  /** How long its deliveries may wait, in ms; null: never expire (an SOS). Default: each
   *  interface's ttl_s. */
  ttlMs?: number | null;
  /** Destinations the caller chose instead of the rules (send-to-contact with a strategy). */
  route?: { destinations: Destination[]; reason: string };
}

export interface IngestResult {
  message: MessageRow;
  deliveries: DeliveryRow[];
}

/** One destination of a forward as the decision code resolved it (RoutePlan.steps). */
export interface PlainStep {
  type: 'plain';
  dest: PlainDestination;
  /** undefined: the interface no longer exists (a note says so). */
  iface: InterfaceRow | undefined;
  /** The addresses its `to` stands for ({from}, {to}, @group, @contact resolved). */
  addresses: string[];
  /** Why some address gave no delivery (an API message's {from}, a contact without one). */
  notes: string[];
}
export interface ListStep {
  type: 'list';
  strategy: FallbackStrategy;
  keepTrying: boolean;
  members: FallbackMemberRow[];
}
export type PlanStep = PlainStep | ListStep;

/** What the decision code makes of one message (or one part of it after inbound transforms):
 *  what ingest() stores and preview() describes. */
export interface RoutePlan {
  input: IngressMessage;
  message: MessageRow;
  decision: Decision;
  /** Rank 0 override ... 5 deferred. */
  precedence: number;
  now: number;
  steps: PlanStep[];
  /** What the senders policy said of a message heard on an interface; null for others. */
  sender: SenderVerdict | null;
}

export interface PreviewPart {
  plan: RoutePlan;
  /** Every rule in evaluation order (empty when no rule was asked: a drop by an inbound
   *  transform, a send-to-contact strategy). */
  trace: RuleTraceEntry[];
  /** Set when an inbound transform dropped the message. */
  dropped: string | null;
}

export interface PipelineDeps {
  db: DatabaseSync;
  clock: Clock;
  log: Logger;
  messages: MessageStore;
  deliveries: DeliveryStore;
  interfaces: InterfaceLookup;
  rules: RuleDecider;
  books: AddressBooks;
  /** The senders policy, part of the decision (docs/senders.md). */
  senders: SenderScreen;
  /** Which node an address names now: destinations reach a renumbered node at its new id. */
  addresses?: NodeAddresses;
  seen: SeenFrameStore;
  fallbacks: FallbackService;
  /** Where the pipeline tells what it stored: 'message' inside the transaction that stores it
   *  (the uplink outbox writes there, so both or neither happen), 'queued' after commit (the
   *  dispatcher wakes the interface's queue). */
  events: EventStream<RouterEvent>;
}

/** The sender marked the message as an automated one (InboundFrame.meta, decisions.ts). */
const isAutomated = (m: IngressMessage): boolean => m.meta?.[AUTOMATION_META] === true;

export class Pipeline {
  readonly #d: PipelineDeps;
  readonly #replies = new ReplyGuard();
  constructor(deps: PipelineDeps) {
    this.#d = deps;
  }

  /** A frame heard by a bearer. Disabled interfaces never get here (their bearer is stopped).
   *  A frame whose dedupe key was stored in the last 24 hours answers 'duplicate'. */
  receive(interfaceId: string, frame: InboundFrame): IngestResult[] | 'duplicate' {
    if (frame.dedupeKey !== undefined && this.#d.seen.seen(frame.dedupeKey, this.#d.clock.now() - DEDUPE_WINDOW_MS)) {
      this.#heard(frame.from); // a repeat still says the node is around
      return 'duplicate';
    }
    return this.ingest({
      direction: 'inbound', interfaceId, from: frame.from, to: frame.to ?? 'broadcast', channel: frame.channel, kind: frame.kind, text: frame.text, payload: frame.payload, meta: frame.meta,
      dedupeKey: frame.dedupeKey,
    });
  }

  /** Any packet from a node releases what was held until it is heard (docs/routing.md, "Until heard"). */
  #heard(from: string): void {
    const { deliveries, clock, events } = this.#d;
    const nodeId = nodeKey(from);
    if (!deliveries.anyHeldFor(nodeId)) return;
    const released = deliveries.releaseHeard(nodeId, clock.now());
    const byInterface = new Map<string, DeliveryRow[]>();
    for (const d of released) byInterface.set(d.interface_id, [...(byInterface.get(d.interface_id) ?? []), d]);
    for (const [interfaceId, rows] of byInterface) {
      events.emit({ type: 'queued', interfaceId, earliestExpiryMs: Math.min(...rows.map((r) => r.expires_ms)), precedence: Math.min(...rows.map((r) => r.precedence)) });
    }
  }

  ingest(input: IngressMessage): IngestResult[] {
    if (input.direction === 'inbound') this.#heard(input.from);
    const { parts, sourceName, dropReason } = this.#inbound(input);
    const results: IngestResult[] = [];
    try {
      for (const part of parts) results.push(this.#route(part, sourceName, dropReason));
    } finally {
      // Parts are committed one by one: if a later one fails, the ones already stored are
      // still dispatched.
      const touched = new Map<string, { expiry: number; precedence: number }>();
      for (const d of results.flatMap((r) => r.deliveries)) {
        const t = touched.get(d.interface_id);
        touched.set(d.interface_id, { expiry: Math.min(d.expires_ms, t?.expiry ?? Infinity), precedence: Math.min(d.precedence, t?.precedence ?? Infinity) });
      }
      for (const [interfaceId, t] of touched) this.#d.events.emit({ type: 'queued', interfaceId, earliestExpiryMs: t.expiry, precedence: t.precedence });
    }
    return results;
  }

  /**
   * What ingest() would decide for this message at `atMs`, without storing, sending or
   * counting anything (POST /api/messages/preview): the same inbound transforms and
   * the same #plan as a real message, with the rules asked through evaluate() (no fired count)
   * and a trace of every rule. Nodes waiting to be heard are not released.
   */
  preview(input: IngressMessage, atMs: number): PreviewPart[] {
    const { parts, sourceName, dropReason } = this.#inbound(input);
    // The real path stores each part before it decides the next: a sender's earlier parts
    // take their tokens first, and the preview counts them the same way, in memory.
    const pending: PendingTakes = new Map();
    return parts.map((part) => {
      const trace: RuleTraceEntry[] = [];
      const plan = this.#plan(part, sourceName, dropReason, atMs, (msg) => this.#d.rules.evaluate(msg, atMs, trace), pending);
      if (plan.sender && plan.message.action === 'forward') this.#d.senders.took(pending, plan.sender, atMs);
      return { plan, trace, dropped: dropReason };
    });
  }

  /** The interface's inbound transforms: the parts to route, or why the message is dropped. */
  #inbound(input: IngressMessage): { parts: IngressMessage[]; sourceName: string | null; dropReason: string | null } {
    const source = input.interfaceId ? this.#d.interfaces.find(input.interfaceId) : undefined;
    let parts: IngressMessage[] = [input];
    let dropReason: string | null = null;
    if (source && source.transforms.inbound.length > 0) {
      const t = applyTransforms(source.transforms.inbound as TransformStep[], { text: input.text, payload: input.payload, from: input.from, to: input.to, interface: source.name, channel: input.channel });
      if (t.kind === 'dropped') dropReason = `dropped by inbound transform step ${t.step + 1} of '${source.name}': ${t.reason}`;
      else parts = t.outputs.map((o) => ({ ...input, text: o.text, payload: o.payload, from: o.from, to: o.to, channel: o.channel }));
    }
    return { parts, sourceName: source?.name ?? null, dropReason };
  }

  // One transaction per message: the rule's fired count, the message, its deliveries and the
  // uplink record are written together, and committed once (a commit costs more than the rows
  // it carries: npm run bench). Messages that come quickly share a commit (group commit, issue
  // 22): whoever acknowledges one awaits committed(db) first (the HTTP layer, held-frames.ts).
  #route(m: IngressMessage, sourceName: string | null, dropReason: string | null): IngestResult {
    return transaction(this.#d.db, () => this.#store(this.#plan(m, sourceName, dropReason, this.#d.clock.now(), (msg) => this.#d.rules.decide(msg))), { group: true });
  }

  /**
   * The decision code (one function, two callers): the message row, the decision and
   * the deliveries it asks for, with every address resolved. Writes nothing itself (`decide`
   * may: the real caller's records the rule's fired count); ingest() stores the plan, preview()
   * describes it.
   */
  #plan(m: IngressMessage, sourceName: string | null, dropReason: string | null, now: number, decide: (msg: RoutableMessage) => Decision, pending?: PendingTakes): RoutePlan {
    // The senders policy (docs/senders.md) screens what was heard on an interface: a blocked
    // sender's message is dropped before any rule is asked.
    const heard = m.direction === 'inbound' && m.interfaceId !== null && !m.route;
    const blocked = heard && !dropReason ? this.#d.senders.blocked(m.from) : null;
    let decision: Decision = dropReason
      ? { rule_id: null, action: 'drop', destinations: [], reason: dropReason }
      : blocked
        ? { rule_id: null, action: 'drop', destinations: [], reason: `${blocked}: not forwarded` }
        : m.route
          ? { rule_id: null, action: 'forward', destinations: m.route.destinations, reason: m.route.reason }
          : decide({ direction: m.direction, interface_id: m.interfaceId, interface_name: sourceName, from: m.from, to: m.to, channel: m.channel, kind: m.kind, text: m.text, automated: isAutomated(m) });
    let steps: PlanStep[] = [];
    if (decision.action === 'forward') {
      for (const dest of decision.destinations) steps.push(isFallback(dest) ? this.#listStep(dest, m, now) : this.#plainStep(dest, m, now));
    }
    let sender: SenderVerdict | null = null;
    if (heard) {
      // Limits count forwards to interfaces of their kinds: the kinds this plan would use. Of a
      // fallback list, only the member(s) starting now: a later one is charged if it starts
      // (never, today: escalations are not the sender's doing).
      const kinds = new Set<string>();
      for (const step of steps) {
        if (step.type === 'plain') {
          if (step.iface && step.addresses.length > 0) kinds.add(step.iface.kind);
        } else {
          for (const i of this.#d.fallbacks.wouldStart(step.strategy, step.members)) kinds.add(this.#d.interfaces.find(step.members[i].interface_id)?.kind ?? '');
        }
      }
      sender = kinds.size > 0 ? this.#d.senders.verdict(m.from, kinds, now, pending) : { address: m.from, blocked, over: null, takes: [], limits: [] };
      if (sender.over) {
        // Over a limit: kept, with the reason, and sent nowhere (never silently dropped).
        decision = { ...decision, action: 'store', destinations: [], reason: `${decision.reason}; ${sender.over}: stored, not forwarded` };
        steps = [];
      }
    }
    const precedence = precedenceRank(m.precedence ?? decision.precedence ?? DEFAULT_PRECEDENCE);
    const payload = m.payload ?? (m.text !== null ? Buffer.from(m.text, 'utf8') : null);
    const message: MessageRow = {
      // The id always carries the clock's time: a preview's `at` (perhaps years ahead) is for
      // rules, schedules and buckets only. newId() never goes back in time, so an id minted at
      // `at` would stamp every later message with it.
      id: newId('msg', this.#d.clock.now()),
      direction: m.direction,
      interface_id: m.interfaceId,
      from: m.from,
      to: m.to,
      channel: m.channel,
      kind: m.kind,
      text: m.text,
      payload: m.text !== null ? null : payload,
      size: payload?.length ?? 0,
      rule_id: decision.rule_id,
      action: decision.action,
      decision: { rule_id: decision.rule_id, action: decision.action, reason: decision.reason, ...(decision.action === 'forward' ? { precedence: precedenceName(precedence) } : {}) },
      meta: m.meta ?? {},
      created_at: new Date(now).toISOString(),
    };
    return { input: m, message, decision, precedence, now, steps, sender };
  }

  /** A plain destination: its interface and every address it stands for. */
  #plainStep(dest: PlainDestination, m: IngressMessage, now: number): PlainStep {
    const iface = this.#d.interfaces.find(dest.interface);
    const notes: string[] = [];
    if (!iface) return { type: 'plain', dest, iface: undefined, addresses: [], notes: [`destination interface ${dest.interface} no longer exists`] };
    return { type: 'plain', dest, iface, addresses: this.#addressesFor(dest.to, m, iface.kind, notes, now), notes };
  }

  /** A fallback list: its members' addresses resolved now (one each). */
  #listStep(dest: FallbackDestination, m: IngressMessage, now: number): ListStep {
    const members: FallbackMemberRow[] = dest.fallback.map((member) => {
      const iface = this.#d.interfaces.find(member.interface);
      const ack = member.ack_within_s ?? DEFAULT_ACK_WITHIN_S;
      if (!iface) return { interface_id: member.interface, interface: member.interface, to: null, ack_within_s: ack, unusable: 'the interface no longer exists' };
      const memberNotes: string[] = [];
      const addresses = this.#addressesFor(member.to, m, iface.kind, memberNotes, now);
      if (addresses.length === 0) return { interface_id: iface.id, interface: iface.name, to: null, ack_within_s: ack, unusable: memberNotes.join('; ') || `no address for ${member.to}` };
      return { interface_id: iface.id, interface: iface.name, to: addresses[0], ack_within_s: ack };
    });
    // Written without them, a list is ordered and does not keep trying (match.ts defaults).
    return { type: 'list', strategy: dest.strategy ?? 'ordered', keepTrying: dest.keep_trying ?? false, members };
  }

  /** Stores a plan: each delivery let into its queue within the caps, each list started by
   *  fallbacks.ts, the message with the notes of both, inside the caller's transaction. */
  #store(plan: RoutePlan): IngestResult {
    const { message, input: m, now } = plan;
    const deliveries: DeliveryRow[] = [];
    const notes: string[] = [];
    if (plan.steps.length > 0) {
      const template: DeliveryTemplate = { message, precedence: plan.precedence, ttlMs: m.ttlMs, nowMs: now };
      for (const step of plan.steps) {
        if (step.type === 'list') {
          const { list, deliveries: started } = this.#d.fallbacks.plan(template, { strategy: step.strategy, keepTrying: step.keepTrying, members: step.members });
          if (list.state === 'exhausted') notes.push(`fallback list ${list.id}: ${list.outcome}`);
          deliveries.push(...started);
        } else {
          notes.push(...step.notes);
          const made = step.iface ? this.#plain(step.dest, step.iface, step.addresses, template, notes) : [];
          deliveries.push(...made);
          // An answer to the sender counts in its chain; a refused one keeps the chain going.
          if (step.dest.to === SENDER_ADDRESS && m.interfaceId !== null && !isAutomated(m)) this.#replies.took(m.interfaceId, m.from, now, made.length > 0);
        }
      }
      if (notes.length > 0 && message.decision) message.decision.reason += `; ${notes.join('; ')}`;
    }
    this.#d.messages.insert(message);
    // The sender's counters and tokens ride the message's own transaction (docs/senders.md).
    // Only what was queued counts: a forward whose every delivery a full queue refused is not
    // one, and a limit takes a token only when a delivery of one of its kinds was inserted.
    if (plan.sender) {
      const queued = new Set(deliveries.map((d) => this.#d.interfaces.find(d.interface_id)?.kind ?? ''));
      this.#d.senders.record(plan.sender, message.action === 'forward' && deliveries.length > 0, now, queued);
    }
    // In the same transaction: the key exists exactly when the message does.
    if (m.dedupeKey !== undefined && m.interfaceId !== null) this.#d.seen.remember(m.dedupeKey, m.interfaceId, now);
    this.#d.events.emit({ type: 'message', message, deliveries });
    return { message, deliveries };
  }

  /** One delivery per address of a plain destination, each let into its queue within the caps. */
  #plain(dest: PlainDestination, iface: InterfaceRow, addresses: string[], template: DeliveryTemplate, notes: string[]): DeliveryRow[] {
    const out: DeliveryRow[] = [];
    for (const to of addresses) {
      const d = newDelivery(template, iface, to);
      if (dest.until_heard) {
        // Held until the node is heard again; its TTL counts from then (docs/routing.md).
        d.state = 'held';
        d.until_heard = nodeKey(to);
        d.held_ttl_ms = d.expires_ms >= NEVER_MS ? null : d.expires_ms - template.nowMs;
        d.expires_ms = NEVER_MS;
      }
      const refused = admit(this.#d.deliveries, d, iface, template.nowMs);
      if (refused) {
        notes.push(refused);
        continue;
      }
      this.#d.deliveries.insert(d);
      out.push(d);
    }
    return out;
  }

  /** The addresses a destination stands for, each where its node is now (a node renumbered
   *  since an address named it is reached at its new id; a public key, at its node's id). */
  #addressesFor(to: string, m: IngressMessage, kind: string, notes: string[], now: number): string[] {
    const expanded = this.#expand(to, m, kind, notes, now);
    const identity = this.#d.addresses;
    if (!identity) return expanded;
    return expanded.flatMap((address) => {
      const now = identity.current(address);
      if (now === null) notes.push(`no node with the public key ${address} has been heard, so nothing was sent to it`);
      return now === null ? [] : [now];
    });
  }

  /** Expands a destination address: "{to}", "{from}", "@group" (every member), "@contact" (its address for this kind). */
  #expand(to: string, m: IngressMessage, kind: string, notes: string[], now: number): string[] {
    if (to === SAME_TO) return this.#expand(m.to, m, kind, notes, now);
    if (to === SENDER_ADDRESS) {
      // A message sent through the API has no sender on any bearer to answer.
      if (m.interfaceId === null) {
        notes.push(`{from}: the message was sent through the API (from ${m.from}), so it has no sender to answer`);
        return [];
      }
      // A bot's message is never answered (its sender marked it automated), and answers to
      // one sender stop after a chain of them (reply-guard.ts): no two bridges answer each other.
      if (isAutomated(m)) {
        notes.push(`{from}: ${m.from} marked the message as sent by an automated sender (meta.${AUTOMATION_META}), so it is not answered`);
        return [];
      }
      const refused = this.#replies.refusal(m.interfaceId, m.from, now);
      if (refused) {
        notes.push(refused);
        return [];
      }
      return [m.from];
    }
    if (!to.startsWith('@')) return [to];
    const name = to.slice(1);
    const group = this.#d.books.group(name);
    if (group) return group;
    const contact = this.#d.books.contact(name);
    if (contact) {
      const field = driverFor(kind)?.contact.field ?? 'mesh';
      const address = contact[field];
      if (address) return [address];
      notes.push(`contact '${name}' has no ${field} address, so nothing was sent to it on a ${kind} interface`);
      return [];
    }
    notes.push(`no object group or contact named '${name}'`);
    return [];
  }
}
