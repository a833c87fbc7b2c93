import type { CatalogueTable } from './sql.ts';

// docs/api.md section 4.2: the tables a tenant export writes and a purge empties are read from the
// database catalogue, not from a list in code, so a table added by a later migration is
// exported and purged without anyone touching this file. The rules, by naming convention
// (also in docs/hub.md and src/hub/migrations.ts):
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

export function tenantTables(catalogue: CatalogueTable[]): TenantTable[] {
  const out: TenantTable[] = [];
  for (const t of catalogue) {
    const tenantColumn = t.columns.includes('tenant_id') ? 'tenant_id' : t.name === 'tenants' ? 'id' : null;
    if (!tenantColumn) continue;
    out.push({ name: t.name, tenantColumn, columns: t.columns, exportColumns: t.columns.filter((c) => !SECRET_COLUMN.test(c)) });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}
