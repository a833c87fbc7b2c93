import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hubOpenApi, serializeOpenApi } from '../../../src/hub/system/openapi.ts';
import { startTestHub } from '../helper.ts';

// Issue 15 item 5: the hub's OpenAPI document is generated, served, checked in and tested for
// staleness like the bridge's (test/http/openapi.test.ts).

const CHECKED_IN = join(import.meta.dirname, '..', '..', '..', 'openapi', 'hub.json');

test('openapi/hub.json is the generated document (regenerate: npm run openapi)', async () => {
  const generated = serializeOpenApi(await hubOpenApi());
  const checkedIn = readFileSync(CHECKED_IN, 'utf8');
  assert.ok(generated === checkedIn, 'openapi/hub.json is stale: run `npm run openapi` and commit the result');
});

test('GET /api/openapi.json serves the generated document, without a key', async () => {
  const h = await startTestHub();
  try {
    const r = await h.call('GET', '/api/openapi.json', { key: null });
    assert.is(r.status, 200);
    assert.equal(r.body, await hubOpenApi());
  } finally {
    await h.stop();
  }
});

test('the document is OpenAPI 3.1 with every hub route, bearer security and resolvable $refs', async () => {
  const doc = (await hubOpenApi()) as any;
  assert.is(doc.openapi, '3.1.0');
  assert.is(doc.info.title, 'fieldbridge Hub API');
  const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${path}`)).sort();
  assert.equal(routes, [
    'DELETE /api/auth/keys/{id}', 'DELETE /api/bridges/{id}',
    'DELETE /api/tenant',
    'GET /',
    'GET /api/auth/keys', 'GET /api/bridges',
    'GET /api/devices',
    'GET /api/health',
    'GET /api/openapi.json',
    'GET /api/positions', 'GET /api/positions/geojson',
    'GET /api/tenant/export',
    'GET /metrics',
    'POST /api/auth/keys', 'POST /api/bridges',
    'POST /api/setup',
    'POST /api/tenant/restore',
  ]);
  assert.equal(doc.paths['/api/devices'].get.security, [{ bearer: [] }]);
  assert.equal(doc.paths['/api/health'].get.security, [], 'health needs no key');
  const params = doc.paths['/api/devices'].get.parameters.map((p: { name: string; in: string }) => `${p.in}.${p.name}`).sort();
  assert.equal(params, ['query.cursor', 'query.limit'], 'the device list is paged');
  const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
  for (const r of refs) {
    let node = doc;
    for (const p of r.slice(8, -1).replace(/^#\//, '').split('/')) node = node?.[p];
    assert.ok(node, `unresolved ${r}`);
  }
});

test.run();
