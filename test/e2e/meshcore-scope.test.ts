import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { regionKey } from '../../src/bearers/meshcore/codec/index.ts';
import { MeshCoreDevice } from '../../src/bearers/meshcore/simulator/device.ts';
import { MeshCoreMesh } from '../../src/bearers/meshcore/simulator/mesh.ts';
import { SimRepeater } from '../../src/bearers/meshcore/simulator/repeater.ts';
import { serveMeshCoreTcp } from '../../src/bearers/meshcore/simulator/serve.ts';
import type { SimTransport } from '../../src/bearers/shared/simulators/pty.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';

// MeshCore flood scopes end to end (docs/meshcore.md "Flood scopes"): a bridge process whose
// MeshCore interface reaches a simulated companion radio over TCP; between that radio and a
// MeshCore user's radio a simulated repeater forwards floods only in the region "de-by" and
// drops unscoped ones (`region denyf *`). Without a scope the bridge's messages go nowhere;
// with `flood_scope: "de-by"` set through the API they arrive and are acknowledged; a single
// delivery can name the scope in its address.

const mesh = new MeshCoreMesh();
const repeater = new SimRepeater({ name: 'gw', sites: ['bridge', 'valley'], allow: ['de-by'], denyUnscoped: true });
mesh.addRepeater(repeater);
const radio = new MeshCoreDevice({ name: 'bridge-radio', mesh, site: 'bridge' });
const hiker = new MeshCoreDevice({ name: 'hiker', mesh, site: 'valley', defaultFloodScope: { name: 'de-by', key: regionKey('de-by') } });
const prefix = (d: MeshCoreDevice) => Buffer.from(d.publicKey.subarray(0, 6)).toString('hex');
const heard: string[] = [];
hiker.on('received', (m: { text: string }) => heard.push(m.text));
hiker.on('received-channel', (m: { text: string }) => heard.push(m.text));
let tcp: SimTransport;
let bridge: TestBridge;

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const online = () =>
  until('mc online', async () => (await bridge.call('GET', '/api/interfaces/health')).body.items.find((i: { name: string; connected: boolean }) => i.name === 'mc' && i.connected));

const final = (id: string) =>
  until(`delivery ${id} settled`, async () => {
    const r = await bridge.call('GET', `/api/deliveries/${id}`);
    return ['delivered', 'dead'].includes(r.body.state) && r.body;
  }, 30_000);

async function send(to: string, text: string): Promise<string> {
  const sent = await bridge.call('POST', '/api/messages/send', { body: { to, text } });
  assert.is(sent.status, 202, sent.text);
  return sent.body.deliveries[0].id;
}

test.before(async () => {
  tcp = await serveMeshCoreTcp(radio, { port: 0 });
  bridge = await startTestBridge();
  const r = await bridge.call('POST', '/api/interfaces', { body: { name: 'mc', kind: 'meshcore', device: tcp.device, settings: { ack_timeout_max_s: 1 }, retry: { base_s: 0.2, cap_s: 0.5, max_attempts: 2 } } });
  assert.is(r.status, 201, r.text);
  await online();
  const rule = await bridge.call('POST', '/api/access-rules', { body: { name: 'out-mc', schedule: null, action: 'forward', match: { direction: 'outbound' }, destinations: [{ interface: 'mc', to: '{to}' }] } });
  assert.is(rule.status, 201, rule.text);
});

test.after(async () => {
  await bridge?.stop();
  await tcp?.close();
  radio.close();
  hiker.close();
});

test('unscoped, a message dies at the repeater; with the interface\'s flood scope it arrives, acknowledged', async () => {
  const lost = await final(await send(prefix(hiker), 'no scope'));
  assert.is(lost.state, 'dead');
  assert.match(lost.last_error, /ERR_MESHCORE_NO_ACK/);
  assert.ok(repeater.counters.droppedUnscoped >= 2, JSON.stringify(repeater.counters));
  assert.not.ok(heard.includes('no scope'));

  const patched = await bridge.call('PATCH', '/api/interfaces/mc', { body: { settings: { flood_scope: 'de-by' } } });
  assert.is(patched.status, 200, patched.text);
  await until('the radio holds the scope', () => radio.scope.default?.name === 'de-by');
  await online();
  const stats = await until('stats with the scope', async () => {
    const r = await bridge.call('GET', '/api/interfaces/mc/stats');
    return r.body.stats?.radio_flood_scope === 'de-by' && r.body.stats;
  });
  assert.equal([stats.flood_scope, stats.flood_scope_support, stats.radio_flood_scope_key], ['de-by', 'default', 'a2213d1e459c16bcebe2658142ad89de']);

  const ok = await final(await send(prefix(hiker), 'scoped'));
  assert.is(ok.state, 'delivered', JSON.stringify(ok));
  assert.ok(heard.includes('scoped'));
});

test('a delivery names another scope after \'#\': its floods go out in that one; a known route is no flood', async () => {
  const dropped = repeater.counters.droppedUnknownScope;
  const wrong = await final(await send('broadcast#nl-ut', 'wrong region'));
  assert.is(wrong.state, 'delivered', 'the radio took it (a channel message has no ack)');
  assert.equal(wrong.result?.flood_scope, 'nl-ut');
  const right = await final(await send('broadcast', 'right region'));
  assert.is(right.state, 'delivered');
  await until('the hiker hears the channel message', () => heard.includes('bridge-radio: right region'));
  assert.not.ok(heard.includes('bridge-radio: wrong region'));
  assert.is(repeater.counters.droppedUnknownScope, dropped + 1);
  // The scoped message before gave the radio a route to the hiker: direct packets pass
  // repeaters whatever their scope.
  const direct = await final(await send(`${prefix(hiker)}#nl-ut`, 'by the known route'));
  assert.is(direct.state, 'delivered', JSON.stringify(direct));
  assert.is(direct.result?.route, 'direct');
  const bad = await final(await send('broadcast#a b', 'bad scope'));
  assert.equal([bad.state, bad.attempts], ['dead', 1]);
  assert.match(bad.last_error, /ERR_MESHCORE_SCOPE/);
});

test.run();
