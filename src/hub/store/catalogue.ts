import type { Migration } from '../../db/migrate.ts';
import type { CatalogueTable } from './sql.ts';

// docs/api.md section 4.2: the tables a tenant export writes and a purge empties are read from the
// database catalogue, not from a list in code, so a table added by a later migration is
// exported and purged without anyone touching this file. The rules, by naming convention
// (also in docs/hub.md and src/hub/migrations.ts):
//  - only the hub's own tables count: those its migrations create (read from the migrations'
//    SQL, ownTables below). Other applications may share the schema (a hosted hub's database
//    is often one schema of a bigger one), and a table of theirs with a tenant_id column is
//    neither exported nor emptied;
//  - a table with a tenant_id column holds tenant data, selected by tenant_id;
//  - the tenants table is the tenant's own row, selected by id;
//  - any other table (hub_migrations, hub_settings) belongs to the hub, not to a tenant;
//  - a column whose name contains one of the words below holds a secret (API key hashes,
//    key lookups, provider credentials) and is withheld from the export. Withholding by name
//    errs on the safe side: a harmless column named "token_count" is withheld too.

export const SECRET_COLUMN = /hash|secret|password|passwd|credential|token|lookup/i;

export interface TenantTable {
  name: string;
  /** The column that names the tenant: tenant_id, or id for the tenants table. */
  tenantColumn: string;
  columns: string[];
  /** Columns written to the export (secrets withheld). */
  exportColumns: string[];
}

/**
 * The tenant tables among the catalogue's, limited to the hub's own (`own`, from ownTables):
 * the catalogue says which columns a table has now, the migrations which tables are ours.
 */
export function tenantTables(catalogue: CatalogueTable[], own: ReadonlySet<string>): TenantTable[] {
  const out: TenantTable[] = [];
  for (const t of catalogue) {
    if (!own.has(t.name.toLowerCase())) continue;
    const tenantColumn = t.columns.includes('tenant_id') ? 'tenant_id' : t.name === 'tenants' ? 'id' : null;
    if (!tenantColumn) continue;
    out.push({ name: t.name, tenantColumn, columns: t.columns, exportColumns: t.columns.filter((c) => !SECRET_COLUMN.test(c)) });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

// CREATE TABLE [IF NOT EXISTS] name, ALTER TABLE name RENAME TO name, DROP TABLE [IF EXISTS]
// name: the statements that make, rename and remove a table, in both dialects. A name may be
// quoted ("name") or schema-qualified (main.name, public.name); only its last part counts.
const IDENT = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)`;
const NAME = String.raw`((?:${IDENT}\s*\.\s*)?${IDENT})`;
const TABLE_DDL = new RegExp(
  String.raw`\bCREATE\s+(?:(?:GLOBAL|LOCAL)\s+)?(?:TEMP(?:ORARY)?\s+|UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?${NAME}` +
    String.raw`|\bALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?${NAME}\s+RENAME\s+TO\s+${NAME}` +
    String.raw`|\bDROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?${NAME}`,
  'gi',
);

/** The table names the migrations leave behind (lower case; a quoted name as written, lowered). */
export function ownTables(migrations: readonly Migration[]): Set<string> {
  const tables = new Set<string>();
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    // Comments and string literals could hold the words above; neither names a table.
    const sql = m.sql.replace(/--[^\n]*/g, ' ').replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/'(?:[^']|'')*'/g, "''");
    for (const match of sql.matchAll(TABLE_DDL)) {
      const [, created, renamedFrom, renamedTo, dropped] = match;
      if (created) tables.add(bareName(created));
      else if (renamedFrom && renamedTo) {
        tables.delete(bareName(renamedFrom));
        tables.add(bareName(renamedTo));
      } else if (dropped) tables.delete(bareName(dropped));
    }
  }
  return tables;
}

function bareName(name: string): string {
  const parts = name.match(new RegExp(IDENT, 'g')) ?? [name];
  const last = parts[parts.length - 1];
  return (last.startsWith('"') ? last.slice(1, -1).replace(/""/g, '"') : last).toLowerCase();
}
