import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { diffConfig } from '../../../src/bridge/config/diff.ts';
import { jsonEqual } from '../../../src/lib/json.ts';

// The pure diff engine behind POST /api/config/diff (docs/api.md 4.4): paths, ops and order.

const exportA = () => ({
  format: 'fieldbridge-config',
  version: 1,
  exported_at: '2026-01-01T00:00:00.000Z',
  bridge: { name: 'ridge-3', timezone: 'UTC' },
  radio: { region: 'EU_868', hop_limit: 3 },
  interfaces: [
    { name: 'mesh', kind: 'meshtastic', settings: { channel: 0 }, transforms: { inbound: [], outbound: [{ type: 'truncate', max_bytes: 200 }] } },
    { name: 'sat', kind: 'iridium', settings: { max_bytes: 340 }, transforms: { inbound: [], outbound: [] } },
  ],
  access_rules: [
    { name: 'sat-alerts', enabled: true, match: { text: { contains: 'SOS' } }, destinations: [{ interface: 'sat', to: 'ops' }] },
    { name: 'store-rest', enabled: true, match: {}, destinations: [] },
  ],
  groups: [{ name: 'ops', members: ['+4512345678', '!a1b2c3d4'] }],
  contacts: [],
});

test('an export against itself, or with only exported_at and key order changed, has no changes', () => {
  assert.equal(diffConfig(exportA(), exportA()), []);
  const later = { ...exportA(), exported_at: '2026-02-02T00:00:00.000Z' };
  assert.equal(diffConfig(exportA(), later), []);
  const reordered = Object.fromEntries(Object.entries(exportA()).reverse());
  reordered.bridge = { timezone: 'UTC', name: 'ridge-3' };
  assert.equal(diffConfig(exportA(), reordered), []);
});

test('editing one rule and one interface reports exactly those paths', () => {
  const after = exportA();
  after.access_rules[0].match = { text: { contains: 'MAYDAY' } };
  after.interfaces[1].settings.max_bytes = 270;
  assert.equal(diffConfig(exportA(), after), [
    { path: 'interfaces[name=sat].settings.max_bytes', op: 'change', from: 340, to: 270 },
    { path: 'access_rules[name=sat-alerts].match.text.contains', op: 'change', from: 'SOS', to: 'MAYDAY' },
  ]);
});

test('named items are matched by name: added, removed, renamed', () => {
  const after = exportA();
  after.groups.push({ name: 'family', members: ['+4511111111'] });
  after.interfaces = after.interfaces.filter((i) => i.name !== 'mesh');
  after.access_rules[1].name = 'store-all';
  assert.equal(diffConfig(exportA(), after), [
    { path: 'interfaces[name=mesh]', op: 'remove', from: exportA().interfaces[0], to: null },
    { path: 'access_rules[name=store-rest]', op: 'remove', from: exportA().access_rules[1], to: null },
    { path: 'access_rules[name=store-all]', op: 'add', from: null, to: after.access_rules[1] },
    { path: 'groups[name=family]', op: 'add', from: null, to: after.groups[1] },
  ]);
});

test('moving named items is one change on the array order; appending is not', () => {
  const swapped = exportA();
  swapped.access_rules.reverse();
  assert.equal(diffConfig(exportA(), swapped), [
    { path: 'access_rules.order', op: 'change', from: ['sat-alerts', 'store-rest'], to: ['store-rest', 'sat-alerts'] },
  ]);
  const inserted = exportA();
  const rule = { name: 'first', enabled: false, match: {}, destinations: [] };
  inserted.access_rules.unshift(rule);
  assert.equal(diffConfig(exportA(), inserted), [
    { path: 'access_rules[name=first]', op: 'add', from: null, to: rule },
    { path: 'access_rules.order', op: 'change', from: ['sat-alerts', 'store-rest'], to: ['first', 'sat-alerts', 'store-rest'] },
  ]);
  const appended = exportA();
  appended.access_rules.push(rule);
  assert.equal(diffConfig(exportA(), appended).map((c) => c.path), ['access_rules[name=first]']);
  // Removing one item does not reorder the rest.
  const removed = exportA();
  removed.access_rules.shift();
  assert.equal(diffConfig(exportA(), removed).map((c) => c.op), ['remove']);
});

test('other arrays are compared by index', () => {
  const after = exportA();
  after.groups[0].members = ['+4512345678', '!deadbeef', '+4599999999'];
  after.interfaces[0].transforms.outbound = [];
  assert.equal(diffConfig(exportA(), after), [
    { path: 'interfaces[name=mesh].transforms.outbound[0]', op: 'remove', from: { type: 'truncate', max_bytes: 200 }, to: null },
    { path: 'groups[name=ops].members[1]', op: 'change', from: '!a1b2c3d4', to: '!deadbeef' },
    { path: 'groups[name=ops].members[2]', op: 'add', from: null, to: '+4599999999' },
  ]);
  // Duplicate names or an item without a name: the array is not "named".
  assert.equal(diffConfig({ l: [{ name: 'a' }, { name: 'a' }] }, { l: [{ name: 'a' }, { name: 'b' }] }), [
    { path: 'l[1].name', op: 'change', from: 'a', to: 'b' },
  ]);
  assert.equal(diffConfig({ l: [{ name: 'a' }, { id: 1 }] }, { l: [{ id: 1 }, { name: 'a' }] }).map((c) => `${c.op} ${c.path}`), [
    'remove l[0].name',
    'add l[0].id',
    'remove l[1].id',
    'add l[1].name',
  ]);
});

test('type changes, nulls, added and removed keys, and odd names and keys', () => {
  const before = { hub: { password: null, tenant: 't1', old: 1 }, x: [1], 'odd key': 1, items: [{ name: 'my radio' }, { name: 'a]b' }] };
  const after = { hub: { password: 'pw', tenant: { id: 't1' }, added: true }, x: 'one', 'odd key': 2, items: [{ name: 'my radio', on: true }, { name: 'a]b' }] };
  assert.equal(diffConfig(before, after), [
    { path: 'hub.password', op: 'change', from: null, to: 'pw' },
    { path: 'hub.tenant', op: 'change', from: 't1', to: { id: 't1' } },
    { path: 'hub.old', op: 'remove', from: 1, to: null },
    { path: 'x', op: 'change', from: [1], to: 'one' },
    { path: '["odd key"]', op: 'change', from: 1, to: 2 },
    { path: 'items[name="my radio"].on', op: 'add', from: null, to: true },
    { path: 'hub.added', op: 'add', from: null, to: true },
  ].sort((p, q) => order(p.path) - order(q.path)));
  function order(path: string): number {
    return ['hub.password', 'hub.tenant', 'hub.old', 'hub.added', 'x', '["odd key"]', 'items[name="my radio"].on'].indexOf(path);
  }
});

test('whole documents that are not objects, and a missing side', () => {
  assert.equal(diffConfig(1, 2), [{ path: '', op: 'change', from: 1, to: 2 }]);
  assert.equal(diffConfig({}, { a: 1 }), [{ path: 'a', op: 'add', from: null, to: 1 }]);
  assert.equal(diffConfig({ exported_at: 'x', a: { exported_at: 1 } }, { a: { exported_at: 2 } }), [
    { path: 'a.exported_at', op: 'change', from: 1, to: 2 },
  ]);
  assert.equal(diffConfig({ l: [] }, { l: [] }), []);
});

test('the output is the same on every run (stable order) and the inputs are not modified', () => {
  const a = exportA();
  const b = exportA();
  b.access_rules.reverse();
  b.bridge.name = 'other';
  const snapshot = JSON.stringify([a, b]);
  const first = diffConfig(a, b);
  assert.equal(diffConfig(a, b), first);
  assert.is(JSON.stringify([a, b]), snapshot);
});

test('jsonEqual ignores key order but not array order', () => {
  assert.ok(jsonEqual({ a: 1, b: [1, { c: 2, d: 3 }] }, { b: [1, { d: 3, c: 2 }], a: 1 }));
  assert.not.ok(jsonEqual([1, 2], [2, 1]));
  assert.not.ok(jsonEqual({ a: 1 }, { a: 1, b: 2 }));
  assert.not.ok(jsonEqual(null, {}));
  assert.not.ok(jsonEqual([], {}));
});

test.run();
