import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { bridgeOpenApi } from '../../src/bridge/app.ts';
import { DRIVERS } from '../../src/bearers/drivers.ts';
import { startTestBridge } from '../helpers/bridge.ts';

// The served OpenAPI document describes every kind's interface settings: a schema validator fed
// the document (ajv, independent of the zod schemas it was generated from) accepts each create
// body the docs show and refuses a misspelt setting, per kind, and the bridge agrees with it.

const ROOT = join(import.meta.dirname, '..', '..');
const doc = bridgeOpenApi() as any;

function validator(component: string) {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema({ ...doc, $id: 'bridge.json' });
  return ajv.compile({ $ref: `bridge.json#/components/schemas/${component}` });
}

/** Every `-d '<json>'` body of a command that POSTs to /api/interfaces in README.md and
 *  docs/*.md, except those the text marks as refused (`# 400`). */
function docExamples(): Array<{ where: string; body: Record<string, unknown> }> {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
  const found: Array<{ where: string; body: Record<string, unknown> }> = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/-d\s+'([^']*)'([^\n]*)/g)) {
      const lineStart = text.lastIndexOf('\n', m.index) + 1;
      const command = text.slice(lineStart, m.index) + m[0];
      if (!/\/api\/interfaces(?=[\s'"]|$)/.test(command) || /#\s*4\d\d/.test(m[2])) continue;
      let body: unknown;
      try {
        body = JSON.parse(m[1]);
      } catch {
        continue; // carries shell variables or elisions: not a literal body
      }
      if (typeof body === 'object' && body !== null && 'kind' in body) {
        found.push({ where: `${file}:${text.slice(0, m.index).split('\n').length}`, body: body as Record<string, unknown> });
      }
    }
  }
  return found;
}

/** A schema with its $ref followed, once (a kind's settings are a component of their own). */
function resolve(schema: any): any {
  if (typeof schema?.$ref !== 'string') return schema;
  return schema.$ref.replace(/^#\//, '').split('/').reduce((node: any, key: string) => node?.[key], doc);
}

/** A setting of the kind with one letter dropped: a name its schema does not know. */
function misspelt(kind: string): string {
  const schema = DRIVERS.find((d) => d.kind === kind)!.settings;
  const field = Object.keys((schema as unknown as z.ZodObject).shape)[0];
  return field.slice(0, -2) + field.slice(-1);
}

test('CreateInterface is one variant per kind, each with the settings schema the bridge checks with', () => {
  const variants = doc.components.schemas.CreateInterface.oneOf as any[];
  assert.equal(variants.map((v) => v.properties.kind.const), DRIVERS.map((d) => d.kind));
  for (const d of DRIVERS) {
    const documented = resolve(variants.find((v) => v.properties.kind.const === d.kind).properties.settings);
    const own = z.toJSONSchema(d.settings, { io: 'input', unrepresentable: 'any' }) as any;
    assert.equal(Object.keys(documented.properties ?? {}), Object.keys(own.properties ?? {}), `${d.kind}: settings fields`);
    assert.is(documented.additionalProperties, false, `${d.kind}: unknown settings are refused`);
  }
});

test('stats, health and the detail view name each kind\'s reported values', () => {
  for (const name of ['InterfaceStats', 'InterfaceDetail']) {
    assert.equal((doc.components.schemas[name].oneOf as any[]).map((v) => v.properties.kind.const), DRIVERS.map((d) => d.kind), name);
  }
  const health = doc.components.schemas.InterfaceHealthList.properties.items.items;
  assert.equal((health.oneOf as any[]).map((v) => v.properties.kind.const), DRIVERS.map((d) => d.kind));
});

test('the document accepts every example interface body in the docs and refuses a misspelt setting, per kind; so does the bridge', async () => {
  const examples = docExamples();
  const validate = validator('CreateInterface');
  const validateReplace = validator('ReplaceInterface');
  for (const d of DRIVERS) assert.ok(examples.some((e) => e.body.kind === d.kind), `the docs show no ${d.kind} interface body`);
  const t = await startTestBridge();
  try {
    let n = 0;
    for (const { where, body } of examples) {
      assert.ok(validate(body), `${where}: the document refuses ${JSON.stringify(body)}: ${JSON.stringify(validate.errors)}`);
      // Unbound: what is checked is the body, not a device.
      const created = await t.call('POST', '/api/interfaces', { body: { ...body, name: `doc-${n++}`, device: null } });
      assert.is(created.status, 201, `${where}: the bridge refuses ${JSON.stringify(body)}: ${created.text}`);
      // What GET answers goes back with PUT: the document takes it, and refuses it misspelt.
      const shown = (await t.call('GET', `/api/interfaces/${created.body.id}`)).body;
      assert.ok(validateReplace(shown as object), `${where}: the document refuses the GET body for PUT: ${JSON.stringify(validateReplace.errors)}`);
      assert.not.ok(validateReplace({ ...shown, settings: { ...shown.settings, [misspelt(String(body.kind))]: 1 } }), `${where}: PUT with a misspelt setting`);

      const settings = (body.settings ?? {}) as Record<string, unknown>;
      const wrong = misspelt(String(body.kind));
      const typo = { ...body, settings: { ...settings, [wrong]: 1 } };
      assert.not.ok(validate(typo), `${where}: the document accepts the misspelt setting '${wrong}'`);
      const refused = await t.call('POST', '/api/interfaces', { body: { ...typo, name: `doc-${n++}`, device: null } });
      assert.is(refused.status, 400, `${where}: the bridge accepts the misspelt setting '${wrong}'`);
      assert.ok(refused.body.errors.some((e: { path: string }) => e.path === `body.settings.${wrong}` || e.path === 'body.settings'), refused.text);
    }
  } finally {
    await t.stop();
  }
});

test.run();
