import type { Clock } from '../../lib/clock.ts';
import { precedenceName } from '../engine/precedence.ts';
import type { BearerHost } from '../engine/bearer-host.ts';
import type { InterfaceService } from '../interfaces/service.ts';
import { applyTransforms, type TransformStep } from '../engine/transforms.ts';
import type { RuleTraceEntry } from '../rules/match.ts';
import type { IngressMessage, ListStep, Pipeline, PlainStep, RoutePlan } from '../engine/pipeline.ts';
import { estimateDelivery, type EstimateSources, type FrameEstimate } from './estimate.ts';
import type { DeliveryRow, FallbackMemberRow, InterfaceRow } from '../engine/rows.ts';

// POST /api/messages/preview (docs/routing.md "Preview"): what the router would do
// with a message, asked of the same decision code a real message meets (Pipeline.preview ->
// #plan), and described: the rules one by one, the decision, and per delivery the interface's
// state, the frames after its outbound transforms, whether they fit, the budget and the cost.
// Nothing is stored, sent or counted: no message, no delivery, no rule's fired count, no send
// rate budget, no bearer budget, no audit entry.

export type InterfaceState = 'connected' | 'offline' | 'disabled' | 'unbound' | 'no_driver' | 'out_of_budget';

export interface DeliveryPreview {
  interface_id: string;
  interface: string;
  kind: string | null;
  state: InterfaceState;
  /** Why it would wait now (docs/api.md 2.5 waiting_for); null when it could go at once. */
  waiting_for: string | null;
  /** The delivery's address after {from}, {to}, @group and @contact are resolved. */
  to: string;
  /** The address the bearer would send to (an SMS number in E.164). */
  address: string;
  until_heard: boolean;
  /** Set when an outbound transform would drop the delivery (then there are no frames). */
  dropped_by_transform: string | null;
  frames: Array<FrameEstimate & { text: string | null }>;
  mtu: number | null;
  fits_mtu: boolean;
  budget: { allows: boolean; reason: string | null };
  cost: { unit: string; amount: number; money: null } | null;
}

export interface FallbackMemberPreview {
  position: number;
  interface_id: string;
  interface: string;
  to: string | null;
  /** Why the member cannot take the message now (fallback.ts canTake), null when it can. */
  cannot_take: string | null;
  would_start: boolean;
  delivery: DeliveryPreview | null;
}

export interface PartPreview {
  message: { direction: string; interface_id: string | null; interface: string | null; from: string; to: string; channel: number | null; kind: string; text: string | null; payload_b64: string | null; size: number };
  dropped_by_inbound_transform: string | null;
  rules: RuleTraceEntry[];
  decision: { rule_id: string | null; rule: string | null; action: string; reason: string; precedence: string | null };
  deliveries: DeliveryPreview[];
  fallback_lists: Array<{ strategy: string; keep_trying: boolean; members: FallbackMemberPreview[] }>;
  /** The senders policy's verdict on a message heard on an interface (docs/senders.md); null for others. */
  sender: { address: string; blocked: string | null; over_limit: string | null; limits: Array<{ kinds: string[]; per_hour: number; burst: number; tokens: number }> } | null;
}

export interface PreviewDeps {
  pipeline: Pick<Pipeline, 'preview'>;
  interfaces: Pick<InterfaceService, 'find' | 'waitingFor' | 'stats'>;
  host: Pick<BearerHost, 'runtime' | 'bearer' | 'driverState' | 'hasDriver'>;
  clock: Clock;
}

export class PreviewService {
  readonly #d: PreviewDeps;
  constructor(deps: PreviewDeps) {
    this.#d = deps;
  }

  /** The preview of one message at `atMs` (rules and schedules read at that time; interface
   *  states and budgets as they are now). One entry per part after the inbound transforms. */
  preview(input: IngressMessage, atMs: number): PartPreview[] {
    return this.#d.pipeline.preview(input, atMs).map(({ plan, trace, dropped }) => this.#part(plan, trace, dropped));
  }

  #part(plan: RoutePlan, trace: RuleTraceEntry[], dropped: string | null): PartPreview {
    const { message, decision } = plan;
    const notes: string[] = [];
    const deliveries: DeliveryPreview[] = [];
    const lists: PartPreview['fallback_lists'] = [];
    for (const step of plan.steps) {
      if (step.type === 'plain') {
        notes.push(...step.notes);
        deliveries.push(...this.#plain(step, plan));
      } else {
        const list = this.#list(step, plan);
        if (!list.members.some((m) => m.would_start)) notes.push('fallback list: not delivered: no member left to try');
        lists.push(list);
      }
    }
    const payload = message.payload ? Buffer.from(message.payload).toString('base64') : null;
    const source = message.interface_id ? this.#d.interfaces.find(message.interface_id) : undefined;
    return {
      message: { direction: message.direction, interface_id: message.interface_id, interface: source?.name ?? null, from: message.from, to: message.to, channel: message.channel, kind: message.kind, text: message.text, payload_b64: payload, size: message.size },
      dropped_by_inbound_transform: dropped,
      rules: trace,
      decision: {
        rule_id: decision.rule_id,
        rule: trace.find((r) => r.rule_id === decision.rule_id)?.name ?? null,
        action: decision.action,
        reason: notes.length > 0 ? `${decision.reason}; ${notes.join('; ')}` : decision.reason,
        precedence: decision.action === 'forward' ? precedenceName(plan.precedence) : null,
      },
      deliveries,
      fallback_lists: lists,
      sender: plan.sender ? { address: plan.sender.address, blocked: plan.sender.blocked, over_limit: plan.sender.over, limits: plan.sender.limits } : null,
    };
  }

  #plain(step: PlainStep, plan: RoutePlan): DeliveryPreview[] {
    if (!step.iface) return [];
    return step.addresses.map((to) => this.#delivery(step.iface!, to, step.dest.until_heard ?? false, plan.message));
  }

  /** Which members would start mirrors fallback.ts #startNext: `all` starts every usable one;
   *  the others the first that can take it now, else the first usable one (held). */
  #list(step: ListStep, plan: RoutePlan): PartPreview['fallback_lists'][number] {
    const cannot = step.members.map((m) => m.unusable ?? (this.#d.interfaces.find(m.interface_id) ? this.#canTake(m.interface_id) : 'the interface was deleted'));
    const usable = (m: FallbackMemberRow) => !m.unusable && m.to !== null && this.#d.interfaces.find(m.interface_id) !== undefined;
    let starting: number[];
    if (step.strategy === 'all') starting = step.members.flatMap((m, i) => (usable(m) ? [i] : []));
    else {
      const now = cannot.findIndex((why, i) => why === null && usable(step.members[i]));
      const held = step.members.findIndex(usable);
      starting = now >= 0 ? [now] : held >= 0 ? [held] : [];
    }
    return {
      strategy: step.strategy,
      keep_trying: step.keepTrying,
      members: step.members.map((m, i) => {
        const iface = this.#d.interfaces.find(m.interface_id);
        return {
          position: i, interface_id: m.interface_id, interface: m.interface, to: m.to, cannot_take: cannot[i],
          would_start: starting.includes(i),
          delivery: iface && m.to !== null ? this.#delivery(iface, m.to, false, plan.message) : null,
        };
      }),
    };
  }

  /** The routing core's check for fallback members (engine/core.ts #canTake), read only. */
  #canTake(interfaceId: string): string | null {
    const row = this.#d.interfaces.find(interfaceId);
    if (!row) return 'the interface no longer exists';
    if (!row.enabled) return 'disabled';
    if (row.device === null) return 'unbound';
    const rt = this.#d.host.runtime(interfaceId);
    if (rt.reason === 'budget') return `out of budget${rt.last_error ? ` (${rt.last_error})` : ''}`;
    if (!rt.connected) return `offline${rt.last_error ? ` (${rt.last_error})` : ''}`;
    return null;
  }

  #state(row: InterfaceRow): InterfaceState {
    if (!row.enabled) return 'disabled';
    if (row.device === null) return 'unbound';
    if (!this.#d.host.hasDriver(row.kind)) return 'no_driver';
    const rt = this.#d.host.runtime(row.id);
    if (rt.reason === 'budget') return 'out_of_budget';
    return rt.connected ? 'connected' : 'offline';
  }

  /** Why `to` can never be an address on this interface, in the words the preview uses for a
   *  delivery to it (the kind's estimate of a one-letter text, which fits every bearer); null
   *  when it can be. */
  addressProblem(row: InterfaceRow, to: string): string | null {
    const e = estimateDelivery(row.kind, [{ to, kind: 'text', text: '.', payload: Uint8Array.of(0x2e) }], this.#sources(row));
    return e.frames[0]?.error ?? null;
  }

  /** What the preview would say is wrong with a delivery as it was queued: each frame that can
   *  never go out as the interface is set now (too long, an address its kind cannot take). */
  deliveryProblems(d: Pick<DeliveryRow, 'interface_id' | 'to' | 'kind' | 'text' | 'payload' | 'from' | 'channel'>): string[] {
    const row = this.#d.interfaces.find(d.interface_id);
    if (!row) return [];
    const preview = this.#delivery(row, d.to, false, d);
    return [...new Set(preview.frames.flatMap((f) => (f.fits || f.error === null ? [] : [f.error])))];
  }

  #sources(row: InterfaceRow): EstimateSources {
    return {
      settings: row.settings, stats: this.#d.interfaces.stats(row).stats as Record<string, unknown>, state: this.#d.host.driverState(row.id),
      runningMtu: this.#d.host.bearer(row.id)?.mtu, clock: this.#d.clock,
    };
  }

  /** One delivery as the dispatcher would send it (dispatcher.ts #attempt): the outbound
   *  transforms, then one frame per part, measured by the kind's estimate. */
  #delivery(row: InterfaceRow, to: string, untilHeard: boolean, m: Pick<DeliveryRow, 'kind' | 'text' | 'payload' | 'from' | 'channel'>): DeliveryPreview {
    const payload = m.text !== null ? null : m.payload;
    const transformed = applyTransforms(row.transforms.outbound as TransformStep[], { text: m.text, payload, from: m.from, to, interface: row.name, channel: m.channel });
    const base = {
      interface_id: row.id, interface: row.name, kind: row.kind, state: this.#state(row), waiting_for: this.#d.interfaces.waitingFor(row.id), to, until_heard: untilHeard,
    };
    if (transformed.kind === 'dropped') {
      return { ...base, address: to, dropped_by_transform: `dropped by outbound transform step ${transformed.step + 1}: ${transformed.reason}`, frames: [], mtu: null, fits_mtu: true, budget: { allows: true, reason: null }, cost: null };
    }
    const frames = transformed.outputs.map((part) => ({ to: part.to, kind: m.kind, text: part.text, payload: part.payload ?? Buffer.from(part.text ?? '', 'utf8') }));
    const e = estimateDelivery(row.kind, frames, this.#sources(row));
    return {
      ...base, address: e.address, dropped_by_transform: null,
      frames: e.frames.map((f, i) => ({ ...f, text: frames[i].text })),
      mtu: e.mtu, fits_mtu: e.frames.every((f) => f.fits), budget: e.budget,
      cost: e.cost ? { ...e.cost, money: null } : null,
    };
  }
}
