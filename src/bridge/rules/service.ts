import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound, type FieldError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { jsonEqual } from '../../lib/json.ts';
import type { BookService } from '../contacts/service.ts';
import type { Precedence } from '../engine/precedence.ts';
import { type AddressResolver, type Decision, type NamedDestination, type DefaultAction, type Destination, destinationTargets, evaluateRules, isFallback, isReference, mapDestinationInterfaces, type RoutableMessage, type RuleActionKind, type RuleMatch, type RuleTraceEntry } from './match.ts';
import type { Schedule } from './schedule.ts';
import type { RuleRef, RuleRow, RuleStore } from './store.ts';
import type { InterfaceLookup, NodeAddresses, RuleDecider } from '../engine/deciders.ts';
import type { InterfaceRow } from '../engine/rows.ts';

/** Why `to` can never be an address on this interface, as the preview says it; null when it can be. */
export type AddressCheck = (iface: InterfaceRow, to: string) => string | null;

// Access rules: an ordered first-match policy (docs/api.md 4.5). Requests may name interfaces by id
// or name; the stored rule holds interface ids, so renaming an interface never breaks a rule.
// "@name" references are checked to exist at write time and recorded in rule_refs.

export interface RuleInput {
  name: string;
  enabled?: boolean;
  match: RuleMatch;
  schedule: Schedule | null;
  action: RuleActionKind;
  destinations?: Destination[];
  precedence?: Precedence | null;
}

export class RuleService implements RuleDecider {
  readonly #store: RuleStore;
  readonly #interfaces: InterfaceLookup;
  readonly #contacts: BookService<Record<string, string>>;
  readonly #groups: BookService<string[]>;
  readonly #clock: Clock;
  readonly #defaultAction: () => DefaultAction;
  readonly #addressProblem: AddressCheck | undefined;
  #cache: RuleRow[] | undefined;
  readonly #nodes: NodeAddresses | undefined;

  constructor(
    store: RuleStore,
    deps: {
      interfaces: InterfaceLookup; contacts: BookService<Record<string, string>>; groups: BookService<string[]>; clock: Clock; defaultAction: () => DefaultAction;
      /** Where a node named by an address is now (a renumbered node; engine/node-identity.ts). */
      nodes?: NodeAddresses;
      /** Refuses a destination address its interface's kind can never take (the preview's check). */
      addressProblem?: AddressCheck;
    },
  ) {
    this.#addressProblem = deps.addressProblem;
    this.#store = store;
    this.#interfaces = deps.interfaces;
    this.#contacts = deps.contacts;
    this.#groups = deps.groups;
    this.#clock = deps.clock;
    this.#defaultAction = deps.defaultAction;
    this.#nodes = deps.nodes;
  }

  list(): RuleRow[] {
    return (this.#cache ??= this.#store.list());
  }

  get(ref: string): RuleRow {
    const row = this.#store.find(ref);
    if (!row) throw notFound('access rule', ref);
    return row;
  }

  create(input: RuleInput): RuleRow {
    const { match, destinations, refs } = this.#resolve(input);
    if (this.#store.nameTaken(input.name)) throw conflict('ERR_NAME_TAKEN', `an access rule named '${input.name}' already exists`);
    const now = this.#clock.now();
    const at = new Date(now).toISOString();
    const row = this.#store.insert(
      { id: newId('rul', now), name: input.name, enabled: input.enabled ?? true, match, schedule: input.schedule, action: input.action, destinations, precedence: input.precedence ?? null, fired: 0, last_fired_at: null, created_at: at, updated_at: at },
      refs,
    );
    this.#cache = undefined;
    return row;
  }

  /** PUT: replaces name, match, schedule, action and destinations; enabled and priority stay. */
  update(ref: string, input: RuleInput): RuleRow {
    const row = this.get(ref);
    const { match, destinations, refs } = this.#resolve(input);
    if (this.#store.nameTaken(input.name, row.id)) throw conflict('ERR_NAME_TAKEN', `an access rule named '${input.name}' already exists`);
    const next: RuleRow = { ...row, name: input.name, match, schedule: input.schedule, action: input.action, destinations, precedence: input.precedence ?? null, updated_at: this.#now() };
    this.#store.update(next, refs);
    this.#cache = undefined;
    return next;
  }

  delete(ref: string): void {
    const row = this.get(ref);
    this.#store.delete([row.id]);
    this.#cache = undefined;
  }

  /** The rules that name an interface (in a filter or a destination), in evaluation order. */
  naming(interfaceId: string): Array<{ id: string; name: string }> {
    return this.#store.rulesReferring('interface', interfaceId);
  }

  /** Removes every rule that names an interface (a cascading delete of it takes them along). */
  deleteNaming(interfaceId: string): Array<{ id: string; name: string }> {
    const rules = this.naming(interfaceId);
    this.#store.delete(rules.map((r) => r.id));
    this.#cache = undefined;
    return rules;
  }

  setEnabled(ref: string, enabled: boolean): RuleRow {
    const row = this.get(ref);
    this.#store.setEnabled(row.id, enabled, this.#now());
    this.#cache = undefined;
    return this.get(row.id);
  }

  reorder(order: string[]): RuleRow[] {
    const rules = this.#store.list();
    const errors: FieldError[] = [];
    const ids: string[] = [];
    order.forEach((ref, i) => {
      const rule = rules.find((r) => r.id === ref || r.name === ref);
      if (!rule) errors.push({ path: `body.order[${i}]`, message: `no access rule '${ref}'` });
      else if (ids.includes(rule.id)) errors.push({ path: `body.order[${i}]`, message: `rule '${ref}' is listed twice` });
      else ids.push(rule.id);
    });
    const missing = rules.filter((r) => !ids.includes(r.id));
    if (missing.length > 0) errors.push({ path: 'body.order', message: `every rule must be listed exactly once; missing: ${missing.map((r) => `${r.id} (${r.name})`).join(', ')}` });
    if (errors.length > 0) throw badRequest(`invalid order: ${errors.map((e) => e.message).join('; ')}`, errors);
    this.#store.reorder(ids, this.#now());
    this.#cache = undefined;
    return this.list();
  }

  /**
   * Import: replaces every rule with `inputs`, in that order, inside the caller's
   * transaction. Interfaces must be given by id. A same-named rule keeps its id and its fired
   * count; updated_at moves only when something in it changed. Call forgetCache() after the
   * transaction ends, whichever way.
   */
  replaceAll(inputs: readonly RuleInput[]): void {
    const existing = new Map(this.#store.list().map((r) => [r.name, r]));
    const nowMs = this.#clock.now();
    const at = new Date(nowMs).toISOString();
    const rows: Array<Omit<RuleRow, 'priority'>> = [];
    const refs: RuleRef[][] = [];
    for (const input of inputs) {
      const resolved = this.#resolve(input);
      const fields = { enabled: input.enabled ?? true, match: resolved.match, schedule: input.schedule, action: input.action, destinations: resolved.destinations, precedence: input.precedence ?? null };
      const old = existing.get(input.name);
      const same = old && jsonEqual(fields, { enabled: old.enabled, match: old.match, schedule: old.schedule, action: old.action, destinations: old.destinations, precedence: old.precedence ?? null });
      rows.push(
        old
          ? { ...old, ...fields, updated_at: same ? old.updated_at : at }
          : { id: newId('rul', nowMs), name: input.name, ...fields, fired: 0, last_fired_at: null, created_at: at, updated_at: at },
      );
      refs.push(resolved.refs);
    }
    this.#store.replaceAll(rows, refs);
    this.#cache = undefined;
  }

  /** Drops the cached rule list (after an import's transaction commits or rolls back). */
  forgetCache(): void {
    this.#cache = undefined;
  }

  /** Runs the policy for one message and records which rule fired. */
  decide(msg: RoutableMessage): Decision {
    const decision = this.evaluate(msg, this.#clock.now());
    if (decision.rule_id) {
      this.#store.recordFired(decision.rule_id, this.#now());
      const cached = this.#cache?.find((r) => r.id === decision.rule_id);
      if (cached) {
        cached.fired++;
        cached.last_fired_at = this.#now();
      }
    }
    return decision;
  }

  /** The policy's decision at `atMs`, recording nothing: what decide() decides (it calls this),
   *  and what a preview asks, with `trace` filled per rule. */
  evaluate(msg: RoutableMessage, atMs: number, trace?: RuleTraceEntry[]): Decision {
    const resolver: AddressResolver = {
      expand: (address) => {
        const name = address.slice(1);
        return this.#groups.expand(name) ?? this.#contacts.expand(name);
      },
      current: this.#nodes && ((address) => this.#nodes!.current(address)),
      interfaceName: (id) => this.#interfaces.find(id)?.name,
    };
    return evaluateRules(this.list(), msg, atMs, resolver, this.#defaultAction(), trace);
  }

  /** The rule's filters, with the names of the interfaces match.interfaces names by id. */
  namedMatch(row: RuleRow): RuleMatch & { interface_names?: Array<string | null> } {
    if (!row.match.interfaces) return row.match;
    return { ...row.match, interface_names: row.match.interfaces.map((id) => this.#interfaces.find(id)?.name ?? null) };
  }

  /** The rule's destinations with each interface's name beside its id (answers people read). */
  namedDestinations(row: RuleRow): NamedDestination[] {
    const named = <T extends { interface: string }>({ interface: id, ...rest }: T) => ({ interface: id, interface_name: this.#interfaces.find(id)?.name ?? null, ...rest });
    return row.destinations.map((d) => (isFallback(d) ? { ...d, fallback: d.fallback.map(named) } : named(d)));
  }

  #resolve(input: RuleInput): { match: RuleMatch; destinations: Destination[]; refs: RuleRef[] } {
    const errors: FieldError[] = [];
    const refs: RuleRef[] = [];
    const iface = (ref: string, path: string): string => {
      const row = this.#interfaces.find(ref);
      if (!row) {
        errors.push({ path, message: `no interface '${ref}'` });
        return ref;
      }
      refs.push({ kind: 'interface', id: row.id });
      return row.id;
    };
    const address = (value: string, path: string) => {
      if (!isReference(value)) return;
      const name = value.slice(1);
      const group = this.#groups.store.find(name);
      const contact = this.#contacts.store.find(name);
      if (group) refs.push({ kind: 'group', id: group.id });
      else if (contact) refs.push({ kind: 'contact', id: contact.id });
      else errors.push({ path, message: `no object group or contact named '${name}'` });
    };
    const match: RuleMatch = { ...input.match };
    if (match.interfaces) match.interfaces = match.interfaces.map((r, i) => iface(r, `body.match.interfaces[${i}]`));
    match.from?.forEach((a, i) => address(a, `body.match.from[${i}]`));
    match.to?.forEach((a, i) => address(a, `body.match.to[${i}]`));
    const destinations = (input.destinations ?? []).map((d, i) => {
      if (isFallback(d)) {
        d.fallback.forEach((m, j) => {
          address(m.to, `body.destinations[${i}].fallback[${j}].to`);
          // A member sends to one recipient: a group would be several deliveries in one place of the order.
          if (isReference(m.to) && this.#groups.store.find(m.to.slice(1))) {
            errors.push({ path: `body.destinations[${i}].fallback[${j}].to`, message: `'${m.to}' is an object group; a fallback member sends to one address or @contact` });
          }
        });
      } else {
        address(d.to, `body.destinations[${i}].to`);
      }
      const resolved = mapDestinationInterfaces(d, (ref, field) => iface(ref, `body.destinations[${i}].${field}`));
      destinationTargets(resolved).forEach((t, j) => {
        const path = isFallback(resolved) ? `body.destinations[${i}].fallback[${j}].to` : `body.destinations[${i}].to`;
        const problem = this.#literalAddressProblem(t.interface, t.to);
        if (problem) errors.push({ path, message: problem });
      });
      return resolved;
    });
    if (errors.length > 0) throw badRequest(`invalid references: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
    return { match, destinations, refs };
  }

  /** A literal address (not @name, not a {from}/{to} template) the destination's interface
   *  can never send to: the reason the preview gives for a delivery to it. */
  #literalAddressProblem(interfaceId: string, to: string): string | null {
    const row = this.#interfaces.find(interfaceId);
    if (!row || !this.#addressProblem || isReference(to) || to.includes('{')) return null;
    const problem = this.#addressProblem(row, to);
    return problem && `'${to}' cannot be an address on interface ${row.name} (${row.kind}): ${problem}`;
  }

  #now(): string {
    return new Date(this.#clock.now()).toISOString();
  }
}
