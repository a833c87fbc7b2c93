import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
});
test.after(async () => {
  await t.stop();
});

test('first start writes owner.key with mode 0600 and logs only its path', () => {
  const file = join(t.dir, 'owner.key');
  assert.is(statSync(file).mode & 0o777, 0o600);
  assert.match(readFileSync(file, 'utf8'), /^fbb_[a-z2-9]{12}_[A-Za-z0-9_-]{43}\n$/);
  const line = t.logs.map((l) => JSON.parse(l)).find((l) => l.event === 'owner_key_created');
  assert.is(line.path, file);
  assert.not.ok(t.logs.join('').includes(t.ownerKey));
});

test('the secret appears once: in the creation response, never in the list or the database', async () => {
  const created = await t.call('POST', '/api/auth/keys', { body: { label: 'ops laptop', role: 'admin' } });
  assert.is(created.status, 201);
  assert.equal(Object.keys(created.body).sort(), ['created_at', 'id', 'key', 'label', 'role']);
  assert.match(created.body.key, /^fbb_/);
  const list = await t.call('GET', '/api/auth/keys');
  assert.is(list.status, 200);
  assert.not.ok(list.text.includes(created.body.key));
  assert.ok(list.body.items.some((k: { id: string }) => k.id === created.body.id));
  assert.not.ok(list.body.items.some((k: Record<string, unknown>) => 'key' in k || 'hash' in k));
  const db = new DatabaseSync(t.dbPath, { readOnly: true });
  const rows = db.prepare('SELECT * FROM api_keys').all();
  db.close();
  const dump = JSON.stringify(rows);
  assert.not.ok(dump.includes(created.body.key), 'the database holds only hashes');
  assert.not.ok(dump.includes(t.ownerKey));
  assert.match(dump, /"hash":"[0-9a-f]{64}"/);
});

test('roles: admin may write but not manage keys; viewer may only read', async () => {
  const admin = (await t.call('POST', '/api/auth/keys', { body: { label: 'a', role: 'admin' } })).body.key;
  const viewer = (await t.call('POST', '/api/auth/keys', { body: { label: 'v', role: 'viewer' } })).body.key;
  assert.is((await t.call('GET', '/api/auth/keys', { key: admin })).status, 403);
  assert.is((await t.call('POST', '/api/auth/keys', { key: admin, body: { label: 'x', role: 'viewer' } })).status, 403);
  assert.is((await t.call('GET', '/api/auth/keys', { key: viewer })).status, 403);
  assert.is((await t.call('GET', '/metrics', { key: viewer })).status, 200);
  assert.is((await t.call('GET', '/metrics', { key: admin })).status, 200);
});

test('a deleted key stops working at once', async () => {
  const created = (await t.call('POST', '/api/auth/keys', { body: { label: 'temp', role: 'viewer' } })).body;
  assert.is((await t.call('GET', '/metrics', { key: created.key })).status, 200);
  assert.is((await t.call('DELETE', `/api/auth/keys/${created.id}`)).status, 204);
  assert.is((await t.call('GET', '/metrics', { key: created.key })).status, 401);
  assert.is((await t.call('DELETE', `/api/auth/keys/${created.id}`)).status, 404);
});

test('a key with a correct lookup part but a wrong secret is refused', async () => {
  const created = (await t.call('POST', '/api/auth/keys', { body: { label: 'x', role: 'admin' } })).body;
  const forged = created.key.slice(0, -1) + (created.key.endsWith('A') ? 'B' : 'A');
  assert.is((await t.call('GET', '/metrics', { key: forged })).status, 401);
});


test('last_used_at is recorded when a key is used', async () => {
  const created = (await t.call('POST', '/api/auth/keys', { body: { label: 'used', role: 'viewer' } })).body;
  await t.call('GET', '/metrics', { key: created.key });
  const owner = (await t.call('POST', '/api/auth/keys', { body: { label: 'o3', role: 'owner' } })).body.key;
  const items = (await t.call('GET', '/api/auth/keys', { key: owner })).body.items as Array<{ id: string; last_used_at: string | null }>;
  assert.ok(items.find((k) => k.id === created.id)?.last_used_at);
});

test('the last owner key cannot be deleted (409); with a second owner it can', async () => {
  const list = (await t.call('GET', '/api/auth/keys')).body.items as Array<{ id: string; role: string }>;
  const owners = list.filter((k) => k.role === 'owner');
  // Down to one owner key: the original (an earlier test made another; remove it first).
  for (const extra of owners.slice(1)) assert.is((await t.call('DELETE', `/api/auth/keys/${extra.id}`)).status, 204);
  const refused = await t.call('DELETE', `/api/auth/keys/${owners[0].id}`);
  assert.is(refused.status, 409);
  assert.match(refused.body.detail, /last owner key/);
  const second = (await t.call('POST', '/api/auth/keys', { body: { label: 'owner 2', role: 'owner' } })).body;
  assert.is((await t.call('DELETE', `/api/auth/keys/${owners[0].id}`, { key: second.key })).status, 204);
  assert.is((await t.call('GET', '/api/auth/keys', { key: t.ownerKey })).status, 401);
  assert.is((await t.call('GET', '/api/auth/keys', { key: second.key })).status, 200);
});

test.run();
