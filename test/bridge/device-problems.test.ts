import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { DeviceError } from '../../src/bearers/device-error.ts';
import { deviceProblem } from '../../src/bridge/device-problems.ts';
import { route } from '../../src/http/route.ts';
import { createRequestHandler, listen } from '../../src/http/server.ts';
import { AppError } from '../../src/lib/errors.ts';
import { createLogger } from '../../src/lib/log.ts';
import { apiClient } from '../helpers/api.ts';

// The edge's table of driver codes (src/bridge/device-problems.ts): a driver's error carries a
// code and facts, the answer's status is decided here.

const refused = (code: string) =>
  new DeviceError(code, 'invalid settings', { retryable: false, facts: { fields: [{ path: 'settings.sf', message: 'must be 5 to 12' }] } });

test('settings a driver refuses answer 400 with every field; other device errors 503', () => {
  for (const code of ['ERR_BEARER_SETTINGS', 'ERR_RNODE_SETTINGS']) {
    const answer = deviceProblem(refused(code))!;
    assert.instance(answer, AppError);
    assert.is(answer.status, 400);
    assert.is(answer.code, code);
    assert.is(answer.message, 'invalid settings');
    assert.equal(answer.errors, [{ path: 'settings.sf', message: 'must be 5 to 12' }]);
  }
  const gone = deviceProblem(new DeviceError('ERR_PORT_NOT_FOUND', 'no device at /dev/ttyUSB9', { retryable: true, facts: { port: '/dev/ttyUSB9' } }))!;
  assert.is(gone.status, 503);
  assert.is(gone.errors, undefined);
  assert.is(deviceProblem(new Error('not a driver error')), null);
});

test('a driver error thrown below a route is answered as problem+json with the table\'s status', async () => {
  const handler = createRequestHandler({
    routes: [route({ method: 'POST', path: '/apply', summary: 'apply', roles: 'public', body: z.unknown(), handler: () => { throw refused('ERR_BEARER_SETTINGS'); } })],
    log: createLogger({ write: () => {} }),
    now: () => 0,
    authenticate: () => null,
    problemOf: deviceProblem,
  });
  const server = await listen(handler, '127.0.0.1', 0);
  try {
    const r = await apiClient(() => server.url, () => '')('POST', '/apply', { body: {} });
    assert.is(r.status, 400);
    const body = r.body as Record<string, unknown>;
    assert.is(body.type, 'https://fieldbridge.dev/problems/bearer-settings');
    assert.is(body.title, 'Bad Request');
    assert.is(body.detail, 'invalid settings');
    assert.equal(body.errors, [{ path: 'settings.sf', message: 'must be 5 to 12' }]);
  } finally {
    await server.close(0);
  }
});

test.run();
