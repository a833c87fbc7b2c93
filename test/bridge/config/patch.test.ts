import { z } from 'zod';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mergePatch, patchSchema } from '../../../src/bridge/config/patch.ts';

const Schema = z.strictObject({
  a: z.number().default(1).describe('the a'),
  nested: z.strictObject({ x: z.string().default('x'), y: z.boolean().default(false) }).prefault({}),
  list: z.array(z.string()).default([]),
}).superRefine((v, ctx) => {
  if (v.a === 99) ctx.addIssue({ code: 'custom', path: ['a'], message: 'not 99' });
});

test('a patch schema has no defaults, every field optional, nested too, and stays strict', () => {
  const patch = patchSchema(Schema);
  assert.equal(patch.parse({}), {});
  assert.equal(patch.parse({ nested: { y: true } }), { nested: { y: true } });
  assert.not.ok(patch.safeParse({ a: 'one' }).success);
  assert.not.ok(patch.safeParse({ nested: { z: 1 } }).success);
  assert.not.ok(patch.safeParse({ b: 1 }).success);
  assert.ok(patch.safeParse({ a: 99 }).success, 'object-level rules run on the merged value, not here');
  const json = z.toJSONSchema(patch) as { properties: Record<string, { description?: string }> };
  assert.is(json.properties.a.description, 'the a', 'descriptions survive for the OpenAPI document');
});

test('merging: objects field by field, arrays and null replace, undefined keeps', () => {
  const current = Schema.parse({ list: ['p', 'q'] });
  assert.equal(mergePatch(current, { nested: { y: true } }), { a: 1, nested: { x: 'x', y: true }, list: ['p', 'q'] });
  assert.equal(mergePatch(current, { list: ['r'], a: undefined }), { a: 1, nested: { x: 'x', y: false }, list: ['r'] });
  assert.equal(mergePatch({ p: 'secret' }, { p: null }), { p: null });
  assert.equal(mergePatch(current, undefined), current);
  assert.equal(mergePatch(current, [1]), [1]);
  assert.equal(current, { a: 1, nested: { x: 'x', y: false }, list: ['p', 'q'] }, 'the current value is not modified');
});

test.run();
