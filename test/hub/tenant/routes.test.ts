import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hashKey, keyLookup } from '../../../src/auth/secrets.ts';
import { hubMigrations } from '../../../src/hub/migrations.ts';
import { HUB_KEY_PREFIX } from '../../../src/hub/keys/service.ts';
import { PURGE_CHECK_MS, SOFT_DELETE_MS } from '../../../src/hub/tenant/service.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { extraMigration } from '../store-conformance.ts';
import { startTestHub, type TestHub } from '../helper.ts';

const CREDENTIAL = 'sms-provider-password-7f3a9c';
const BRIDGE_SECRET = 'c2VjcmV0LW9mLXRoZS1icmlkZ2UtMzItYnl0ZXMtbG9uZw';
let h: TestHub;
let clock: FakeClock;
test.before.each(async () => {
  clock = new FakeClock();
  // A table a later migration adds, with a credential column: export and purge must find it.
  h = await startTestHub({ clock, storeOptions: { migrations: [...hubMigrations, extraMigration] } });
});
test.after.each(async () => {
  await h.stop();
});

async function seed(tenant: string) {
  const store = h.hub.store;
  await store.ensureTenant(tenant, new Date(clock.now()).toISOString());
  await store.recordHello(tenant, 'brg-1', { version: '0.1.0', interfaces: [{ name: 'mesh0' }], at: new Date(clock.now()).toISOString() });
  for (const kind of ['message', 'delivery', 'telemetry', 'position'] as const) {
    await store.insertEvent(kind, { tenant_id: tenant, event_id: `evt_${tenant}_${kind}`, bridge_id: 'brg-1', ts: '2026-01-01T00:00:00.000Z', body: '{"x":1}', received_at: '2026-01-01T00:00:00.000Z' });
  }
}

async function rowCounts(tenant: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of await h.hub.store.tenantTables()) out[t.name] = (await h.hub.store.exportRows(t, tenant)).length;
  return out;
}

test('the export is a ZIP with one JSON file per tenant table, a new table included, no secret anywhere', async () => {
  await seed('default');
  const admin = (await h.call('POST', '/api/auth/keys', { body: { label: 'a', role: 'admin' } })).body.key;
  const enrolled = (await h.call('POST', '/api/bridges', { key: admin, body: { name: 'roof' } })).body;
  await h.hub.store.enrollmentSecret(enrolled.id, BRIDGE_SECRET, new Date(clock.now()).toISOString(), new Date(clock.now()).toISOString());
  const sqlite = (await import('node:sqlite')).DatabaseSync;
  const db = new sqlite(join(h.dir, 'hub.db'));
  db.prepare('INSERT INTO gateway_notes (tenant_id, note, provider_credential) VALUES (?, ?, ?)').run('default', 'roof antenna', CREDENTIAL);
  db.prepare('INSERT INTO gateway_notes (tenant_id, note, provider_credential) VALUES (?, ?, ?)').run('other', 'not ours', 'x');
  db.close();

  const res = await h.call('GET', '/api/tenant/export', { key: admin });
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-type'), 'application/zip');
  assert.match(res.headers.get('content-disposition') ?? '', /attachment; filename="fieldbridge-hub-default-2026-01-01\.zip"/);
  const file = join(h.dir, 'export.zip');
  writeFileSync(file, res.bytes);
  const names = execFileSync('unzip', ['-Z1', file], { encoding: 'utf8' }).trim().split('\n').sort();
  assert.equal(names, ['api_keys.json', 'bridge_seqs.json', 'bridges.json', 'deliveries.json', 'enrolled_bridges.json', 'gateway_notes.json', 'messages.json', 'positions.json', 'telemetry.json', 'tenants.json']);
  const read = (name: string) => JSON.parse(execFileSync('unzip', ['-p', file, name], { encoding: 'utf8' }));
  assert.equal(read('gateway_notes.json'), [{ tenant_id: 'default', note: 'roof antenna' }]);
  assert.is(read('api_keys.json').length, 2);
  assert.equal(Object.keys(read('api_keys.json')[0]).sort(), ['created_at', 'id', 'label', 'last_used_at', 'role', 'tenant_id']);
  assert.is(read('messages.json')[0].event_id, 'evt_default_message');
  // An enrolled bridge: its name and dates, never its token or its signing secret.
  assert.equal(Object.keys(read('enrolled_bridges.json')[0]).sort(), ['created_at', 'enrolled_at', 'id', 'name', 'request_ts', 'revoked_at', 'tenant_id', 'verified_at']);
  assert.is(read('tenants.json')[0].id, 'default');

  // Search the archive: the raw bytes and every file's inflated content.
  const everything = res.bytes.toString('latin1') + execFileSync('unzip', ['-p', file], { encoding: 'latin1' });
  for (const key of [h.ownerKey, admin]) {
    for (const secret of [key, hashKey(key), keyLookup(HUB_KEY_PREFIX, key)!]) assert.not.ok(everything.includes(secret), `found ${secret.slice(0, 8)}...`);
  }
  assert.not.ok(everything.includes(CREDENTIAL));
  for (const secret of [enrolled.token, hashKey(enrolled.token), BRIDGE_SECRET]) assert.not.ok(everything.includes(secret), `found ${secret.slice(0, 8)}...`);
  assert.not.ok(everything.includes('not ours'), 'another tenant\'s rows');
});

test('DELETE /api/tenant: keys fail at once, rows stay until the purge 30 days later, then are gone', async () => {
  await seed('default');
  await seed('acme');
  const admin = (await h.call('POST', '/api/auth/keys', { body: { label: 'a', role: 'admin' } })).body.key;
  assert.is((await h.call('DELETE', '/api/tenant', { key: admin })).status, 403, 'an admin may not delete the tenant');
  const del = await h.call('DELETE', '/api/tenant');
  assert.is(del.status, 202);
  assert.is(del.body.purge_after, new Date(clock.now() + SOFT_DELETE_MS).toISOString());
  for (const key of [h.ownerKey, admin]) assert.is((await h.call('GET', '/api/devices', { key })).status, 401);
  assert.is((await h.call('GET', '/api/tenant/export')).status, 401);
  const before = await rowCounts('default');
  assert.is(before.messages, 1);
  assert.is(before.api_keys, 2);

  clock.advance(SOFT_DELETE_MS - PURGE_CHECK_MS);
  await h.hub.purgeJob.idle();
  assert.equal(await rowCounts('default'), before, 'nothing purged before 30 days');

  clock.advance(PURGE_CHECK_MS);
  await h.hub.purgeJob.idle();
  const after = await rowCounts('default');
  for (const [table, n] of Object.entries(after)) assert.is(n, 0, `${table} still has rows`);
  assert.is((await rowCounts('acme')).messages, 1, 'other tenants keep their rows');
  assert.is((await h.call('POST', '/api/tenant/restore')).status, 401, 'after the purge there is nothing to restore');
});

test('POST /api/tenant/restore with an owner key undoes the deletion; other keys and calls stay refused meanwhile', async () => {
  await seed('default');
  const admin = (await h.call('POST', '/api/auth/keys', { body: { label: 'a', role: 'admin' } })).body.key;
  assert.is((await h.call('DELETE', '/api/tenant')).status, 202);
  const again = await h.call('DELETE', '/api/tenant');
  assert.is(again.status, 401, 'the deleted tenant\'s owner key works only for restore');
  assert.is((await h.call('POST', '/api/tenant/restore', { key: admin })).status, 401);
  assert.is((await h.call('GET', '/api/auth/keys')).status, 401);
  const restored = await h.call('POST', '/api/tenant/restore');
  assert.is(restored.status, 200);
  assert.equal(restored.body, { id: 'default', restored: true });
  assert.is((await h.call('GET', '/api/devices', { key: admin })).status, 200);
  clock.advance(SOFT_DELETE_MS + PURGE_CHECK_MS);
  await h.hub.purgeJob.idle();
  assert.is((await rowCounts('default')).messages, 1, 'a restored tenant is not purged');
  assert.equal((await h.call('POST', '/api/tenant/restore')).body, { id: 'default', restored: false });
});

test.run();
