import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Migration } from '../../src/db/migrate.ts';
import { StartupError } from '../../src/lib/errors.ts';
import { hubMigrations } from '../../src/hub/migrations.ts';
import { type EventRow, type HubKeyRow, type HubStore, openHubStore, openSqlDriver } from '../../src/hub/store/store.ts';
import type { StoreHarness } from './store-harness.ts';
import { registerPositionConformance } from './store-positions.ts';

// One contract for every hub store (docs/style.md habit 7): store.sqlite.test.ts and
// store.postgres.test.ts run exactly these tests, so both databases behave the same.

const T0 = '2026-01-01T00:00:00.000Z';
const later = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

/** A table a later release might add: the export and purge must pick it up unaided. */
export const extraMigration: Migration = {
  version: hubMigrations.length + 1,
  name: 'test_gateway_notes',
  sql: `CREATE TABLE gateway_notes (tenant_id TEXT NOT NULL, note TEXT NOT NULL, provider_credential TEXT);`,
};

function key(tenant: string, id: string, role: HubKeyRow['role'] = 'owner'): HubKeyRow {
  return { id, tenant_id: tenant, label: `label ${id}`, role, key_lookup: `lookup${id}`, key_hash: `hash${id}`, created_at: T0, last_used_at: null };
}

function event(tenant: string, id: string, bridge = 'brg-1'): EventRow {
  return { tenant_id: tenant, event_id: id, bridge_id: bridge, ts: T0, body: JSON.stringify({ event_id: id, text: 'hi' }), received_at: T0 };
}

export function registerStoreConformance(test: Test, harness: StoreHarness): void {
  const open: HubStore[] = [];
  const fresh = async (migrations?: Migration[]) => {
    const store = await openHubStore(await harness.freshLocation(), { migrations });
    open.push(store);
    return store;
  };
  test.after(async () => {
    for (const s of open) await s.close().catch(() => {});
    await harness.cleanup();
  });
  registerPositionConformance(test, harness.name, () => fresh());

  test(`[${harness.name}] a new database gets every migration; the next start verifies and applies none`, async () => {
    const location = await harness.freshLocation();
    const first = await openHubStore(location);
    assert.equal(first.migrations.applied.map((m) => m.version), hubMigrations.map((m) => m.version));
    await first.close();
    const second = await openHubStore(location);
    assert.is(second.migrations.applied.length, 0);
    assert.is(second.migrations.verified, hubMigrations.length);
    await second.close();
  });

  test(`[${harness.name}] three replicas starting at once on an empty database apply each migration exactly once`, async () => {
    const location = await harness.freshLocation();
    const stores = await Promise.all([openHubStore(location), openHubStore(location), openHubStore(location)]);
    const versions = stores.flatMap((s) => s.migrations.applied.map((m) => m.version)).sort((a, b) => a - b);
    assert.equal(versions, hubMigrations.map((m) => m.version));
    for (const s of stores) await s.close();
    const driver = openSqlDriver(location);
    const ledger = await driver.query('SELECT version FROM hub_migrations ORDER BY version');
    await driver.close();
    assert.equal(ledger.map((r) => Number(r.version)), hubMigrations.map((m) => m.version));
  });

  test(`[${harness.name}] an altered recorded checksum refuses to start and names the migration`, async () => {
    const location = await harness.freshLocation();
    await (await openHubStore(location)).close();
    const driver = openSqlDriver(location);
    await driver.run("UPDATE hub_migrations SET checksum = 'deadbeef' WHERE version = 2");
    await driver.close();
    try {
      await openHubStore(location);
      assert.unreachable('opened despite the altered checksum');
    } catch (error) {
      assert.instance(error, StartupError);
      assert.match((error as Error).message, 'hub migration 2 (bridges)');
    }
  });

  test(`[${harness.name}] a database migrated by a newer release is refused`, async () => {
    const location = await harness.freshLocation();
    await (await openHubStore(location, { migrations: [...hubMigrations, extraMigration] })).close();
    try {
      await openHubStore(location);
      assert.unreachable('opened a newer database');
    } catch (error) {
      assert.match((error as Error).message, `hub migration ${extraMigration.version} (${extraMigration.name}) applied`);
    }
  });

  test(`[${harness.name}] tenants: created once, soft-deleted, restored, due for purge only after purge_after`, async () => {
    const s = await fresh();
    assert.is(await s.ensureTenant('acme', T0), true);
    assert.is(await s.ensureTenant('acme', later(1)), false);
    assert.is((await s.getTenant('acme'))?.created_at, T0);
    assert.is(await s.getTenant('nobody'), undefined);
    assert.is(await s.markTenantDeleted('acme', later(1), later(1000)), true);
    assert.is(await s.markTenantDeleted('acme', later(2), later(2000)), false, 'a second delete does not move the purge date');
    assert.is((await s.getTenant('acme'))?.purge_after, later(1000));
    assert.equal(await s.tenantsDueForPurge(later(999)), []);
    assert.equal(await s.tenantsDueForPurge(later(1000)), ['acme']);
    assert.is(await s.restoreTenant('acme'), true);
    assert.is(await s.restoreTenant('acme'), false);
    assert.equal(await s.tenantsDueForPurge(later(5000)), []);
    assert.is((await s.getTenant('acme'))?.deleted_at, null);
  });

  test(`[${harness.name}] keys are scoped to their tenant and found by lookup with the tenant's deletion mark`, async () => {
    const s = await fresh();
    await s.ensureTenant('a', T0);
    await s.ensureTenant('b', T0);
    await s.insertKey(key('a', 'key_1'));
    await s.insertKey(key('a', 'key_2', 'admin'));
    await s.insertKey(key('b', 'key_3'));
    assert.equal((await s.listKeys('a')).map((k) => k.id), ['key_1', 'key_2']);
    assert.is(await s.getKey('b', 'key_1'), undefined);
    assert.is(await s.countKeys(), 3);
    assert.is(await s.countKeys({ tenantId: 'a' }), 2);
    assert.is(await s.countKeys({ tenantId: 'a', role: 'owner' }), 1);
    assert.is(await s.countKeys({ role: 'admin' }), 1);
    assert.is(await s.deleteKey('b', 'key_1'), false, 'another tenant cannot delete the key');
    const found = await s.keyByLookup('lookupkey_1');
    assert.is(found?.tenant_id, 'a');
    assert.is(found?.tenant_deleted_at, null);
    await s.markTenantDeleted('a', later(1), later(2));
    assert.is((await s.keyByLookup('lookupkey_1'))?.tenant_deleted_at, later(1));
    await s.touchKey('key_1', later(5));
    assert.is((await s.getKey('a', 'key_1'))?.last_used_at, later(5));
    assert.is(await s.deleteKey('a', 'key_1'), true);
    assert.is(await s.keyByLookup('lookupkey_1'), undefined);
    try {
      await s.insertKey({ ...key('a', 'key_9'), key_lookup: 'lookupkey_2' });
      assert.unreachable('duplicate lookup accepted');
    } catch (error) {
      assert.not.instance(error, assert.Assertion);
    }
  });

  test(`[${harness.name}] a setting taken once is gone for the next taker`, async () => {
    const s = await fresh();
    await s.putSetting('setup', 'one');
    await s.putSetting('setup', 'two');
    assert.is(await s.getSetting('setup'), 'two');
    const taken = await Promise.all([s.takeSetting('setup'), s.takeSetting('setup')]);
    assert.equal(taken.filter(Boolean), ['two']);
    assert.is(await s.getSetting('setup'), undefined);
  });

  test(`[${harness.name}] bridge status: a will from an older session or connection never overrides a newer online`, async () => {
    const s = await fresh();
    await s.recordHello('t', 'brg-1', { version: '1.2.0', interfaces: [{ name: 'mesh0' }], at: later(1) });
    assert.is(await s.recordStatus('t', 'brg-1', { state: 'online', session: 2, ts: later(10), at: later(11) }), true);
    // The previous boot's will, delivered late.
    assert.is(await s.recordStatus('t', 'brg-1', { state: 'offline', session: 1, ts: later(5), at: later(12) }), false);
    // Same boot, an earlier connection's will.
    assert.is(await s.recordStatus('t', 'brg-1', { state: 'offline', session: 2, ts: later(3), at: later(13) }), false);
    let [b] = await s.listBridges('t');
    assert.is(b.state, 'online');
    assert.is(b.version, '1.2.0');
    assert.equal(b.interfaces, [{ name: 'mesh0' }]);
    assert.is(b.last_seen, later(11));
    // The will of the current connection (same session, same connection start) takes effect.
    assert.is(await s.recordStatus('t', 'brg-1', { state: 'offline', session: 2, ts: later(10), at: later(20) }), true);
    [b] = await s.listBridges('t');
    assert.is(b.state, 'offline');
    assert.is(b.session, 2);
    assert.is(await s.recordStatus('t', 'brg-1', { state: 'online', session: 3, ts: later(30), at: later(31) }), true);
    await s.touchBridge('t', 'brg-1', later(25));
    [b] = await s.listBridges('t');
    assert.is(b.state, 'online');
    assert.is(b.last_seen, later(31), 'last_seen never moves back');
    assert.equal(await s.listBridges('other'), []);
  });

  test(`[${harness.name}] enrollments: one secret however often asked, verified only with it, revoked once, found in one query`, async () => {
    const s = await fresh();
    const row = (id: string, tenant: string, lookup: string) => ({ id, tenant_id: tenant, name: `bridge ${id}`, token_lookup: lookup, token_hash: 'ab'.repeat(32), secret: null, created_at: later(0), enrolled_at: null, verified_at: null, revoked_at: null });
    await s.insertEnrollment(row('brg_A', 't', 'aaaaaaaaaaaa'));
    await s.insertEnrollment(row('brg_B', 't', 'bbbbbbbbbbbb'));
    await s.insertEnrollment(row('brg_C', 'u', 'cccccccccccc'));
    assert.is((await s.enrollmentByLookup('bbbbbbbbbbbb'))?.id, 'brg_B');
    assert.is(await s.enrollmentByLookup('zzzzzzzzzzzz'), undefined);
    // Two replicas answering one request (same time in it) at the same moment: one secret.
    const [x, y] = await Promise.all([s.enrollmentSecret('brg_A', 'first', later(10), later(1)), s.enrollmentSecret('brg_A', 'second', later(10), later(1))]);
    assert.ok(x === y && (x === 'first' || x === 'second'), `${x} / ${y}`);
    // An older request (handled late, or replayed) keeps it; a newer one makes another.
    assert.is(await s.enrollmentSecret('brg_A', 'older', later(9), later(2)), x);
    assert.is(await s.enrollmentSecret('brg_A', 'newer', later(11), later(2)), 'newer');
    assert.is(await s.enrollmentSecret('brg_A', 'same', later(11), later(2)), 'newer');
    const held = 'newer';
    // Verified only by the secret it holds.
    await s.markEnrollmentVerified('brg_A', 'not-the-secret', later(3));
    let auth = (await s.ingestBridges(['brg_A'])).get('brg_A')!;
    assert.equal({ verified: auth.verified, secret: auth.secretText, tenant: auth.tenantId }, { verified: false, secret: held, tenant: 't' });
    await s.markEnrollmentVerified('brg_A', held, later(3));
    auth = (await s.ingestBridges(['brg_A'])).get('brg_A')!;
    assert.is(auth.verified, true);
    assert.is(await s.enrollmentSecret('brg_A', 'fourth', later(12), later(4)), null, 'spent: no more exchanges');
    // Many ids in one call, unknown ones included.
    const many = await s.ingestBridges(['brg_A', 'brg_B', 'brg_C', 'nope', ...Array.from({ length: 600 }, (_, i) => `forged-${i}`)]);
    assert.equal([many.get('brg_B')?.secret, many.get('brg_C')?.tenantId, many.has('nope'), many.get('nope')], [null, 'u', true, undefined]);
    assert.is(many.size, 604);
    // Revocation: once; another tenant's id is missing; the secret is wiped.
    assert.is(await s.revokeEnrollment('u', 'brg_A', later(5)), 'missing');
    assert.is(await s.revokeEnrollment('t', 'brg_A', later(5)), 'revoked');
    assert.is(await s.revokeEnrollment('t', 'brg_A', later(6)), 'already');
    auth = (await s.ingestBridges(['brg_A'])).get('brg_A')!;
    assert.equal({ revoked: auth.revoked, secret: auth.secret }, { revoked: true, secret: null });
    // Paging by id within the tenant.
    assert.equal((await s.listEnrollments('t', { limit: 1 })).map((r) => r.id), ['brg_A']);
    assert.equal((await s.listEnrollments('t', { afterId: 'brg_A', limit: 5 })).map((r) => r.id), ['brg_B']);
  });

  test(`[${harness.name}] events are stored once per tenant and event_id`, async () => {
    const s = await fresh();
    assert.is(await s.insertEvent('message', event('t', 'evt_1')), true);
    assert.is(await s.insertEvent('message', { ...event('t', 'evt_1'), body: '{"changed":true}' }), false);
    assert.is(await s.insertEvent('message', event('u', 'evt_1')), true, 'another tenant has its own event ids');
    assert.is(await s.insertEvent('position', event('t', 'evt_1')), true, 'each kind has its own table');
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.insertEvent('telemetry', event('t', `evt_${i % 5}`))));
    assert.is(results.filter(Boolean).length, 5);
    assert.is(await s.countEvents('t', 'message'), 1);
    assert.is(await s.countEvents('t', 'telemetry'), 5);
    assert.is((await s.listEvents('t', 'message'))[0].body, event('t', 'evt_1').body);
  });

  test(`[${harness.name}] the catalogue lists tenant tables, withholds secret columns and follows new migrations`, async () => {
    const s = await fresh([...hubMigrations, extraMigration]);
    const tables = await s.tenantTables();
    const names = tables.map((t) => t.name);
    for (const t of ['api_keys', 'bridges', 'deliveries', 'gateway_notes', 'messages', 'positions', 'telemetry', 'tenants']) assert.ok(names.includes(t), t);
    assert.not.ok(names.includes('hub_migrations'));
    assert.not.ok(names.includes('hub_settings'));
    const keys = tables.find((t) => t.name === 'api_keys')!;
    assert.ok(keys.columns.includes('key_hash'));
    assert.not.ok(keys.exportColumns.includes('key_hash'));
    assert.not.ok(keys.exportColumns.includes('key_lookup'));
    assert.equal(tables.find((t) => t.name === 'gateway_notes')!.exportColumns, ['tenant_id', 'note']);
    await s.ensureTenant('t', T0);
    await s.insertKey(key('t', 'key_1'));
    const rows = await s.exportRows(keys, 't');
    assert.is(rows.length, 1);
    assert.is(rows[0].id, 'key_1');
    assert.is(rows[0].key_hash, undefined);
  });

  test(`[${harness.name}] a purge that finds the tenant restored (or not yet due) removes nothing`, async () => {
    const s = await fresh(hubMigrations);
    await s.ensureTenant('back', T0);
    await s.insertKey(key('back', 'key_back'));
    assert.is(await s.purgeTenant('back', '2100-01-01T00:00:00.000Z'), null, 'never deleted');
    await s.markTenantDeleted('back', T0, '2026-02-01T00:00:00.000Z');
    assert.is(await s.purgeTenant('back', '2026-01-15T00:00:00.000Z'), null, 'not due yet');
    assert.ok(await s.restoreTenant('back'));
    assert.is(await s.purgeTenant('back', '2100-01-01T00:00:00.000Z'), null, 'restored meanwhile');
    assert.is((await s.listKeys('back')).length, 1);
  });

  test(`[${harness.name}] purge removes every row of the tenant from every tenant table and nothing else`, async () => {
    const s = await fresh([...hubMigrations, extraMigration]);
    for (const t of ['gone', 'kept']) {
      await s.ensureTenant(t, T0);
      await s.insertKey(key(t, `key_${t}`));
      await s.recordHello(t, 'brg-1', { version: '1', interfaces: [], at: T0 });
      for (const kind of ['message', 'delivery', 'telemetry', 'position'] as const) await s.insertEvent(kind, event(t, `evt_${kind}`));
    }
    await s.putSetting('setup', 'x');
    const removed = (await s.purgeTenant('gone'))!;
    assert.is(removed.api_keys, 1);
    assert.is(removed.messages, 1);
    assert.is(removed.tenants, 1);
    assert.is(removed.gateway_notes, 0);
    assert.is(await s.getTenant('gone'), undefined);
    for (const t of await s.tenantTables()) {
      assert.equal(await s.exportRows(t, 'gone'), [], `${t.name} still has rows`);
    }
    assert.is((await s.listKeys('kept')).length, 1);
    assert.is(await s.countEvents('kept', 'delivery'), 1);
    assert.is(await s.getSetting('setup'), 'x', 'hub tables are not tenant data');
  });
  test(`[${harness.name}] an ingest batch: events once (in the batch and against the table), bridges touched, hello and status in order, all or nothing`, async () => {
    const s = await fresh();
    await s.ensureTenant('t', T0);
    await s.insertEvent('message', event('t', 'old'));
    const ev = (table: 'messages' | 'telemetry', id: string, bridge: string, at: string) =>
      ({ op: 'event', event: { table, tenant_id: 't', event_id: id, bridge_id: bridge, ts: T0, body: `{"event_id":"${id}"}`, received_at: at } }) as const;
    const outcomes = await s.ingestBatch([
      ev('messages', 'a', 'brg-1', later(1)),
      ev('messages', 'old', 'brg-1', later(2)),
      ev('messages', 'a', 'brg-1', later(3)),
      ev('telemetry', 'a', 'brg-2', later(4)),
      { op: 'hello', tenantId: 't', bridgeId: 'brg-3', version: '2.0.0', interfaces: [{ name: 'mesh0' }], at: later(5) },
      { op: 'status', tenantId: 't', bridgeId: 'brg-3', state: 'online', session: 4, ts: later(5), at: later(6) },
      { op: 'status', tenantId: 't', bridgeId: 'brg-3', state: 'offline', session: 3, ts: later(1), at: later(7) },
      ev('messages', 'b', 'brg-1', later(8)),
    ]);
    assert.equal(outcomes, ['stored', 'duplicate', 'duplicate', 'stored', 'stored', 'stored', 'ignored', 'stored']);
    assert.is(await s.countEvents('t', 'message'), 3);
    assert.is(await s.countEvents('t', 'telemetry'), 1);
    const bridges = await s.listBridges('t');
    assert.equal(
      bridges.map((b) => [b.bridge_id, b.last_seen, b.state, b.session, b.version]),
      [
        ['brg-1', later(8), 'unknown', 0, null],
        ['brg-2', later(4), 'unknown', 0, null],
        // An ignored status changes nothing, last_seen included (as recordStatus).
        ['brg-3', later(6), 'online', 4, '2.0.0'],
      ],
    );
    // last_seen never goes back.
    await s.ingestBatch([ev('messages', 'c', 'brg-1', later(0))]);
    assert.is((await s.listBridges('t'))[0].last_seen, later(8));
    // A failing batch leaves nothing behind.
    const unknownTable = { op: 'event', event: { ...ev('messages', 'z', 'brg-9', T0).event, table: 'nope' as 'messages' } } as const;
    let failed = false;
    await s.ingestBatch([ev('messages', 'y', 'brg-9', T0), unknownTable]).catch(() => (failed = true));
    assert.ok(failed, 'a batch with a bad statement fails');
    assert.is(await s.countEvents('t', 'message'), 4);
    assert.equal((await s.listBridges('t')).map((b) => b.bridge_id), ['brg-1', 'brg-2', 'brg-3']);
    assert.is(s.isRowError(new Error('connection refused')), false);
  });
}
