import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bridgeOpenApi } from '../../src/bridge/app.ts';
import { startTestBridge } from '../helpers/bridge.ts';

const CHECKED_IN = join(import.meta.dirname, '..', '..', 'openapi', 'bridge.json');

test('openapi/bridge.json is the generated document (regenerate: npm run openapi)', () => {
  const generated = JSON.stringify(bridgeOpenApi(), null, 2) + '\n';
  const checkedIn = readFileSync(CHECKED_IN, 'utf8');
  assert.ok(generated === checkedIn, 'openapi/bridge.json is stale: run `npm run openapi` and commit the result');
});

test('the document is OpenAPI 3.1 with bearer security and problem+json errors', () => {
  const doc = bridgeOpenApi() as any;
  assert.is(doc.openapi, '3.1.0');
  assert.equal(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer <key>' });
  const create = doc.paths['/api/auth/keys'].post;
  assert.equal(create.security, [{ bearer: [] }]);
  assert.is(create.requestBody.content['application/json'].schema.$ref, '#/components/schemas/CreateKeyRequest');
  assert.is(create.responses['201'].content['application/json'].schema.$ref, '#/components/schemas/KeyCreated');
  assert.is(create.responses['403'].$ref, '#/components/responses/Problem403');
  assert.equal(doc.components.schemas.CreateKeyRequest.required.sort(), ['label', 'role']);
  assert.equal(doc.paths['/api/health'].get.security, [], 'health needs no key');
  const del = doc.paths['/api/auth/keys/{id}'].delete;
  assert.equal(del.parameters, [{ name: 'id', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 100 } }]);
});

test('every $ref in the document resolves', () => {
  const doc = bridgeOpenApi() as any;
  const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
  for (const r of refs) {
    const path = r.slice(8, -1).replace(/^#\//, '').split('/');
    let node = doc;
    for (const p of path) node = node?.[p];
    assert.ok(node, `unresolved ${r}`);
  }
});

test('GET /api/openapi.json serves the same document without a key', async () => {
  const t = await startTestBridge();
  try {
    const r = await t.call('GET', '/api/openapi.json', { key: null });
    assert.is(r.status, 200);
    assert.equal(r.body, bridgeOpenApi());
  } finally {
    await t.stop();
  }
});

test.run();
