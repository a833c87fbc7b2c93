import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { MAX_UNSPECIFIED_SETTINGS_DEPTH, unspecifiedSettings } from '../../../src/bearers/driver-module.ts';
import { DRIVERS } from '../../../src/bearers/drivers.ts';
import { sortKeysDeep, TOO_DEEP_MARKER } from '../../../src/bridge/config/export.ts';
import { jsonDepth } from '../../../src/lib/json.ts';
import { startTestBridge } from '../../helpers/bridge.ts';

// Issue 14, item 2: the export never recurses without bound, and no settings schema takes
// arbitrarily nested values. (Request bodies: test/http/body.test.ts.)

/** JSON text nested `depth` arrays deep, built without JSON.stringify (which would overflow). */
const deepText = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

test('sortKeysDeep sorts keys at every level without recursion, and cuts what is deeper than its bound', () => {
  assert.equal(JSON.stringify(sortKeysDeep({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } }, 10)), '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}');
  const deep = JSON.parse(deepText(200_000));
  const cut = sortKeysDeep({ x: deep }, 5) as { x: unknown[][][][] };
  assert.equal(cut.x[0][0][0], [TOO_DEEP_MARKER], 'level 5 is the last kept');
  assert.is(jsonDepth(cut), 5);
  assert.not.throws(() => JSON.stringify(cut));
});

test('jsonDepth counts without recursion and stops early', () => {
  assert.is(jsonDepth(1), 0);
  assert.is(jsonDepth({ a: [1, { b: [] }] }), 4);
  const deep = JSON.parse(deepText(200_000));
  assert.is(jsonDepth(deep), 200_000);
  assert.is(jsonDepth(deep, 10), 11, 'stops once past the bound');
});

test('every kind this release lists has a strict settings schema: no settings take arbitrary nested values', () => {
  for (const d of DRIVERS) {
    assert.instance(d.settings, z.ZodObject, `${d.kind}: an object schema`);
    const extra = d.settings.safeParse({ nested: { a: [{ b: 1 }] } });
    assert.not.ok(extra.success, `${d.kind}: an unknown field is refused`);
    assert.ok(extra.error!.issues.some((i) => i.code === 'unrecognized_keys'), `${d.kind}: ${JSON.stringify(extra.error!.issues)}`);
  }
});

test('settings of a kind without a schema of its own nest at most 8 levels', () => {
  const nest = (n: number): unknown => (n === 0 ? 1 : { a: nest(n - 1) });
  assert.ok(unspecifiedSettings.safeParse(nest(MAX_UNSPECIFIED_SETTINGS_DEPTH)).success);
  const r = unspecifiedSettings.safeParse(nest(MAX_UNSPECIFIED_SETTINGS_DEPTH + 1));
  assert.not.ok(r.success);
  assert.match(r.error!.issues[0].message, /at most 8 levels/);
  assert.not.ok(unspecifiedSettings.safeParse({ x: JSON.parse(deepText(100_000)) }).success, 'a deep value is refused, not walked');
});

test('a deeply nested value stored by an older release is exported (and shown) with the marker, not a 500', async () => {
  const t = await startTestBridge();
  try {
    const created = await t.call('POST', '/api/interfaces', { body: { name: 'old', kind: 'sms', settings: {} } });
    assert.is(created.status, 201, created.text);
    // 5,000 levels: more than JSON.stringify can write back out.
    t.bridge.services.db.prepare('UPDATE interfaces SET settings = ? WHERE id = ?').run(`{"legacy":${deepText(5000)}}`, created.body.id);
    const exported = await t.call('GET', '/api/config/export?secrets=include');
    assert.is(exported.status, 200, exported.text.slice(0, 300));
    const entry = JSON.parse(exported.text).interfaces.find((i: { name: string }) => i.name === 'old');
    assert.ok(jsonDepth(entry.settings) <= 29, 'the settings fit in a file the import takes (32 levels)');
    assert.match(JSON.stringify(entry.settings.legacy), /not exported/);
    const redacted = await t.call('GET', '/api/config/export');
    assert.is(redacted.status, 200);
    assert.is(JSON.parse(redacted.text).interfaces.find((i: { name: string }) => i.name === 'old').settings.legacy, '<redacted>', 'a field the schema does not know is redacted');
    const one = await t.call('GET', '/api/interfaces/old');
    assert.is(one.status, 200, one.text.slice(0, 300));
  } finally {
    await t.stop();
  }
});

test.run();
