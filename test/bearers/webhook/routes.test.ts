import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { meshtasticSimMesh } from '../../../src/bearers/meshtastic/simulator/link.ts';
import type { RemoteNode } from '../../../src/bearers/meshtastic/simulator/mesh.ts';
import type { CallResult, TestBridge } from '../../helpers/bridge.ts';
import { createMeshInterface, keepProcessAlive, startMeshBridge, waitOnline, waitUntil } from '../../helpers/meshtastic.ts';
import { assertProblem } from '../../helpers/routing.ts';

// Inbound hooks in a running bridge: an admin makes a hook on a webhook interface, a message
// posted to it with the hook's token is heard on that interface and a rule forwards it to a
// simulated Meshtastic board (sim://, in process), where a remote node receives it. An API
// key, a wrong token, no token and a revoked token are refused and change nothing; a hook
// token opens nothing else.

const CHANNEL = `hooks-${process.pid}`;
const FAR = 0x0000beef;
let t: TestBridge;
let far: RemoteNode;
let release: () => void;
let token: string;

const heardByFar = () => far.received.map((p) => new TextDecoder().decode(p.decoded?.payload ?? new Uint8Array()));
const post = (name: string, auth: string | null, body: unknown): Promise<CallResult> =>
  t.call('POST', `/api/hooks/${name}`, { key: auth, body });
const messageCount = async () => (await t.call('GET', '/api/messages')).body.items.length as number;

test.before(async () => {
  release = keepProcessAlive();
  far = meshtasticSimMesh(CHANNEL).addRemoteNode({ num: FAR, long_name: 'Trail crew' });
  t = await startMeshBridge();
  const web = await t.call('POST', '/api/interfaces', { body: { name: 'hooks', kind: 'webhook', device: 'auto', settings: { secret: 'hook-interface-secret-0123' } } });
  assert.is(web.status, 201, web.text);
  await createMeshInterface(t, 'mesh', `sim://${CHANNEL}`);
  const rule = await t.call('POST', '/api/access-rules', { body: { name: 'hooks-to-crew', match: { direction: 'inbound', interfaces: ['hooks'] }, schedule: null, action: 'forward', destinations: [{ interface: 'mesh', to: '!0000beef' }] } });
  assert.is(rule.status, 201, rule.text);
  await waitOnline(t, 'mesh');
});

test.after(async () => {
  await t?.stop();
  release?.();
});

test('an admin makes a hook: its token is shown once and kept only as a digest', async () => {
  const made = await t.call('POST', '/api/hooks', { body: { name: 'grafana', interface: 'hooks' } });
  assert.is(made.status, 201, made.text);
  token = made.body.token;
  assert.match(token, /^fbh_[A-Za-z0-9_-]{43}$/);
  assert.is(made.body.url, '/api/hooks/grafana');
  assert.is(made.body.interface_name, 'hooks');
  const list = await t.call('GET', '/api/hooks');
  assert.is(list.status, 200, list.text);
  assert.equal(list.body.items.map((h: { name: string }) => h.name), ['grafana']);
  assert.not.ok(list.text.includes(token), 'the list does not show the token');
  assertProblem(await t.call('POST', '/api/hooks', { body: { name: 'grafana', interface: 'hooks' } }), 409);
  assertProblem(await t.call('POST', '/api/hooks', { body: { name: 'x', interface: 'mesh' } }), 404);
  assertProblem(await t.call('POST', '/api/hooks', { body: { name: 'Bad Name', interface: 'hooks' } }), 400, ['body.name']);
  const stats = await t.call('GET', '/api/interfaces/hooks/stats');
  assert.is(stats.body.stats.hooks, 1, stats.text);
});

test('a message posted with the hook token is routed by a rule to the simulated Meshtastic board', async () => {
  const r = await post('grafana', token, { from: 'grafana', text: 'disk full on nas-1' });
  assert.is(r.status, 202, r.text);
  assert.equal(r.body, { accepted: true, hook: 'grafana', interface_id: r.body.interface_id });
  const stored = await waitUntil('the message stored', async () => (await t.call('GET', `/api/messages?q=${encodeURIComponent('nas-1')}`)).body.items[0]);
  assert.is(stored.direction, 'inbound');
  assert.is(stored.from, 'grafana');
  assert.is(stored.interface_id, r.body.interface_id);
  assert.is(stored.meta.hook, 'grafana');
  await waitUntil('the trail crew hears it', () => heardByFar().includes('disk full on nas-1'));
  const d = await waitUntil('the delivery delivered', async () => {
    const items = (await t.call('GET', `/api/deliveries?message=${stored.id}`)).body.items;
    return items.length === 1 && items[0].state === 'delivered' && items[0];
  });
  assert.is(d.to, '!0000beef');
});

test('a repeated id is accepted and stored once', async () => {
  const before = await messageCount();
  for (let i = 0; i < 2; i++) assert.is((await post('grafana', token, { from: 'grafana', text: 'one alert', id: 'alert-77' })).status, 202);
  assert.is(await messageCount(), before + 1);
});

test('bad bodies get problem+json naming the field', async () => {
  assertProblem(await post('grafana', token, { text: 'no sender' }), 400, ['body.from']);
  assertProblem(await post('grafana', token, { from: 'x', text: 'both', payload_b64: 'AAAA' }), 400, ['body.text']);
  assertProblem(await post('grafana', token, { from: 'x', text: 'y', colour: 'red' }), 400);
  const raw = await t.call('POST', '/api/hooks/grafana', { key: token, rawBody: '{"from": "x",', headers: { 'content-type': 'application/json' } });
  assertProblem(raw, 400);
});

test('an API key, a wrong token, no token and an unknown hook are refused and change nothing; a hook token opens nothing else', async () => {
  const before = await messageCount();
  const heard = heardByFar().length;
  const body = { from: 'intruder', text: 'open the gate' };
  for (const auth of [t.ownerKey, `${token.slice(0, -2)}xx`, null]) {
    const r = await post('grafana', auth, body);
    assertProblem(r, 401);
    assert.is(r.headers.get('www-authenticate'), 'Bearer');
  }
  assertProblem(await post('no-such-hook', token, body), 401);
  assertProblem(await t.call('GET', '/api/messages', { key: token }), 401);
  assertProblem(await t.call('GET', '/api/hooks', { key: token }), 401);
  assertProblem(await t.call('DELETE', '/api/hooks/grafana', { key: token }), 401);
  assert.is(await messageCount(), before, 'nothing was stored');
  assert.is(heardByFar().length, heard, 'nothing went out');
  assert.not.ok(t.logs.some((l) => l.includes(token)), 'no log line holds the token');
});

test('a revoked hook\'s token is refused and changes nothing', async () => {
  assert.is((await t.call('DELETE', '/api/hooks/grafana')).status, 204);
  const before = await messageCount();
  assertProblem(await post('grafana', token, { from: 'grafana', text: 'after revoke' }), 401);
  assert.is(await messageCount(), before);
  assert.equal((await t.call('GET', '/api/hooks')).body.items, []);
  assertProblem(await t.call('DELETE', '/api/hooks/grafana'), 404);
});

test('a hook whose interface is disabled answers 409 and stores nothing', async () => {
  const made = await t.call('POST', '/api/hooks', { body: { name: 'form', interface: 'hooks' } });
  assert.is(made.status, 201, made.text);
  assert.is((await t.call('POST', '/api/interfaces/hooks/disable')).status, 200);
  const before = await messageCount();
  assertProblem(await post('form', made.body.token, { from: 'web form', text: 'hello' }), 409);
  assert.is(await messageCount(), before);
  assert.is((await t.call('POST', '/api/interfaces/hooks/enable')).status, 200);
  await waitUntil('hooks running again', async () => (await post('form', made.body.token, { from: 'web form', text: 'hello again' })).status === 202);
});

test.run();
