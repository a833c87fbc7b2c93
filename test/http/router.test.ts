import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Route } from '../../src/http/route.ts';
import { compileRoutes, matchRoute } from '../../src/http/router.ts';

const r = (method: Route['method'], path: string): Route => ({ method, path, summary: path, roles: 'public', handler: () => null });
const table = compileRoutes([
  r('GET', '/api/interfaces'),
  r('POST', '/api/interfaces'),
  r('GET', '/api/interfaces/{id}'),
  r('PUT', '/api/interfaces/{id}'),
  r('DELETE', '/api/interfaces/{id}'),
  r('GET', '/api/interfaces/health'),
  r('POST', '/api/interfaces/{id}/bind'),
  r('GET', '/api/deliveries/message/{ref}'),
  r('GET', '/api/deliveries/{id}'),
]);

test('a static segment wins over a parameter', () => {
  const m = matchRoute(table, 'GET', '/api/interfaces/health');
  assert.is(m.kind, 'found');
  if (m.kind === 'found') assert.is(m.route.path, '/api/interfaces/health');
});

test('a parameter takes any other value', () => {
  const m = matchRoute(table, 'GET', '/api/interfaces/ifc_123');
  assert.is(m.kind, 'found');
  if (m.kind === 'found') {
    assert.is(m.route.path, '/api/interfaces/{id}');
    assert.equal(m.params, { id: 'ifc_123' });
  }
});

test('the earlier static segment decides between two templates', () => {
  const m = matchRoute(table, 'GET', '/api/deliveries/message/msg_1');
  assert.is(m.kind, 'found');
  if (m.kind === 'found') assert.equal(m.params, { ref: 'msg_1' });
});

test('a trailing slash is ignored', () => {
  const m = matchRoute(table, 'GET', '/api/interfaces/');
  assert.is(m.kind, 'found');
  if (m.kind === 'found') assert.is(m.route.path, '/api/interfaces');
});

test('encoded segments are decoded one by one: %2F stays inside the parameter', () => {
  const m = matchRoute(table, 'POST', '/api/interfaces/a%2Fb/bind');
  assert.is(m.kind, 'found');
  if (m.kind === 'found') assert.equal(m.params, { id: 'a/b' });
  const spaced = matchRoute(table, 'GET', '/api/interfaces/my%20radio');
  if (spaced.kind === 'found') assert.equal(spaced.params, { id: 'my radio' });
  else assert.unreachable('not found');
});

test('a malformed percent-encoding is a bad path, not a crash', () => {
  assert.is(matchRoute(table, 'GET', '/api/interfaces/%E0%A4%A').kind, 'bad_path');
});

test('a known path with another method lists the allowed methods', () => {
  const m = matchRoute(table, 'PATCH', '/api/interfaces/ifc_1');
  assert.equal(m, { kind: 'method_not_allowed', allow: ['DELETE', 'GET', 'PUT'] });
  const coll = matchRoute(table, 'DELETE', '/api/interfaces');
  assert.equal(coll, { kind: 'method_not_allowed', allow: ['GET', 'POST'] });
});

test('HEAD is answered by the GET route', () => {
  assert.is(matchRoute(table, 'HEAD', '/api/interfaces').kind, 'found');
});

test('unknown paths are not found; an empty parameter does not match', () => {
  assert.is(matchRoute(table, 'GET', '/api/nothing').kind, 'not_found');
  assert.is(matchRoute(table, 'POST', '/api/interfaces//bind').kind, 'not_found');
  assert.is(matchRoute(table, 'GET', '/api/interfaces/a/b/c').kind, 'not_found');
});

test('two routes with the same method and shape are refused at start', () => {
  assert.throws(() => compileRoutes([r('GET', '/a/{x}'), r('GET', '/a/{y}')]), /duplicate route/);
});

test.run();
