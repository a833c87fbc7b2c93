import { z } from 'zod';
import { checkSafeRegex, compileSafeRegex, SAFE_REGEX_MAX_LENGTH } from '../../lib/safe-regex.ts';
import { PrecedenceSchema, type Precedence } from '../engine/precedence.ts';
import type * as engine from '../engine/decisions.ts';
import {
  type Decision, DEFAULT_ACK_WITHIN_S, FALLBACK_STRATEGIES, isFallback, MESSAGE_KINDS, type RoutableMessage, type RuleTraceEntry, SENDER_ADDRESS,
} from '../engine/decisions.ts';
import { isScheduleActive, type Schedule } from './schedule.ts';

// Access rule filters, actions and first-match evaluation (docs/api.md 4.5, docs/design.md section 6).
// Pure: the caller hands in the rules, the message, the time and a resolver for
// @group / @contact names, and gets back a decision with a reason an operator can read.
//
// Decisions (docs/routing.md says the same for operators):
// - An absent filter matches everything; an empty list is refused at validation, so that a
//   filter can never mean "everything" by accident.
// - Addresses compare as whole strings, ignoring ASCII case: mesh ids ("!a1b2c3d4") are hex
//   that people type in either case, phone numbers and IMEIs have no case. Nothing else is
//   normalised: write phone numbers in E.164 without spaces ("+4917012345678").
// - text.contains ignores case; text.regex is case-sensitive and runs in linear time (lib/safe-regex.ts).
//   A message without text never matches a text filter.
// - An @reference the resolver does not know (null) matches no address.

// ---- regular expressions supplied by operators ----

export { checkSafeRegex, compileSafeRegex, SAFE_REGEX_MAX_LENGTH } from '../../lib/safe-regex.ts';
// The engine's decision vocabulary, which these schemas produce (engine/decisions.ts).
export { type Decision, DEFAULT_ACK_WITHIN_S, FALLBACK_STRATEGIES, isFallback, type RoutableMessage, type RuleTraceEntry, SENDER_ADDRESS };
// Each schema below produces the engine's type of the same name.
export type PlainDestination = engine.PlainDestination;
export type FallbackMember = engine.FallbackMember;
export type FallbackDestination = engine.FallbackDestination;
export type Destination = engine.Destination;
export type RuleActionKind = engine.RuleActionKind;

// ---- schemas ----

export const KINDS = MESSAGE_KINDS;

const Address = (field: string) =>
  z
    .string({ error: `${field} entries must be addresses or @names` })
    .min(1, { error: `${field} entries must not be empty` })
    .max(128, { error: `${field} entries must be at most 128 characters` });

/** A non-empty list: an empty filter would read as "nothing" to some and "everything" to
 *  others, so it is refused and the message says how to match everything. */
const filterList = <T extends z.ZodType>(field: string, item: T, what: string) =>
  z
    .array(item, { error: `${field} must be a list of ${what}` })
    .min(1, { error: `${field} must list at least one ${what.replace(/s$/, '')}; to match every ${what.replace(/s$/, '')}, leave ${field} out (an empty list is refused so it never means "everything" by accident)` })
    .max(256, { error: `${field} may list at most 256 entries` });

const TextFilter = z
  .strictObject({
    contains: z.string({ error: 'text.contains must be a string' }).min(1, { error: 'text.contains must not be empty' }).max(500, { error: 'text.contains must be at most 500 characters' }).optional(),
    regex: z
      .string({ error: 'text.regex must be a string' })
      .min(1, { error: 'text.regex must not be empty' })
      .max(SAFE_REGEX_MAX_LENGTH, { error: `text.regex must be at most ${SAFE_REGEX_MAX_LENGTH} characters` })
      .superRefine((pattern, ctx) => {
        const problem = checkSafeRegex(pattern);
        if (problem) ctx.addIssue({ code: 'custom', message: `text.regex ${problem}` });
      })
      .optional(),
  })
  .refine((t) => t.contains !== undefined || t.regex !== undefined, { error: 'text must give contains, regex or both (leave text out to match any text)' })
  .describe('contains ignores case; regex is JavaScript syntax run on the linear-time engine: case-sensitive, no backreferences or lookahead. Both given: both must match.');

export const RuleMatch = z
  .strictObject({
    direction: z.enum(['inbound', 'outbound', 'any'], { error: 'direction must be inbound, outbound or any' }).optional(),
    interfaces: filterList('interfaces', z.string().min(1, { error: 'interfaces entries must be interface ids or names' }), 'interfaces').optional()
      .describe('The interface the message arrived on (id or name); messages from the API have none and do not match'),
    from: filterList('from', Address('from'), 'addresses').optional().describe('Sender address, @group or @contact'),
    to: filterList('to', Address('to'), 'addresses').optional().describe('Destination address, @group or @contact'),
    channel: filterList('channel', z.number({ error: 'channel entries must be channel numbers' }).int({ error: 'channel entries must be whole numbers' }).min(0, { error: 'channel entries must be 0 to 255' }).max(255, { error: 'channel entries must be 0 to 255' }), 'channels').optional(),
    kinds: filterList('kinds', z.enum(KINDS, { error: `kinds entries must be one of ${KINDS.join(', ')}` }), 'kinds').optional(),
    text: TextFilter.optional(),
    automated: z.boolean({ error: 'automated must be true or false' }).optional()
      .describe('true: only messages their sender marked as sent by a bot or another bridge (a Meshtastic packet with the automation bit); false: only unmarked ones'),
  }, {
    // In words a curl user understands, not "expected object, received undefined".
    error: (issue) => (issue.code === 'invalid_type'
      ? `match ${issue.input === undefined ? 'is required: give' : 'must be'} an object of filters such as {"to": ["!a1b2c3d4"]}; {} matches everything`
      : undefined),
  })
  .describe('Every filter given must match; a filter left out matches everything.');
export type RuleMatch = z.infer<typeof RuleMatch>;

const InterfaceRef = (field: string) =>
  z.string({ error: `${field} must be an interface id or name` }).min(1, { error: `${field} must not be empty` });

export const PlainDestination = z.strictObject({
  interface: InterfaceRef('destinations[].interface'),
  to: Address('destinations[].to').describe('Address on that interface\'s bearer, or @contact / @group'),
  until_heard: z.boolean({ error: 'destinations[].until_heard must be true or false' }).optional()
    .describe('A direct message to a mesh node: held until the node is heard again (any packet, any interface), then sent; its TTL counts from then'),
});

export const FallbackStrategy = z.enum(FALLBACK_STRATEGIES, { error: `strategy must be one of ${FALLBACK_STRATEGIES.join(', ')}` })
  .describe('ordered: one member at a time, the next when it is not delivered within ack_within_s; first_available: the first member that can take it now; all: every member at once');

export const FallbackMember = z.strictObject({
  interface: InterfaceRef('fallback[].interface'),
  to: Address('fallback[].to').describe('One address on that interface\'s bearer, or @contact (not a group: a member sends to one recipient)'),
  ack_within_s: z.number({ error: 'fallback[].ack_within_s must be a whole number of seconds' }).int({ error: 'fallback[].ack_within_s must be a whole number of seconds' })
    .min(1, { error: 'fallback[].ack_within_s must be 1 to 604800' }).max(604_800, { error: 'fallback[].ack_within_s must be 1 to 604800' }).optional()
    .describe(`With strategy ordered: seconds from this member's first attempt until the next member starts, unless delivered (default ${DEFAULT_ACK_WITHIN_S})`),
});

export const FallbackDestination = z.strictObject({
  fallback: z.array(FallbackMember, { error: 'fallback must be a list of {interface, to}' }).min(1, { error: 'fallback must list at least one member' }).max(8, { error: 'fallback may list at most 8 members' }),
  strategy: FallbackStrategy.default('ordered'),
  keep_trying: z.boolean({ error: 'keep_trying must be true or false' }).default(false)
    .describe('Whether a member keeps retrying after the next one started (default false: no second copy is paid for unless asked)'),
});

/** One destination of a forward: an interface and an address, or a fallback list of them
 *  (docs/routing.md, "Delivery policy"). An object with a `fallback` field is a list. The
 *  union types stored rules and answers. */
export const Destination = z.union([FallbackDestination, PlainDestination]);

// A destination as answers show it: each interface id with the interface's name beside it
// (null once the interface is gone). Writes take the answer back and ignore the names.
const InterfaceNameShown = z.string().nullable().describe('The interface\'s name, beside its id; ignored on write');
export const NamedDestination = z.union([
  FallbackDestination.extend({ fallback: z.array(FallbackMember.extend({ interface_name: InterfaceNameShown })) }),
  PlainDestination.extend({ interface_name: InterfaceNameShown }),
]);
export type NamedDestination = z.infer<typeof NamedDestination>;

/** A destination from an answer, without the names it showed (a PUT or PATCH of what GET said). */
export function withoutInterfaceNames(d: unknown): unknown {
  if (typeof d !== 'object' || d === null || Array.isArray(d)) return d;
  const { interface_name: _n, ...rest } = d as Record<string, unknown>;
  if (Array.isArray(rest.fallback)) rest.fallback = rest.fallback.map(withoutInterfaceNames);
  return rest;
}

/** A destination as written in a request or a configuration file: one object whose fields
 *  say which kind it is, so every mistake is reported at its own field (a union would only say
 *  "matches neither"). Parses to a Destination. */
export const DestinationInput = z
  .strictObject({
    interface: InterfaceRef('destinations[].interface').optional(),
    to: Address('destinations[].to').optional(),
    until_heard: PlainDestination.shape.until_heard,
    fallback: FallbackDestination.shape.fallback.optional(),
    strategy: FallbackStrategy.optional(),
    keep_trying: FallbackDestination.shape.keep_trying.unwrap().optional(),
  })
  .superRefine((d, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (d.fallback !== undefined) {
      for (const field of ['interface', 'to', 'until_heard'] as const) {
        if (d[field] !== undefined) issue(field, `a fallback list has no ${field} of its own: give it to each member in fallback[]`);
      }
      return;
    }
    if (d.interface === undefined) issue('interface', 'destinations[].interface must be an interface id or name');
    if (d.to === undefined) issue('to', 'destinations[].to must be an address or @name');
    for (const field of ['strategy', 'keep_trying'] as const) {
      if (d[field] !== undefined) issue(field, `${field} belongs to a fallback list: {fallback: [{interface, to}...], ${field}}`);
    }
  })
  .describe('{interface, to} (optionally until_heard), or a fallback list {fallback: [{interface, to, ack_within_s}...], strategy, keep_trying}') as unknown as z.ZodType<Destination>;

/** Each schema produces exactly the engine's type of its name (a compile-time check). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const SCHEMAS_MATCH_ENGINE: [
  Same<z.infer<typeof PlainDestination>, engine.PlainDestination>,
  Same<z.infer<typeof FallbackMember>, engine.FallbackMember>,
  Same<z.infer<typeof FallbackDestination>, engine.FallbackDestination>,
  Same<z.infer<typeof Destination>, engine.Destination>,
  Same<z.infer<typeof RuleActionKind>, engine.RuleActionKind>,
] = [true, true, true, true, true];

/** The destination with each interface reference mapped (ids to names for export, names to
 *  ids on import and validation); `path` is the member's field path under the destination. */
export function mapDestinationInterfaces(d: Destination, fn: (ref: string, path: string) => string): Destination {
  if (!isFallback(d)) return { ...d, interface: fn(d.interface, 'interface') };
  return { ...d, fallback: d.fallback.map((m, i) => ({ ...m, interface: fn(m.interface, `fallback[${i}].interface`) })) };
}

/** Every {interface, to} a destination names (a plain one, or each member of a list). */
export function destinationTargets(d: Destination): Array<{ interface: string; to: string }> {
  return isFallback(d) ? d.fallback : [d];
}

export const RuleActionKind = z.enum(['forward', 'drop', 'store'], { error: (issue) => (issue.input === undefined ? 'action is required: forward, drop or store' : 'action must be forward, drop or store') });

/** The action and destinations fields, to spread into a rule body schema together with
 *  refineRuleAction (a union would not combine with the other fields of the body). */
export const RULE_ACTION_FIELDS = {
  action: RuleActionKind,
  precedence: PrecedenceSchema.nullable().optional().describe('Precedence of what this rule forwards when the send request gives none (default routine)'),
  destinations: z.array(DestinationInput, { error: 'destinations must be a list of {interface, to}' }).max(64, { error: 'destinations may list at most 64 entries' }).optional(),
};

/** forward needs destinations; drop and store refuse them (they would be silently unused). */
export function refineRuleAction(value: { action: RuleActionKind; destinations?: Destination[] | null }, ctx: z.RefinementCtx): void {
  const count = value.destinations?.length ?? 0;
  if (value.action === 'forward' && count === 0) {
    ctx.addIssue({ code: 'custom', path: ['destinations'], message: 'destinations must list at least one {interface, to} when action is forward' });
  } else if (value.action !== 'forward' && count > 0) {
    ctx.addIssue({ code: 'custom', path: ['destinations'], message: `destinations must be empty or left out when action is ${value.action}; only forward sends anywhere` });
  }
}

export const RuleAction = z.strictObject(RULE_ACTION_FIELDS).superRefine(refineRuleAction);
export type RuleAction = z.infer<typeof RuleAction>;

/** Every @reference a rule makes (match.from, match.to, destinations[].to), for the caller
 *  to check that each names an existing group or contact. */
export function referencesOf(match: RuleMatch, destinations: readonly Destination[] = []): string[] {
  const all = [...(match.from ?? []), ...(match.to ?? []), ...destinations.flatMap((d) => destinationTargets(d).map((t) => t.to))];
  return [...new Set(all.filter(isReference))];
}

export function isReference(address: string): boolean {
  return address.startsWith('@');
}

// ---- evaluation ----

export interface EvaluableRule {
  id: string;
  name: string;
  enabled: boolean;
  priority: number;
  match: RuleMatch;
  schedule: Schedule | null;
  action: RuleActionKind;
  destinations: Destination[];
  /** The precedence of what it forwards; null/absent: routine unless the request says. */
  precedence?: Precedence | null;
}


export interface AddressResolver {
  /** The addresses an @group or @contact stands for; null when no such name exists. */
  expand(address: string): string[] | null;
  /** Where the node an address names is now (engine/node-identity.ts): a filter entry naming a
   *  renumbered node's former id matches the node at its new one. */
  current?(address: string): string | null;
  /** The name of the interface with this id (for reasons people read); undefined when unknown. */
  interfaceName?(id: string): string | undefined;
}


export type DefaultAction = 'store' | 'drop';


/**
 * First enabled rule, in priority order, whose every filter matches and whose schedule is
 * active decides (docs/api.md 4.5). Destinations naming the interface the message came from are
 * removed (a rule may not forward back to its source), except answers to the sender
 * ("{from}"); none left means store.
 *
 * `trace` (a preview): filled with one entry per rule in evaluation order. The
 * decision is the same with or without it: the loop below is the one that decides, and only
 * looks further (for the entries) once it has decided.
 */
export function evaluateRules(
  rules: readonly EvaluableRule[],
  msg: RoutableMessage,
  nowMs: number,
  resolve: AddressResolver,
  defaultAction: DefaultAction = 'store',
  trace?: RuleTraceEntry[],
): Decision {
  const ordered = isSortedByPriority(rules) ? rules : [...rules].sort((a, b) => a.priority - b.priority);
  const addresses = new AddressMatcher(resolve);
  const offSchedule: string[] = [];
  let decision: Decision | null = null;
  for (const rule of ordered) {
    if (trace) {
      trace.push(traceRule(rule, msg, nowMs, addresses, decision !== null));
      if (decision !== null) continue;
    }
    if (!rule.enabled) continue;
    const matched = matchFilters(rule.match, msg, addresses);
    if (matched === null) continue;
    if (rule.schedule) {
      const verdict = isScheduleActive(rule.schedule, nowMs);
      if (!verdict.active) {
        offSchedule.push(`rule '${rule.name}' matched but is off schedule: ${verdict.reason}`);
        continue;
      }
    }
    decision = decide(rule, matched, msg);
    if (!trace) return decision;
  }
  if (decision !== null) return decision;
  const why = offSchedule.length === 0 ? '' : ` (${offSchedule.slice(0, 3).join('; ')}${offSchedule.length > 3 ? `; and ${offSchedule.length - 3} more` : ''})`;
  return { rule_id: null, action: defaultAction, destinations: [], reason: `no enabled rule matched; default action ${defaultAction}${why}` };
}

/** One rule's trace entry; `reached` false once an earlier rule decided. */
function traceRule(rule: EvaluableRule, msg: RoutableMessage, nowMs: number, addresses: AddressMatcher, decided: boolean): RuleTraceEntry {
  const failed = { filter: '', reason: '' };
  const matched = matchFilters(rule.match, msg, addresses, failed);
  const schedule = rule.schedule ? isScheduleActive(rule.schedule, nowMs) : null;
  const outcome: RuleTraceEntry['outcome'] = decided ? 'not_reached' : !rule.enabled ? 'disabled' : matched === null ? 'no_match' : schedule && !schedule.active ? 'off_schedule' : 'decided';
  return {
    rule_id: rule.id, name: rule.name, priority: rule.priority, enabled: rule.enabled,
    filters: matched === null ? { matched: false, matched_filters: [], failed } : { matched: true, matched_filters: matched, failed: null },
    schedule: schedule ? { active: schedule.active, reason: schedule.reason } : null,
    outcome,
  };
}

function isSortedByPriority(rules: readonly EvaluableRule[]): boolean {
  for (let i = 1; i < rules.length; i++) if (rules[i - 1].priority > rules[i].priority) return false;
  return true;
}

function decide(rule: EvaluableRule, matched: string[], msg: RoutableMessage): Decision {
  let reason = `rule '${rule.name}' matched: ${matched.length > 0 ? matched.join(', ') : 'no filters (every message)'}`;
  if (rule.action !== 'forward') return { rule_id: rule.id, action: rule.action, destinations: [], reason };
  // An answer to the sender ("{from}") may go out where the message came in: it is addressed
  // to one node, not the message sent round again (docs/routing.md, "Answering the sender").
  const isSource = (d: { interface: string; to: string }) => d.to !== SENDER_ADDRESS && (d.interface === msg.interface_id || d.interface === msg.interface_name);
  const removed: Array<{ interface: string; to: string }> = [];
  const kept: Destination[] = [];
  for (const d of rule.destinations) {
    if (!isFallback(d)) {
      if (isSource(d)) removed.push(d);
      else kept.push(d);
      continue;
    }
    // A fallback list loses the members on the source interface, and the list when none is left.
    removed.push(...d.fallback.filter(isSource));
    const members = d.fallback.filter((m) => !isSource(m));
    if (members.length > 0) kept.push(members.length === d.fallback.length ? d : { ...d, fallback: members });
  }
  if (removed.length > 0) {
    reason += `; removed ${removed.map((d) => `${arrivedOn(msg)} -> ${d.to}`).join(', ')}: a rule may not forward back to the interface the message came from`;
  }
  const precedence = rule.precedence ? { precedence: rule.precedence } : {};
  if (kept.length === 0) return { rule_id: rule.id, action: 'store', destinations: [], reason: `${reason}; no destination left, so the message is stored`, ...precedence };
  return { rule_id: rule.id, action: 'forward', destinations: kept, reason, ...precedence };
}

/** The interface a message arrived on as people read it: its name, with the id programs use. */
function arrivedOn(msg: RoutableMessage): string {
  if (msg.interface_name === null || msg.interface_id === null) return msg.interface_name ?? msg.interface_id ?? 'no interface';
  return msg.interface_name === msg.interface_id ? msg.interface_id : `${msg.interface_name} (${msg.interface_id})`;
}

/** Descriptions of the filters that matched, or null as soon as one does not; `why` (a
 *  preview) is told which filter failed and why. */
function matchFilters(match: RuleMatch, msg: RoutableMessage, addresses: AddressMatcher, why?: { filter: string; reason: string }): string[] | null {
  const fail = (filter: string, reason: () => string): null => {
    if (why) {
      why.filter = filter;
      why.reason = reason();
    }
    return null;
  };
  const matched: string[] = [];
  if (match.direction && match.direction !== 'any') {
    if (match.direction !== msg.direction) return fail('direction', () => `the message is ${msg.direction}, the rule wants ${match.direction}`);
    matched.push(`direction ${msg.direction}`);
  }
  if (match.interfaces) {
    const hit = match.interfaces.find((i) => i === msg.interface_id || i === msg.interface_name);
    if (hit === undefined) return fail('interfaces', () => (msg.interface_id === null ? 'the message was sent through the API, so it arrived on no interface' : `the message arrived on ${arrivedOn(msg)}, not one of ${match.interfaces!.map((i) => addresses.interfaceLabel(i)).join(', ')}`));
    matched.push(`interface ${arrivedOn(msg)}`);
  }
  if (match.channel) {
    if (msg.channel === null || !match.channel.includes(msg.channel)) return fail('channel', () => (msg.channel === null ? 'the message has no channel' : `channel ${msg.channel} is not one of ${match.channel!.join(', ')}`));
    matched.push(`channel ${msg.channel}`);
  }
  if (match.kinds) {
    if (!match.kinds.includes(msg.kind)) return fail('kinds', () => `kind ${msg.kind} is not one of ${match.kinds!.join(', ')}`);
    matched.push(`kind ${msg.kind}`);
  }
  if (match.from) {
    const hit = addresses.find(match.from, msg.from, msg.direction === 'outbound');
    if (hit === null) return fail('from', () => `from ${msg.from} is not one of ${match.from!.join(', ')}`);
    matched.push(isReference(hit) ? `from in ${hit}` : `from ${hit}`);
  }
  if (match.to) {
    const hit = addresses.find(match.to, msg.to, msg.direction === 'outbound');
    if (hit === null) return fail('to', () => `to ${msg.to} is not one of ${match.to!.join(', ')}`);
    matched.push(isReference(hit) ? `to in ${hit}` : `to ${hit}`);
  }
  if (match.automated !== undefined) {
    const marked = msg.automated === true;
    if (marked !== match.automated) return fail('automated', () => (marked ? 'the sender marked the message as automated' : 'the message is not marked as automated'));
    matched.push(marked ? 'marked automated' : 'not marked automated');
  }
  if (match.text) {
    if (msg.text === null) return fail('text', () => 'the message has no text');
    if (match.text.contains !== undefined) {
      if (!msg.text.toLowerCase().includes(match.text.contains.toLowerCase())) return fail('text.contains', () => `the text does not contain '${match.text!.contains}'`);
      matched.push(`text contains '${match.text.contains}'`);
    }
    if (match.text.regex !== undefined) {
      if (!compileSafeRegex(match.text.regex).test(msg.text)) return fail('text.regex', () => `the text does not match /${match.text!.regex}/`);
      matched.push(`text matches /${match.text.regex}/`);
    }
  }
  return matched;
}

/** Address comparison for one evaluation, expanding each @name once however many rules use it. */
class AddressMatcher {
  readonly #resolve: AddressResolver;
  readonly #expanded = new Map<string, Set<string>>();

  constructor(resolve: AddressResolver) {
    this.#resolve = resolve;
  }

  /** The filter entry that matches the address (a literal or an @name), or null. An
   *  address that is itself an @name (send-to-contact puts "@ann" in `to`) matches the same
   *  @name only when `trusted`: an outbound message came through the authenticated API,
   *  while a frame heard on a radio could claim to be from "@ops" to borrow its rules. */
  find(entries: readonly string[], address: string, trusted = false): string | null {
    const named = trusted && isReference(address);
    const wanted = named ? address.toLowerCase() : this.#now(address);
    for (const entry of entries) {
      if (isReference(entry) ? this.#members(entry).has(wanted) || (named && entry.toLowerCase() === wanted) : this.#now(entry) === wanted) return entry;
    }
    return null;
  }

  /** An address as compared: where its node is now, in lower case. */
  #now(address: string): string {
    return (this.#resolve.current?.(address) ?? address).toLowerCase();
  }

  /** An interface reference of a rule (ids, as stored) with its name beside it. */
  interfaceLabel(ref: string): string {
    const name = this.#resolve.interfaceName?.(ref);
    return name === undefined || name === ref ? ref : `${name} (${ref})`;
  }

  #members(reference: string): Set<string> {
    let members = this.#expanded.get(reference);
    if (!members) {
      members = new Set((this.#resolve.expand(reference) ?? []).map((a) => this.#now(a)));
      this.#expanded.set(reference, members);
    }
    return members;
  }
}
