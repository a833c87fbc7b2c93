import type { DatabaseSync } from 'node:sqlite';
import { transaction } from '../../db/sqlite.ts';
import { StatementCache } from '../../db/statement-cache.ts';
import { fromJson, toJson } from '../../lib/json.ts';
import type { EvaluableRule } from './match.ts';

/** A stored rule: what evaluation needs, plus its stats and times. */
export interface RuleRow extends EvaluableRule {
  fired: number;
  last_fired_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface RuleRef {
  kind: 'interface' | 'group' | 'contact';
  id: string;
}

interface Raw extends Omit<RuleRow, 'enabled' | 'match' | 'schedule' | 'destinations' | 'precedence'> {
  precedence: string | null;
  enabled: number;
  match: string;
  schedule: string | null;
  destinations: string;
}

const decode = (r: Raw): RuleRow => ({
  ...r,
  enabled: r.enabled === 1,
  match: fromJson(r.match, {}),
  schedule: fromJson(r.schedule, null),
  destinations: fromJson(r.destinations, []),
  precedence: (r.precedence as RuleRow['precedence']) ?? null,
});

/** SQL for access_rules and rule_refs. Priority is the 1-based position in evaluation order. */
export class RuleStore {
  readonly #db: DatabaseSync;
  // recordFired runs for every routed message: its statement is compiled once.
  readonly #statements: StatementCache;
  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#statements = new StatementCache(db);
  }
  list(): RuleRow[] {
    return (this.#db.prepare('SELECT * FROM access_rules ORDER BY priority').all() as unknown as Raw[]).map(decode);
  }
  find(ref: string): RuleRow | undefined {
    const r = this.#db.prepare('SELECT * FROM access_rules WHERE id = ? OR name = ?').get(ref, ref) as unknown as Raw | undefined;
    return r && decode(r);
  }
  nameTaken(name: string, exceptId = ''): boolean {
    return !!this.#db.prepare('SELECT 1 FROM access_rules WHERE name = ? AND id != ?').get(name, exceptId);
  }
  /** Inserts at the end of the evaluation order. */
  insert(row: Omit<RuleRow, 'priority'>, refs: RuleRef[]): RuleRow {
    return transaction(this.#db, () => {
      const { n } = this.#db.prepare('SELECT coalesce(max(priority), 0) + 1 AS n FROM access_rules').get() as { n: number };
      this.#db
        .prepare('INSERT INTO access_rules (id, name, enabled, priority, match, schedule, action, destinations, precedence, fired, last_fired_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(row.id, row.name, row.enabled ? 1 : 0, n, toJson(row.match), row.schedule ? toJson(row.schedule) : null, row.action, toJson(row.destinations), row.precedence ?? null, row.fired, row.last_fired_at, row.created_at, row.updated_at);
      this.#setRefs(row.id, refs);
      return { ...row, priority: n };
    });
  }
  update(row: RuleRow, refs: RuleRef[]): void {
    transaction(this.#db, () => {
      this.#db
        .prepare('UPDATE access_rules SET name = ?, enabled = ?, match = ?, schedule = ?, action = ?, destinations = ?, precedence = ?, updated_at = ? WHERE id = ?')
        .run(row.name, row.enabled ? 1 : 0, toJson(row.match), row.schedule ? toJson(row.schedule) : null, row.action, toJson(row.destinations), row.precedence ?? null, row.updated_at, row.id);
      this.#setRefs(row.id, refs);
    });
  }
  setEnabled(id: string, enabled: boolean, at: string): void {
    this.#db.prepare('UPDATE access_rules SET enabled = ?, updated_at = ? WHERE id = ?').run(enabled ? 1 : 0, at, id);
  }
  /** Deletes rules and closes the gaps they leave in the order. */
  delete(ids: string[]): void {
    if (ids.length === 0) return;
    transaction(this.#db, () => {
      const del = this.#db.prepare('DELETE FROM access_rules WHERE id = ?');
      for (const id of ids) del.run(id);
      this.#renumber(this.list().map((r) => r.id));
    });
  }
  reorder(orderedIds: string[], at: string): void {
    transaction(this.#db, () => {
      this.#renumber(orderedIds);
      this.#db.prepare('UPDATE access_rules SET updated_at = ?').run(at);
    });
  }
  /**
   * Import: the whole rule list in evaluation order, inside the caller's transaction
   * (it opens none of its own, so it nests in the import's). Rules whose id is not listed are
   * deleted; listed ones are inserted or updated at their position, fired counts kept.
   */
  replaceAll(rows: ReadonlyArray<Omit<RuleRow, 'priority'>>, refs: ReadonlyArray<RuleRef[]>): void {
    if (!this.#db.isTransaction) throw new Error('RuleStore.replaceAll must run inside the caller\'s transaction');
    const keep = new Set(rows.map((r) => r.id));
    const del = this.#db.prepare('DELETE FROM access_rules WHERE id = ?');
    for (const r of this.list()) if (!keep.has(r.id)) del.run(r.id);
    const upsert = this.#db.prepare(
      'INSERT INTO access_rules (id, name, enabled, priority, match, schedule, action, destinations, precedence, fired, last_fired_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ' +
        'ON CONFLICT (id) DO UPDATE SET name = excluded.name, enabled = excluded.enabled, priority = excluded.priority, match = excluded.match, ' +
        'schedule = excluded.schedule, action = excluded.action, destinations = excluded.destinations, precedence = excluded.precedence, updated_at = excluded.updated_at',
    );
    rows.forEach((row, i) => {
      upsert.run(row.id, row.name, row.enabled ? 1 : 0, i + 1, toJson(row.match), row.schedule ? toJson(row.schedule) : null, row.action, toJson(row.destinations), row.precedence ?? null, row.fired, row.last_fired_at, row.created_at, row.updated_at);
      this.#setRefs(row.id, refs[i]);
    });
  }
  recordFired(id: string, at: string): void {
    this.#statements.prepare('UPDATE access_rules SET fired = fired + 1, last_fired_at = ? WHERE id = ?').run(at, id);
  }
  rulesReferring(kind: RuleRef['kind'], id: string): Array<{ id: string; name: string }> {
    return this.#db
      .prepare('SELECT r.id, r.name FROM rule_refs f JOIN access_rules r ON r.id = f.rule_id WHERE f.ref_kind = ? AND f.ref_id = ? ORDER BY r.priority')
      .all(kind, id) as Array<{ id: string; name: string }>;
  }
  #renumber(ids: string[]): void {
    const set = this.#db.prepare('UPDATE access_rules SET priority = ? WHERE id = ?');
    ids.forEach((id, i) => set.run(i + 1, id));
  }
  #setRefs(ruleId: string, refs: RuleRef[]): void {
    this.#db.prepare('DELETE FROM rule_refs WHERE rule_id = ?').run(ruleId);
    const ins = this.#db.prepare('INSERT OR IGNORE INTO rule_refs (rule_id, ref_kind, ref_id) VALUES (?, ?, ?)');
    for (const r of refs) ins.run(ruleId, r.kind, r.id);
  }
}
