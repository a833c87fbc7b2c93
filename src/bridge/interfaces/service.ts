import { zodErrors } from '../../lib/validation.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, badRequest, conflict, type FieldError, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { jsonEqual } from '../../lib/json.ts';
import { RetryPolicy } from '../engine/backoff.ts';
import type { BearerHost } from '../engine/bearer-host.ts';
import { driverFor, type InterfaceKind } from '../../bearers/drivers.ts';
import type { InterfaceStore } from '../engine/interface-store.ts';
import { redactSettings, restoreSettings } from './secrets.ts';
import { TransformPipeline } from '../engine/transforms.ts';
import type { InterfaceRow } from '../engine/rows.ts';

// Interfaces and their state transitions, exactly docs/api.md section 3: bind/unbind attach and
// detach a device (rules and pipeline stay), enable/disable start and stop traffic
// (configuration stays), delete removes an unused interface (with ?cascade=true, one in use,
// with its rules and waiting deliveries).

export interface InterfaceInput {
  name: string;
  settings: Record<string, unknown>;
  transforms: TransformPipeline;
  retry: RetryPolicy;
}

export interface InterfaceServiceDeps {
  /** Rules naming an interface keep it from being deleted, or go with it (cascade). */
  rules: { naming(interfaceId: string): RuleName[]; deleteNaming(interfaceId: string): RuleName[] };
  /** Deliveries still waiting for a removed interface are cancelled with a reason. */
  deliveries: {
    cancelWaitingFor(interfaceId: string, reason: string, nowMs: number): number;
    queueDepth(interfaceId: string): number;
    queueStats(interfaceId: string): { by_precedence: Record<string, number>; held: number; evicted: number };
  };
  clock: Clock;
}

type RuleName = { id: string; name: string };

/** What a delete removed: the interface, the rules that named it, the deliveries it cancelled. */
export interface DeletedInterface {
  id: string;
  name: string;
  removed_rule_ids: string[];
  removed_rules: RuleName[];
  cancelled_deliveries: number;
}

/** What replaceAll did: every imported name's id, and the ids it removed. */
export interface ReplacedInterfaces {
  ids: Map<string, string>;
  removed: string[];
}

export class InterfaceService {
  readonly #store: InterfaceStore;
  readonly #host: BearerHost;
  readonly #d: InterfaceServiceDeps;
  readonly #clock: Clock;

  // A queue whose interface may send again (enabled, bound, reconnected) is woken by the link
  // coming up: the bearer host tells the router's event stream, the dispatcher listens.
  constructor(store: InterfaceStore, host: BearerHost, deps: InterfaceServiceDeps) {
    this.#store = store;
    this.#host = host;
    this.#d = deps;
    this.#clock = deps.clock;
  }

  get(ref: string): InterfaceRow {
    const row = this.#store.find(ref);
    if (!row) throw notFound('interface', ref);
    return row;
  }

  find(ref: string): InterfaceRow | undefined {
    return this.#store.find(ref);
  }

  /** A filter's interface reference (id or name) as an id; undefined when none was given. */
  idForFilter(ref: string | undefined, path: string): string | undefined {
    if (ref === undefined) return undefined;
    const row = this.#store.find(ref);
    if (!row) throw badRequest(`no interface '${ref}'`, [{ path, message: `no interface '${ref}'` }]);
    return row.id;
  }

  list(): InterfaceRow[] {
    return this.#store.list();
  }

  async create(input: InterfaceInput & { kind: InterfaceKind; enabled: boolean; device: string | null }): Promise<InterfaceRow> {
    const settings = this.#checkSettings(input.kind, restoreSettings(input.kind, input.settings, undefined, 'body.settings'));
    if (this.#store.nameTaken(input.name)) throw conflict('ERR_NAME_TAKEN', `an interface named '${input.name}' already exists`);
    const now = new Date(this.#clock.now()).toISOString();
    const row: InterfaceRow = {
      id: newId('ifc', this.#clock.now()),
      name: input.name,
      kind: input.kind,
      enabled: input.enabled,
      device: input.device,
      settings,
      transforms: input.transforms,
      retry: input.retry,
      created_at: now,
      updated_at: now,
    };
    this.#store.insert(row);
    await this.#apply(row);
    return row;
  }

  async update(ref: string, input: InterfaceInput): Promise<InterfaceRow> {
    const row = this.get(ref);
    const settings = this.#checkSettings(row.kind as InterfaceKind, restoreSettings(row.kind, input.settings, row.settings, 'body.settings'));
    if (this.#store.nameTaken(input.name, row.id)) throw conflict('ERR_NAME_TAKEN', `an interface named '${input.name}' already exists`);
    const next = { ...row, name: input.name, settings, transforms: input.transforms, retry: input.retry, updated_at: this.#now() };
    this.#store.update(next);
    await this.#apply(next);
    return next;
  }

  // Writes answer after the bearer was started or stopped, so a 200 to disable or unbind means
  // traffic has stopped, and the state in the answer is the state of the link.

  /** Removes the interface and its pipeline. While rules name it or deliveries wait for it,
   *  409 saying which, unless `cascade`: then those rules go with it and the deliveries are
   *  cancelled. (Swapping a radio is a bind, which keeps all of them.) */
  async delete(ref: string, cascade = false): Promise<DeletedInterface> {
    const row = this.get(ref);
    const label = `interface '${row.name}' (${row.id})`;
    const rules = this.#d.rules.naming(row.id);
    const waiting = this.#d.deliveries.queueDepth(row.id);
    if (!cascade && (rules.length > 0 || waiting > 0)) {
      const uses = [
        ...(rules.length > 0 ? [`rule${rules.length > 1 ? 's' : ''} ${rules.map((r) => `'${r.name}' (${r.id})`).join(', ')}`] : []),
        ...(waiting > 0 ? [`${waiting} waiting deliver${waiting > 1 ? 'ies' : 'y'}`] : []),
      ];
      throw new AppError('ERR_IN_USE', 409,
        `${label} is used by ${uses.join(' and ')}; to swap its radio, bind the new device (POST /api/interfaces/${row.name}/bind), which keeps them; to delete it anyway with those rules and cancel the deliveries: DELETE /api/interfaces/${row.name}?cascade=true`,
        { errors: [...rules.map((r) => ({ path: 'rules', message: `'${r.name}' (${r.id})` })), ...(waiting > 0 ? [{ path: 'deliveries', message: `${waiting} waiting` }] : [])] });
    }
    await this.#host.stop(row.id);
    const removed = this.#d.rules.deleteNaming(row.id);
    const cancelled = this.#d.deliveries.cancelWaitingFor(row.id, `${label} was deleted`, this.#clock.now());
    this.#store.delete(row.id);
    this.#host.forget(row.id);
    return { id: row.id, name: row.name, removed_rule_ids: removed.map((r) => r.id), removed_rules: removed, cancelled_deliveries: cancelled };
  }

  setEnabled(ref: string, enabled: boolean): Promise<InterfaceRow> {
    return this.#transition(ref, { enabled });
  }

  bind(ref: string, device: string): Promise<InterfaceRow> {
    return this.#transition(ref, { device });
  }

  unbind(ref: string): Promise<InterfaceRow> {
    return this.#transition(ref, { device: null });
  }

  /** A state move (docs/api.md section 3): store it, then bring the bearer in line before answering. */
  async #transition(ref: string, change: Pick<Partial<InterfaceRow>, 'enabled' | 'device'>): Promise<InterfaceRow> {
    const next = { ...this.get(ref), ...change, updated_at: this.#now() };
    this.#store.update(next);
    await this.#apply(next);
    return next;
  }

  /**
   * Import: makes the stored interfaces exactly `entries` (settings already checked
   * against their kind), inside the caller's transaction. A same-named interface of the same
   * kind keeps its id, so deliveries in flight stay attached; one whose name is gone or whose
   * kind changed is removed and what waits for it is cancelled (a delivery addressed for one
   * bearer cannot go out on another). Rules are the caller's to replace, and bearers are not
   * touched: call applyReplaced() after COMMIT, so a rolled-back import never reaches a radio.
   */
  replaceAll(entries: ReadonlyArray<InterfaceInput & { kind: InterfaceKind; enabled: boolean; device: string | null }>): ReplacedInterfaces {
    const wanted = new Map(entries.map((e) => [e.name, e]));
    const at = this.#now();
    const removed: string[] = [];
    for (const row of this.#store.list()) {
      if (wanted.get(row.name)?.kind === row.kind) continue;
      this.#cancelWaiting(row.id, `interface '${row.name}' was removed by a configuration import`);
      this.#store.delete(row.id);
      removed.push(row.id);
    }
    const ids = new Map<string, string>();
    for (const e of entries) {
      const row = this.#store.find(e.name);
      // A secret written back as the marker keeps the stored one (an export re-imported).
      const settings = restoreSettings(e.kind, e.settings, row?.settings, `interfaces '${e.name}' settings`);
      const fields = { enabled: e.enabled, device: e.device, settings, transforms: e.transforms, retry: e.retry };
      if (!row) {
        const id = newId('ifc', this.#clock.now());
        this.#store.insert({ id, name: e.name, kind: e.kind, ...fields, created_at: at, updated_at: at });
        ids.set(e.name, id);
        continue;
      }
      const before = { enabled: row.enabled, device: row.device, settings: row.settings, transforms: row.transforms, retry: row.retry };
      if (!jsonEqual(before, fields)) this.#store.update({ ...row, ...fields, updated_at: at });
      ids.set(e.name, row.id);
    }
    return { ids, removed };
  }

  /** After an import's COMMIT: stops removed bearers, starts or restarts changed ones. */
  async applyReplaced(replaced: ReplacedInterfaces): Promise<void> {
    for (const id of replaced.removed) {
      await this.#host.stop(id);
      this.#host.forget(id);
    }
    await this.startAll();
  }

  /** Starts the bearers of every enabled, bound interface (bridge start). */
  async startAll(): Promise<void> {
    await Promise.all(this.#store.list().map((row) => this.#apply(row)));
  }

  view(row: InterfaceRow) {
    const rt = this.#host.runtime(row.id);
    return {
      ...row,
      settings: redactSettings(row.kind, row.settings),
      state: { bound: row.device !== null, connected: rt.connected, phase: rt.phase, last_error: rt.last_error, last_rx_at: rt.last_rx_at, last_tx_at: rt.last_tx_at },
    };
  }

  /** The view, with what to know about the interface now (create and bind answer it). */
  withWarnings(row: InterfaceRow) {
    const warnings = this.warnings(row);
    return warnings.length > 0 ? { ...this.view(row), warnings } : this.view(row);
  }

  /** What an operator should know about an interface just created or bound: a kind whose driver
   *  this release does not have is stored and can be bound, but carries no traffic. */
  warnings(row: InterfaceRow): string[] {
    if (this.#host.hasDriver(row.kind)) return [];
    return [`no driver for interface kind '${row.kind}' in this release: the interface is stored and can be bound, but it cannot send or receive`];
  }

  /**
   * Why deliveries for this interface cannot go out now, or null: read from the interface's
   * state each time it is asked (a delivery's waiting_for, docs/api.md 2.5), never stored.
   * The same conditions as the routing core's fallback check (engine/core.ts), in words.
   */
  waitingFor(interfaceId: string): string | null {
    const row = this.#store.find(interfaceId);
    if (!row) return `interface ${interfaceId} was deleted`;
    const name = `interface '${row.name}'`;
    if (!row.enabled) return `${name} is disabled`;
    if (row.device === null) return `${name} is unbound (no device)`;
    if (!this.#host.hasDriver(row.kind)) return `${name} has no driver for kind '${row.kind}' in this release`;
    const rt = this.#host.runtime(row.id);
    if (rt.reason === 'budget') return `${name} is out of budget${rt.last_error ? `: ${rt.last_error}` : ''}`;
    if (!rt.connected) return `${name} is offline: ${rt.last_error ?? rt.phase}`;
    return null;
  }

  /** The link state and the values the driver reports (GET /api/interfaces/{id}/stats). */
  stats(row: InterfaceRow) {
    const rt = this.#host.runtime(row.id);
    const view = driverFor(row.kind)?.stats;
    return {
      id: row.id, name: row.name, kind: row.kind, connected: rt.connected, phase: rt.phase, last_error: rt.last_error,
      stats: view ? view.read(this.#host.stats(row.id), row.settings, this.#host.driverState(row.id), this.#clock) : {},
    };
  }

  health(row: InterfaceRow) {
    const rt = this.#host.runtime(row.id);
    return {
      id: row.id,
      name: row.name,
      kind: row.kind,
      enabled: row.enabled,
      bound: row.device !== null,
      connected: rt.connected,
      phase: rt.phase,
      last_error: rt.last_error,
      last_rx_at: rt.last_rx_at,
      last_tx_at: rt.last_tx_at,
      queue_depth: this.#d.deliveries.queueDepth(row.id),
      queue: this.#d.deliveries.queueStats(row.id),
      counters: { ...rt.counters },
      device: this.stats(row).stats as Record<string, unknown>,
    };
  }

  async #apply(row: InterfaceRow): Promise<void> {
    await this.#host.apply(row);
  }

  #cancelWaiting(interfaceId: string, reason: string): void {
    this.#d.deliveries.cancelWaitingFor(interfaceId, reason, this.#clock.now());
  }

  /** What update() would refuse in these settings for this interface, without writing
   *  (PATCH reports it together with the other fields, docs/style.md habit 9). */
  settingsErrors(row: InterfaceRow, settings: Record<string, unknown>): FieldError[] {
    try {
      this.#checkSettings(row.kind as InterfaceKind, restoreSettings(row.kind, settings, row.settings, 'body.settings'));
      return [];
    } catch (error) {
      if (error instanceof AppError && error.errors) return error.errors;
      throw error;
    }
  }

  #checkSettings(kind: InterfaceKind, settings: Record<string, unknown>): Record<string, unknown> {
    const result = driverFor(kind)!.settings.safeParse(settings);
    if (result.success) return result.data;
    throw badRequest(`invalid settings for a ${kind} interface`, zodErrors(result.error, 'body.settings'));
  }

  #now(): string {
    return new Date(this.#clock.now()).toISOString();
  }
}


