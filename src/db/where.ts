import type { SQLInputValue } from 'node:sqlite';

// The WHERE clause of a list filter, for the stores that list rows by optional filters: each
// condition counts only when its filter is set, and its values are bound, never spliced in.

export class Where {
  readonly #conditions: string[];
  readonly args: SQLInputValue[] = [];

  /** @param always conditions without values that every row must meet */
  constructor(...always: string[]) {
    this.#conditions = [...always];
  }

  /** Adds `sql` with its values for its `?`s, unless a value is undefined (its filter is not
   *  set). */
  add(sql: string, ...values: Array<SQLInputValue | undefined>): void {
    if (values.some((v) => v === undefined)) return;
    this.#conditions.push(sql);
    this.args.push(...(values as SQLInputValue[]));
  }

  /** The conditions joined by AND ('' when there is none). */
  get conditions(): string {
    return this.#conditions.join(' AND ');
  }

  /** `WHERE` and the conditions, or '' when there is none. */
  get clause(): string {
    return this.#conditions.length ? `WHERE ${this.conditions}` : '';
  }
}

/** A LIKE pattern (with ESCAPE '\') matching text that contains `text` as it is: its %, _ and
 *  \ are escaped. */
export function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
}
