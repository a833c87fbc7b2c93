import type { DatabaseSync } from 'node:sqlite';
import type { FrameKind, InboundFrame } from '../../bearers/bearer.ts';
import { transaction } from '../../db/sqlite.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import type { EventStream } from '../../lib/events.ts';
import type { Logger } from '../../lib/log.ts';
import type { BookService } from '../contacts/service.ts';
import { retryPolicyOf } from '../deliveries/backoff.ts';
import type { DeliveryRow, DeliveryStore } from '../deliveries/store.ts';
import { driverFor } from '../../bearers/drivers.ts';
import type { InterfaceLookup } from '../rules/service.ts';
import { applyTransforms, type TransformStep } from '../interfaces/transforms.ts';
import type { MessageRow, MessageStore } from '../messages/store.ts';
import type { RuleService } from '../rules/service.ts';
import type { RouterEvent } from './events.ts';
import { DEDUPE_WINDOW_MS, type SeenFrameStore } from './seen-frames.ts';

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
}

export interface IngestResult {
  message: MessageRow;
  deliveries: DeliveryRow[];
}

export interface PipelineDeps {
  db: DatabaseSync;
  clock: Clock;
  log: Logger;
  messages: MessageStore;
  deliveries: DeliveryStore;
  interfaces: InterfaceLookup;
  rules: RuleService;
  contacts: BookService<Record<string, string>>;
  groups: BookService<string[]>;
  seen: SeenFrameStore;
  /** Where the pipeline tells what it stored: 'message' inside the transaction that stores it
   *  (the uplink outbox writes there, so both or neither happen), 'queued' after commit (the
   *  dispatcher wakes the interface's queue). */
  events: EventStream<RouterEvent>;
}

export class Pipeline {
  readonly #d: PipelineDeps;
  constructor(deps: PipelineDeps) {
    this.#d = deps;
  }

  /** A frame heard by a bearer. Disabled interfaces never get here (their bearer is stopped).
   *  A frame whose dedupe key was stored in the last 24 hours answers 'duplicate'. */
  receive(interfaceId: string, frame: InboundFrame): IngestResult[] | 'duplicate' {
    if (frame.dedupeKey !== undefined && this.#d.seen.seen(frame.dedupeKey, this.#d.clock.now() - DEDUPE_WINDOW_MS)) return 'duplicate';
    return this.ingest({
      direction: 'inbound', interfaceId, from: frame.from, to: frame.to ?? 'broadcast', channel: frame.channel, kind: frame.kind, text: frame.text, payload: frame.payload, meta: frame.meta,
      dedupeKey: frame.dedupeKey,
    });
  }

  ingest(input: IngressMessage): IngestResult[] {
    const source = input.interfaceId ? this.#d.interfaces.find(input.interfaceId) : undefined;
    let parts: IngressMessage[] = [input];
    let dropReason: string | null = null;
    if (source && source.transforms.inbound.length > 0) {
      const t = applyTransforms(source.transforms.inbound as TransformStep[], { text: input.text, payload: input.payload, from: input.from, to: input.to, interface: source.name, channel: input.channel });
      if (t.kind === 'dropped') dropReason = `dropped by inbound transform step ${t.step + 1} of '${source.name}': ${t.reason}`;
      else parts = t.outputs.map((o) => ({ ...input, text: o.text, payload: o.payload, from: o.from, to: o.to, channel: o.channel }));
    }
    const results: IngestResult[] = [];
    try {
      for (const part of parts) results.push(this.#route(part, source?.name ?? null, dropReason));
    } finally {
      // Parts are committed one by one: if a later one fails, the ones already stored are
      // still dispatched.
      const touched = new Map<string, number>();
      for (const d of results.flatMap((r) => r.deliveries)) touched.set(d.interface_id, Math.min(d.expires_ms, touched.get(d.interface_id) ?? Infinity));
      for (const [interfaceId, earliestExpiryMs] of touched) this.#d.events.emit({ type: 'queued', interfaceId, earliestExpiryMs });
    }
    return results;
  }

  // One transaction per message: the rule's fired count, the message, its deliveries and the
  // uplink record are written together, and committed once (a commit costs more than the rows
  // it carries: npm run bench).
  #route(m: IngressMessage, sourceName: string | null, dropReason: string | null): IngestResult {
    return transaction(this.#d.db, () => this.#decideAndStore(m, sourceName, dropReason));
  }

  #decideAndStore(m: IngressMessage, sourceName: string | null, dropReason: string | null): IngestResult {
    const { clock, rules } = this.#d;
    const now = clock.now();
    const decision = dropReason
      ? { rule_id: null, action: 'drop' as const, destinations: [], reason: dropReason }
      : rules.decide({ direction: m.direction, interface_id: m.interfaceId, interface_name: sourceName, from: m.from, to: m.to, channel: m.channel, kind: m.kind, text: m.text });
    const payload = m.payload ?? (m.text !== null ? Buffer.from(m.text, 'utf8') : null);
    const message: MessageRow = {
      id: newId('msg', now),
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
      decision: { rule_id: decision.rule_id, action: decision.action, reason: decision.reason },
      meta: m.meta ?? {},
      created_at: new Date(now).toISOString(),
    };
    const deliveries: DeliveryRow[] = [];
    const notes: string[] = [];
    if (decision.action === 'forward') {
      for (const dest of decision.destinations) {
        const iface = this.#d.interfaces.find(dest.interface);
        if (!iface) {
          notes.push(`destination interface ${dest.interface} no longer exists`);
          continue;
        }
        const policy = retryPolicyOf(iface.retry);
        for (const to of this.#addressesFor(dest.to, m, iface.kind, notes)) {
          deliveries.push({
            id: newId('dlv', now),
            message_id: message.id,
            interface_id: iface.id,
            to,
            channel: m.channel,
            kind: m.kind,
            text: m.text,
            payload: m.text !== null ? null : payload,
            from: m.from,
            state: 'pending',
            attempts: 0,
            max_attempts: policy.max_attempts,
            next_attempt_ms: now,
            front_ms: null,
            expires_ms: now + policy.ttl_s * 1000,
            last_error: null,
            created_at: message.created_at,
            updated_at: message.created_at,
            finished_at: null,
          });
        }
      }
      if (notes.length > 0 && message.decision) message.decision.reason += `; ${notes.join('; ')}`;
    }
    this.#d.messages.insert(message);
    for (const d of deliveries) this.#d.deliveries.insert(d);
    // In the same transaction: the key exists exactly when the message does.
    if (m.dedupeKey !== undefined && m.interfaceId !== null) this.#d.seen.remember(m.dedupeKey, m.interfaceId, now);
    this.#d.events.emit({ type: 'message', message, deliveries });
    return { message, deliveries };
  }

  /** Expands a destination address: "{to}", "@group" (every member), "@contact" (its address for this kind). */
  #addressesFor(to: string, m: IngressMessage, kind: string, notes: string[]): string[] {
    if (to === SAME_TO) return this.#addressesFor(m.to, m, kind, notes);
    if (!to.startsWith('@')) return [to];
    const name = to.slice(1);
    const group = this.#d.groups.store.find(name);
    if (group) return group.value;
    const contact = this.#d.contacts.store.find(name);
    if (contact) {
      const field = driverFor(kind)?.contact.field ?? 'mesh';
      const address = contact.value[field];
      if (address) return [address];
      notes.push(`contact '${name}' has no ${field} address, so nothing was sent to it on a ${kind} interface`);
      return [];
    }
    notes.push(`no object group or contact named '${name}'`);
    return [];
  }
}
