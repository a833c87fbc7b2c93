import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { ERR_CODE, regionKey } from '../../../../src/bearers/meshcore/codec/index.ts';
import { MeshCoreDevice } from '../../../../src/bearers/meshcore/simulator/device.ts';
import { MeshCoreMesh } from '../../../../src/bearers/meshcore/simulator/mesh.ts';
import { SimRepeater } from '../../../../src/bearers/meshcore/simulator/repeater.ts';
import { directHost } from './helpers.ts';

// The simulated radio's flood scope and the simulated repeater's region filter
// (docs/protocols/meshcore.md 6.12): which commands each firmware version has, what the radio
// keeps, and what a repeater with `region denyf *` and one allowed region forwards.

const T = 1_767_225_600;
const DE_BY = { name: 'de-by', key: regionKey('de-by') };

function scoped(options: { version?: number; aliceScope?: typeof DE_BY; bobScope?: typeof DE_BY } = {}) {
  const clock = new FakeClock();
  const mesh = new MeshCoreMesh({ clock, airDelayMs: 10, ackDelayMs: 20 });
  const repeater = new SimRepeater({ name: 'gw', sites: ['north', 'south'], allow: ['de-by'], denyUnscoped: true });
  mesh.addRepeater(repeater);
  const alice = new MeshCoreDevice({ name: 'alice', mesh, site: 'north', firmwareVerCode: options.version, defaultFloodScope: options.aliceScope });
  const bob = new MeshCoreDevice({ name: 'bob', mesh, site: 'south', defaultFloodScope: options.bobScope });
  const a = directHost(alice);
  const b = directHost(bob);
  return { clock, mesh, repeater, alice, bob, a, b };
}

test('the scope commands: set and read the default, set and clear the scope of the run, unscoped', () => {
  const { alice, a } = scoped();
  a.send({ type: 'GET_DEFAULT_FLOOD_SCOPE' });
  assert.equal(a.take(), [{ type: 'DEFAULT_FLOOD_SCOPE', scope: null }]);
  a.send({ type: 'SET_DEFAULT_FLOOD_SCOPE', scope: DE_BY });
  assert.equal(a.take(), [{ type: 'OK' }]);
  a.send({ type: 'GET_DEFAULT_FLOOD_SCOPE' });
  assert.equal(a.take(), [{ type: 'DEFAULT_FLOOD_SCOPE', scope: DE_BY }]);
  assert.equal(alice.floodScope(), DE_BY.key);
  const other = regionKey('nl-ut');
  a.send({ type: 'SET_FLOOD_SCOPE_KEY', variant: 0, key: other });
  assert.equal(alice.floodScope(), other, 'the scope of the run wins over the default');
  a.send({ type: 'SET_FLOOD_SCOPE_KEY', variant: 1 });
  assert.is(alice.floodScope(), null, 'unscoped');
  a.send({ type: 'SET_FLOOD_SCOPE_KEY', variant: 0 });
  assert.equal(alice.floodScope(), DE_BY.key, 'cleared: the default again');
  assert.equal(a.take(), [{ type: 'OK' }, { type: 'OK' }, { type: 'OK' }]);
  a.send({ type: 'SET_DEFAULT_FLOOD_SCOPE', scope: { name: '', key: DE_BY.key } });
  a.send({ type: 'SET_DEFAULT_FLOOD_SCOPE', scope: null });
  assert.equal(a.take(), [{ type: 'ERR', code: ERR_CODE.ILLEGAL_ARG }, { type: 'OK' }]);
  assert.is(alice.scope.default, null);
});

test('older firmware: no default scope before protocol 11, no unscoped variant before 12, nothing before 8', () => {
  const unsupported = { type: 'ERR', code: ERR_CODE.UNSUPPORTED_CMD };
  const v11 = scoped({ version: 11 }).a;
  v11.send({ type: 'SET_FLOOD_SCOPE_KEY', variant: 1 });
  v11.send({ type: 'GET_DEFAULT_FLOOD_SCOPE' });
  assert.equal(v11.take(), [unsupported, { type: 'DEFAULT_FLOOD_SCOPE', scope: null }]);
  const v10 = scoped({ version: 10 }).a;
  v10.send({ type: 'GET_DEFAULT_FLOOD_SCOPE' });
  v10.send({ type: 'SET_DEFAULT_FLOOD_SCOPE', scope: DE_BY });
  v10.send({ type: 'SET_FLOOD_SCOPE_KEY', variant: 0, key: DE_BY.key });
  assert.equal(v10.take(), [unsupported, unsupported, { type: 'OK' }]);
  const v7 = scoped({ version: 7 }).a;
  v7.send({ type: 'SET_FLOOD_SCOPE_KEY', variant: 0, key: DE_BY.key });
  v7.send({ type: 'DEVICE_QUERY', appTargetVersion: 3 });
  const answers = v7.take();
  assert.equal(answers[0], unsupported);
  assert.is(answers[1].type === 'DEVICE_INFO' && answers[1].firmwareVersion, 7);
});

test('a repeater with `region denyf *` forwards the scoped channel text and drops the unscoped one', () => {
  const { clock, repeater, bob, a, b } = scoped({ aliceScope: DE_BY });
  const heard: string[] = [];
  bob.on('received-channel', (r: { text: string }) => heard.push(r.text));
  a.send({ type: 'SEND_CHANNEL_TXT_MSG', txtType: 0, channelIndex: 0, timestamp: T, text: 'scoped' });
  a.send({ type: 'SET_FLOOD_SCOPE_KEY', variant: 1 });
  a.send({ type: 'SEND_CHANNEL_TXT_MSG', txtType: 0, channelIndex: 0, timestamp: T + 1, text: 'unscoped' });
  clock.advance(50);
  assert.equal(heard, ['alice: scoped']);
  assert.equal(repeater.counters, { forwarded: 1, droppedUnscoped: 1, droppedUnknownScope: 0 });
  // It came through one repeater: one hop.
  b.take();
  b.send({ type: 'SYNC_NEXT_MESSAGE' });
  const m = b.take()[0];
  assert.is(m.type === 'CHANNEL_MSG_RECV' && m.pathLen, 1);
});

test('another region\'s scope is dropped too; a direct text is acked only when the answer\'s scope passes as well', () => {
  const { clock, repeater, alice, bob, a } = scoped({ aliceScope: { name: 'nl-ut', key: regionKey('nl-ut') } });
  a.send({ type: 'SEND_CHANNEL_TXT_MSG', txtType: 0, channelIndex: 0, timestamp: T, text: 'elsewhere' });
  clock.advance(50);
  assert.is(repeater.counters.droppedUnknownScope, 1);
  // In "de-by" the text passes, but bob floods his ack unscoped: it is dropped on the way back.
  a.send({ type: 'SET_FLOOD_SCOPE_KEY', variant: 0, key: DE_BY.key });
  a.take();
  a.send({ type: 'SEND_TXT_MSG', txtType: 0, attempt: 0, timestamp: T, pubKeyPrefix: bob.publicKey.subarray(0, 6), text: 'hi' });
  clock.advance(100);
  assert.is(bob.counters.directReceived, 1);
  assert.is(alice.counters.confirmed, 0);
  // With bob in "de-by" too, the ack comes back.
  setDefaultScope(bob);
  a.send({ type: 'SEND_TXT_MSG', txtType: 0, attempt: 1, timestamp: T, pubKeyPrefix: bob.publicKey.subarray(0, 6), text: 'hi' });
  clock.advance(100);
  assert.is(alice.counters.confirmed, 1);
});

function setDefaultScope(bob: MeshCoreDevice): void {
  const host = directHost(bob);
  host.send({ type: 'SET_DEFAULT_FLOOD_SCOPE', scope: DE_BY });
  assert.equal(host.take(), [{ type: 'OK' }]);
}

test('nodes on one site hear each other without a repeater, whatever the scope; sites without a repeater never', () => {
  const clock = new FakeClock();
  const mesh = new MeshCoreMesh({ clock, airDelayMs: 10 });
  const a = new MeshCoreDevice({ name: 'a', mesh, site: 'x' });
  const b = new MeshCoreDevice({ name: 'b', mesh, site: 'x', defaultFloodScope: DE_BY });
  const c = new MeshCoreDevice({ name: 'c', mesh, site: 'y' });
  const heard: string[] = [];
  for (const d of [a, b, c]) d.on('received-channel', (r: { text: string }) => heard.push(`${d.name} ${r.text}`));
  directHost(b).send({ type: 'SEND_CHANNEL_TXT_MSG', txtType: 0, channelIndex: 0, timestamp: T, text: 'hello' });
  clock.advance(20);
  assert.equal(heard, ['a b: hello']);
});

test.run();
