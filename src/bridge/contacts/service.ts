import type { Clock } from '../../lib/clock.ts';
import { AppError, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { jsonEqual } from '../../lib/json.ts';
import type { RuleRef } from '../rules/store.ts';
import type { BookRow, BookStore } from './store.ts';

/** A contact's addresses: one per address family the drivers declare (bearers/drivers.ts). */
export type ContactAddresses = Record<string, string>;
export type GroupMembers = string[];

export interface BookOptions {
  what: 'contact' | 'object group';
  refKind: RuleRef['kind'] & ('group' | 'contact');
  prefix: 'ctc' | 'grp';
  /** The addresses "@name" stands for. */
  expand(value: unknown): string[];
}

export interface ReferenceCheck {
  rulesReferring(kind: RuleRef['kind'], id: string): Array<{ id: string; name: string }>;
  /** True when the other book already uses the name ("@name" must mean one thing). */
  nameUsedElsewhere(name: string): boolean;
  /** Where the senders policy names "@name" (e.g. ['blocklist']); empty when it does not. */
  policyReferring?(name: string): string[];
}

/** CRUD for a book (contacts or object groups), refusing changes that would break rules. */
export class BookService<V> {
  readonly store: BookStore<V>;
  readonly options: BookOptions;
  readonly #clock: Clock;
  readonly #refs: ReferenceCheck;

  constructor(store: BookStore<V>, options: BookOptions, clock: Clock, refs: ReferenceCheck) {
    this.store = store;
    this.options = options;
    this.#clock = clock;
    this.#refs = refs;
  }
  list(): BookRow<V>[] {
    return this.store.list();
  }
  get(ref: string): BookRow<V> {
    const row = this.store.find(ref.replace(/^@/, ''));
    if (!row) throw notFound(this.options.what, ref);
    return row;
  }
  create(name: string, value: V): BookRow<V> {
    this.#checkName(name);
    const now = this.#clock.now();
    const at = new Date(now).toISOString();
    const row: BookRow<V> = { id: newId(this.options.prefix, now), name, value, created_at: at, updated_at: at };
    this.store.insert(row);
    return row;
  }
  update(ref: string, name: string, value: V): BookRow<V> {
    const row = this.get(ref);
    if (name !== row.name) {
      const users = this.#refs.rulesReferring(this.options.refKind, row.id) ?? [];
      if (users.length > 0) throw conflict('ERR_IN_USE', `${this.options.what} '${row.name}' cannot be renamed while rules refer to it as @${row.name}: ${names(users)}`);
      this.#checkPolicy(row.name, 'renamed');
      this.#checkName(name, row.id);
    }
    const next = { ...row, name, value, updated_at: new Date(this.#clock.now()).toISOString() };
    this.store.update(next);
    return next;
  }
  delete(ref: string): void {
    const row = this.get(ref);
    const users = this.#refs.rulesReferring(this.options.refKind, row.id) ?? [];
    if (users.length > 0) {
      throw new AppError('ERR_IN_USE', 409, `${this.options.what} '${row.name}' is used by rules ${names(users)}; change or delete them first`);
    }
    this.#checkPolicy(row.name, 'deleted');
    this.store.delete(row.id);
  }
  /**
   * Import: makes the book exactly `entries`, inside the caller's transaction, which
   * also replaces the rules (so the in-use checks of update and delete do not apply). A
   * same-named entry keeps its id; updated_at moves only when its value changed.
   */
  replaceAll(entries: ReadonlyArray<{ name: string; value: V }>): void {
    const wanted = new Map(entries.map((e) => [e.name, e.value]));
    for (const row of this.store.list()) if (!wanted.has(row.name)) this.store.delete(row.id);
    const now = this.#clock.now();
    const at = new Date(now).toISOString();
    for (const { name, value } of entries) {
      const row = this.store.find(name);
      if (!row) this.store.insert({ id: newId(this.options.prefix, now), name, value, created_at: at, updated_at: at });
      // Key order counts: a contact's addresses are kept in its preferred order.
      else if (!jsonEqual(row.value, value) || JSON.stringify(row.value) !== JSON.stringify(value)) this.store.update({ ...row, value, updated_at: at });
    }
  }
  expand(name: string): string[] | null {
    const row = this.store.find(name);
    return row ? this.options.expand(row.value) : null;
  }
  /** The senders policy names books like rules do: renaming or deleting one
   *  it names would silently change who is blocked or allowed, so it is refused. */
  #checkPolicy(name: string, verb: 'renamed' | 'deleted'): void {
    const lists = this.#refs.policyReferring?.(name) ?? [];
    if (lists.length > 0) {
      throw conflict('ERR_IN_USE', `${this.options.what} '${name}' cannot be ${verb} while the senders policy refers to it as @${name} in its ${lists.join(' and ')}; change the policy first (PUT /api/senders/policy)`);
    }
  }
  #checkName(name: string, exceptId = ''): void {
    const existing = this.store.find(name);
    if ((existing && existing.id !== exceptId) || this.#refs.nameUsedElsewhere(name)) {
      throw conflict('ERR_NAME_TAKEN', `the name '${name}' is already used by a contact or object group ("@${name}" must name one thing)`);
    }
  }
}

function names(rules: Array<{ id: string; name: string }>): string {
  return rules.map((r) => `'${r.name}' (${r.id})`).join(', ');
}
