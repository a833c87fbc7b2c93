import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { NodeReport } from '../../../src/bearers/bearer.ts';
import { openBridgeDatabase } from '../../../src/bridge/app.ts';
import { NodeIdentity } from '../../../src/bridge/engine/node-identity.ts';
import { NodeStore } from '../../../src/bridge/engine/node-store.ts';

// The node table follows a node by its public key (engine/node-identity.ts, node-store.ts):
// a known key under a new id moves the node and records the old id; a second key claiming an id
// is refused; a board's stale entry of the old id does not move the node back; an old id
// another key takes over stops naming the node. On a real database.

const KEY_A = Buffer.alloc(32, 0xa1).toString('base64');
const KEY_B = Buffer.alloc(32, 0xb2).toString('base64');
const AT = '2026-11-28T10:00:00.000Z';

let dir: string;
let db: DatabaseSync;
let store: NodeStore;
test.before.each(() => {
  dir = mkdtempSync(join(tmpdir(), 'fb-node-identity-'));
  db = openBridgeDatabase(join(dir, 'b.db'));
  store = new NodeStore(db, new NodeIdentity(db));
});
test.after.each(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const report = (id: string, extra: Partial<NodeReport> = {}): NodeReport => ({ id, num: parseInt(id.slice(1), 16), ...extra });

test('a known key under a new id: the row moves with what it knew, the old id is recorded and resolves to the new one', () => {
  assert.is(store.upsert('ifc_1', report('!0badcafe', { public_key: KEY_A, long_name: 'Field', position: { latitude: 46.3, longitude: 7.4 }, last_heard_at: '2026-11-28T09:00:00.000Z' }), AT), null);
  const change = store.upsert('ifc_1', report('!7620f4a0', { public_key: KEY_A, short_name: 'FLD', last_heard_at: '2026-11-28T09:30:00.000Z' }), AT);
  assert.equal(change, { type: 'renumbered', network: 'meshtastic', former_id: '!0badcafe', node_id: '!7620f4a0', public_key: KEY_A, at: AT });
  const row = store.get('!7620f4a0')!;
  assert.is(row.long_name, 'Field');
  assert.is(row.short_name, 'FLD');
  assert.is(row.num, 0x7620f4a0);
  assert.equal(row.position, { latitude: 46.3, longitude: 7.4 });
  assert.is(row.last_heard_at, '2026-11-28T09:30:00.000Z');
  assert.is(store.get('!0badcafe')?.node_id, '!7620f4a0', 'the old id finds the node');
  assert.equal(store.list({}, 10).map((r) => r.node_id), ['!7620f4a0']);
  assert.equal(store.identity.formerIds('!7620f4a0'), [{ id: '!0badcafe', changed_at: AT }]);
  // Every spelling of the old number, and the key, name the node now.
  for (const a of ['!0badcafe', '!BADCAFE', '0xbadcafe', String(0x0badcafe), KEY_A]) assert.is(store.identity.current(a), '!7620f4a0', a);
  assert.is(store.identity.current('!12345678'), '!12345678', 'others are given back as they are');
  assert.is(store.identity.current('+491511234567'), '+491511234567');
  assert.is(store.identity.current(KEY_B), null, 'a key no node has');
});

test('the new id already had a row (heard before its NodeInfo): the rows merge, the newer facts win', () => {
  store.upsert('ifc_1', report('!0badcafe', { public_key: KEY_A, long_name: 'Field', hw_model: '9', last_heard_at: '2026-11-28T09:00:00.000Z' }), AT);
  store.upsert('ifc_1', report('!7620f4a0', { snr_db: 5, last_heard_at: '2026-11-28T09:40:00.000Z' }), AT);
  const change = store.upsert('ifc_1', report('!7620f4a0', { public_key: KEY_A, long_name: 'Field 2.8' }), AT);
  assert.is(change?.type, 'renumbered');
  const row = store.get('!7620f4a0')!;
  assert.equal([row.long_name, row.hw_model, row.snr_db, row.public_key, row.last_heard_at], ['Field 2.8', '9', 5, KEY_A, '2026-11-28T09:40:00.000Z']);
  assert.is(store.list({}, 10).length, 1);
});

test('chains stay flat: a node renumbered twice is reached from both old ids; coming back to an old id drops that alias', () => {
  store.upsert('ifc_1', report('!00000001', { public_key: KEY_A, last_heard_at: '2026-11-28T09:00:00.000Z' }), AT);
  store.upsert('ifc_1', report('!00000002', { public_key: KEY_A, last_heard_at: '2026-11-28T09:10:00.000Z' }), AT);
  store.upsert('ifc_1', report('!00000003', { public_key: KEY_A, last_heard_at: '2026-11-28T09:20:00.000Z' }), AT);
  assert.is(store.identity.current('!00000001'), '!00000003');
  assert.is(store.identity.current('!00000002'), '!00000003');
  // Back to the first number (a downgrade), heard later than anything before.
  const back = store.upsert('ifc_1', report('!00000001', { public_key: KEY_A, last_heard_at: '2026-11-28T09:30:00.000Z' }), AT);
  assert.equal([back?.type, back && 'former_id' in back && back.former_id], ['renumbered', '!00000003']);
  assert.is(store.identity.current('!00000001'), '!00000001');
  assert.is(store.identity.current('!00000003'), '!00000001');
  assert.equal(store.identity.formerIds('!00000001').map((f) => f.id), ['!00000002', '!00000003']);
});

test('a board still listing the node under its old number (an older entry) does not move it back', () => {
  store.upsert('ifc_1', report('!0badcafe', { public_key: KEY_A, last_heard_at: '2026-11-28T09:00:00.000Z' }), AT);
  store.upsert('ifc_1', report('!7620f4a0', { public_key: KEY_A, last_heard_at: '2026-11-28T09:30:00.000Z' }), AT);
  assert.is(store.upsert('ifc_2', report('!0badcafe', { public_key: KEY_A, long_name: 'stale', last_heard_at: '2026-11-28T09:00:00.000Z' }), AT), null);
  assert.equal(store.list({}, 10).map((r) => [r.node_id, r.long_name]), [['!7620f4a0', null]]);
  assert.is(store.identity.current('!0badcafe'), '!7620f4a0');
});

test('two nodes claim one number: the first key keeps it, the second\'s report is refused and said', () => {
  store.upsert('ifc_1', report('!0badcafe', { public_key: KEY_A, long_name: 'First' }), AT);
  const change = store.upsert('ifc_1', report('!0badcafe', { public_key: KEY_B, long_name: 'Impostor' }), AT);
  assert.equal(change, { type: 'key_conflict', network: 'meshtastic', node_id: '!0badcafe', known_key: KEY_A, claimed_key: KEY_B, at: AT });
  const row = store.get('!0badcafe')!;
  assert.equal([row.long_name, row.public_key], ['First', KEY_A]);
  // A report without a key (a text heard from the number) is stored.
  assert.is(store.upsert('ifc_1', report('!0badcafe', { snr_db: 3 }), AT), null);
  assert.is(store.get('!0badcafe')!.snr_db, 3);
});

test('an old id that another key takes over no longer names the renumbered node', () => {
  store.upsert('ifc_1', report('!0badcafe', { public_key: KEY_A, last_heard_at: '2026-11-28T09:00:00.000Z' }), AT);
  store.upsert('ifc_1', report('!7620f4a0', { public_key: KEY_A, last_heard_at: '2026-11-28T09:30:00.000Z' }), AT);
  assert.is(store.identity.current('!0badcafe'), '!7620f4a0');
  assert.is(store.upsert('ifc_1', report('!0badcafe', { public_key: KEY_B, long_name: 'Newcomer' }), AT), null);
  assert.is(store.identity.current('!0badcafe'), '!0badcafe');
  assert.equal(store.list({}, 10).map((r) => [r.node_id, r.public_key]), [['!0badcafe', KEY_B], ['!7620f4a0', KEY_A]]);
  assert.equal(store.identity.formerIds('!7620f4a0'), []);
});

test('the aliases survive a restart (read from the database)', () => {
  store.upsert('ifc_1', report('!0badcafe', { public_key: KEY_A }), AT);
  store.upsert('ifc_1', report('!7620f4a0', { public_key: KEY_A }), AT);
  const again = new NodeStore(db, new NodeIdentity(db));
  assert.is(again.identity.current('!0badcafe'), '!7620f4a0');
});

test.run();
