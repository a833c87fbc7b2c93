import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MeshCoreDevice } from '../../../../src/bearers/meshcore/simulator/device.ts';
import { MeshCoreMesh } from '../../../../src/bearers/meshcore/simulator/mesh.ts';
import { serveMeshCoreTcp } from '../../../../src/bearers/meshcore/simulator/serve.ts';
import type { SimTransport } from '../../../../src/bearers/shared/simulators/pty.ts';
import { waitUntil } from '../../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../../helpers/bridge.ts';
import { keepProcessAlive } from '../../../helpers/meshtastic.ts';
import { BluezStandin, PrivateBus, Relay } from '../../../peers/bluez/standin.ts';

// Two bridges on one simulated MeshCore mesh: bridge A's companion radio over ble:// through
// the BlueZ stand-in (Nordic UART, one frame per write and per notification, no serial
// header: bluez_standin.py MeshCoreProfile), bridge B's over TCP. The MeshCore driver is the
// same over both: the BLE link takes its serial frames apart and puts notifications back into
// them (shared/links/ble-link.ts MeshCoreBleLink). What an operator sees: A online with its radio, a
// direct message from A stored by B and delivered by B's radio's ack, and one from B stored by A.

const mesh = new MeshCoreMesh();
const radioA = new MeshCoreDevice({ name: 'ble-radio-a', mesh });
const radioB = new MeshCoreDevice({ name: 'tcp-radio-b', mesh });
const prefix = (d: MeshCoreDevice) => Buffer.from(d.publicKey.subarray(0, 6)).toString('hex');
const relayA = new Relay(radioA);
const bus = new PrivateBus();
const savedAddress = process.env.DBUS_SYSTEM_BUS_ADDRESS;
let bluez: BluezStandin;
let tcpB: SimTransport;
let a: TestBridge;
let b: TestBridge;
let release: () => void;

const interfaceOf = (t: TestBridge) => waitUntil('the interface online', async () => {
  const r = await t.call('GET', '/api/interfaces/mc');
  return r.body.state?.connected && r.body;
});

const inbound = (t: TestBridge, text: string) =>
  waitUntil(`"${text}" stored`, async () => (await t.call('GET', '/api/messages?direction=inbound&limit=200')).body.items.find((m: { text: string | null }) => m.text === text));

test.before(async () => {
  release = keepProcessAlive();
  await bus.start();
  await relayA.listen();
  bluez = new BluezStandin(bus, {
    devices: [{ address: 'D4:D4:DA:4E:77:01', name: 'MeshCore-ble-radio-a', profile: 'meshcore', relay: relayA.address, mtu: 185 }],
  });
  await bluez.start();
  process.env.DBUS_SYSTEM_BUS_ADDRESS = bus.address;
  tcpB = await serveMeshCoreTcp(radioB, { port: 0 });
  a = await startTestBridge();
  b = await startTestBridge();
  for (const [t, device] of [[a, 'ble://MeshCore-ble-radio-a'], [b, tcpB.device]] as const) {
    const r = await t.call('POST', '/api/interfaces', { body: { name: 'mc', kind: 'meshcore', device, settings: { ack_timeout_max_s: 2 } } });
    assert.is(r.status, 201, r.text);
    const out = await t.call('POST', '/api/access-rules', { body: { name: 'out-mc', schedule: null, action: 'forward', match: { direction: 'outbound' }, destinations: [{ interface: 'mc', to: '{to}' }] } });
    assert.is(out.status, 201, out.text);
  }
});

test.after(async () => {
  await a?.stop();
  await b?.stop();
  await tcpB?.close();
  await bluez?.stop();
  await bus.remove();
  await relayA.stop();
  radioA.powerOff();
  radioB.powerOff();
  release?.();
  if (savedAddress === undefined) delete process.env.DBUS_SYSTEM_BUS_ADDRESS;
  else process.env.DBUS_SYSTEM_BUS_ADDRESS = savedAddress;
});

test('the BLE interface comes online and shows its radio; every frame went as one write request', async () => {
  const ifc = await interfaceOf(a);
  assert.is(ifc.kind, 'meshcore');
  assert.is(ifc.state.last_error, null);
  await interfaceOf(b);
  const { counters } = await bluez.command({ cmd: 'counters' });
  assert.ok(counters['write-request'].count >= 2, JSON.stringify(counters));
  assert.is(counters['write-command'], undefined);
  assert.is(counters['ignored-write'], undefined, 'no write the firmware would ignore');
  assert.is(counters['cut-notification'], undefined, 'every frame fit one notification');
});

test('a direct message from A (BLE) is stored by B and delivered by the ack; one from B reaches A', async () => {
  // B learns of A's radio by its advert; A of B's likewise (the driver adds contacts as heard).
  await waitUntil('B in A\'s node list', async () => (await a.call('GET', `/api/nodes/${prefix(radioB)}`)).status === 200);
  const sent = await a.call('POST', '/api/messages/send', { body: { to: prefix(radioB), text: 'over bluetooth to the saddle' } });
  assert.is(sent.status, 202, sent.text);
  const heard = await inbound(b, 'over bluetooth to the saddle');
  assert.is(heard.from, prefix(radioA));
  await waitUntil('A\'s delivery delivered', async () => (await a.call('GET', `/api/deliveries/${sent.body.deliveries[0].id}`)).body.state === 'delivered');

  await waitUntil('A in B\'s node list', async () => (await b.call('GET', `/api/nodes/${prefix(radioA)}`)).status === 200);
  const back = await b.call('POST', '/api/messages/send', { body: { to: prefix(radioA), text: 'heard you, over tcp' } });
  assert.is(back.status, 202, back.text);
  const got = await inbound(a, 'heard you, over tcp');
  assert.is(got.from, prefix(radioB));
});

test.run();
