import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hubMigrations } from '../../../src/hub/migrations.ts';
import { ownTables, tenantTables } from '../../../src/hub/store/catalogue.ts';
import { openHubStore, openSqlDriver } from '../../../src/hub/store/store.ts';
import { postgresHarness, sqliteHarness, type StoreHarness } from '../store-harness.ts';

// Issue 15 item 4: the tenant export and purge take the hub's own tables only (those its
// migrations create), still read from the catalogue; a table of another application sharing
// the schema is neither exported nor emptied, even with a tenant_id column.

const T0 = '2026-01-01T00:00:00.000Z';
const extra = { version: hubMigrations.length + 1, name: 'gateway_notes', sql: 'CREATE TABLE gateway_notes (tenant_id TEXT NOT NULL, note TEXT, secret_hash TEXT)' };

test('ownTables: the tables the migrations leave behind', () => {
  assert.equal([...ownTables(hubMigrations)].sort(), ['api_keys', 'bridge_seqs', 'bridges', 'deliveries', 'enrolled_bridges', 'hub_settings', 'messages', 'positions', 'telemetry', 'tenants']);
  const more = [
    { version: 1, name: 'a', sql: `-- CREATE TABLE in_a_comment (tenant_id TEXT);\nCREATE TABLE IF NOT EXISTS "Quoted" (tenant_id TEXT); create table main.lower_case (x TEXT);\n/* CREATE TABLE in_block (x TEXT) */ INSERT INTO x VALUES ('CREATE TABLE in_text (x TEXT)');` },
    { version: 2, name: 'b', sql: 'ALTER TABLE lower_case RENAME TO renamed; CREATE TABLE doomed (x TEXT); DROP TABLE IF EXISTS doomed;' },
  ];
  assert.equal([...ownTables(more)].sort(), ['quoted', 'renamed']);
});

test('tenantTables skips a catalogue table the migrations did not make', () => {
  const catalogue = [
    { name: 'api_keys', columns: ['id', 'tenant_id', 'key_hash'] },
    { name: 'tenants', columns: ['id', 'created_at'] },
    { name: 'crm_contacts', columns: ['id', 'tenant_id', 'name'] },
    { name: 'hub_settings', columns: ['name', 'value'] },
  ];
  assert.equal(tenantTables(catalogue, ownTables(hubMigrations)).map((t) => t.name), ['api_keys', 'tenants']);
});

for (const harness of [sqliteHarness(), postgresHarness()] as StoreHarness[]) {
  test(`[${harness.name}] a foreign table with a tenant_id column is neither exported nor purged`, async () => {
    const location = await harness.freshLocation();
    const store = await openHubStore(location, { migrations: [...hubMigrations, extra] });
    const other = openSqlDriver(location);
    try {
      // Another application's tables in the same schema, made outside the hub's migrations.
      await other.run('CREATE TABLE crm_contacts (tenant_id TEXT NOT NULL, name TEXT NOT NULL)');
      await other.run('CREATE TABLE "Billing" (tenant_id TEXT NOT NULL, amount INTEGER)');
      for (const t of ['gone', 'kept']) {
        await store.ensureTenant(t, T0);
        await other.run('INSERT INTO crm_contacts (tenant_id, name) VALUES ($1, $2)', [t, `${t} contact`]);
        await other.run('INSERT INTO "Billing" (tenant_id, amount) VALUES ($1, 5)', [t]);
        await other.run('INSERT INTO gateway_notes (tenant_id, note) VALUES ($1, $2)', [t, `${t} note`]);
      }
      const names = (await store.tenantTables()).map((t) => t.name);
      assert.not.ok(names.includes('crm_contacts'), 'crm_contacts is not the hub\'s');
      assert.not.ok(names.includes('Billing'), 'Billing is not the hub\'s');
      assert.ok(names.includes('gateway_notes'), 'a table of a later hub migration still follows from the catalogue');
      assert.ok(names.includes('api_keys'));

      const removed = (await store.purgeTenant('gone'))!;
      assert.equal(Object.keys(removed).sort(), names.slice().sort());
      assert.is(removed.gateway_notes, 1);
      const left = await other.query('SELECT tenant_id FROM crm_contacts ORDER BY tenant_id');
      assert.equal(left.map((r) => r.tenant_id), ['gone', 'kept'], 'the purge left the other application\'s rows alone');
      assert.is(Number((await other.query('SELECT count(*) AS n FROM "Billing"'))[0].n), 2);
      assert.equal((await other.query('SELECT tenant_id FROM gateway_notes')).map((r) => r.tenant_id), ['kept']);
    } finally {
      await other.close();
      await store.close();
      await harness.cleanup();
    }
  });
}

test.run();
