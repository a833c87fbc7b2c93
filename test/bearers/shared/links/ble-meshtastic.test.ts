import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MeshtasticDevice } from '../../../../src/bearers/meshtastic/simulator/device.ts';
import { MeshtasticMesh } from '../../../../src/bearers/meshtastic/simulator/mesh.ts';
import { serveMeshtasticTcp, type SimTransport } from '../../../../src/bearers/meshtastic/simulator/serve.ts';
import type { TestBridge } from '../../../helpers/bridge.ts';
import { createMeshInterface, keepProcessAlive, nodeIdOf, startMeshBridge, waitDelivery, waitOnline, waitUntil } from '../../../helpers/meshtastic.ts';
import { createRule } from '../../../helpers/routing.ts';
import { BluezStandin, PrivateBus, Relay } from '../../../peers/bluez/standin.ts';

// Two bridges on one simulated Meshtastic mesh: bridge A's board over ble:// through the BlueZ
// stand-in (its Meshtastic GATT service relayed to the firmware simulator), bridge B's over
// TCP. The driver is unchanged: the BLE link turns FromRadio reads into stream frames and
// stream frames into ToRadio writes. What an operator sees: A online with its board, a direct
// message from A stored by B and acknowledged, and one from B stored by A.

const mesh = new MeshtasticMesh();
const devA = new MeshtasticDevice({ name: 'ble-bridge-a', mesh, firmwareVersion: '2.6.11.ble-a' });
const devB = new MeshtasticDevice({ name: 'ble-bridge-b', mesh, firmwareVersion: '2.6.11.ble-b' });
const idA = nodeIdOf(devA);
const idB = nodeIdOf(devB);
const relayA = new Relay(devA);
const bus = new PrivateBus();
const savedAddress = process.env.DBUS_SYSTEM_BUS_ADDRESS;
let bluez: BluezStandin;
let tcpB: SimTransport;
let a: TestBridge;
let b: TestBridge;
let release: () => void;

test.before(async () => {
  release = keepProcessAlive();
  await bus.start();
  await relayA.listen();
  bluez = new BluezStandin(bus, {
    devices: [{ address: 'C8:C9:A3:5E:12:34', name: 'Meshtastic_1234', profile: 'meshtastic', relay: relayA.address, mtu: 185 }],
  });
  await bluez.start();
  process.env.DBUS_SYSTEM_BUS_ADDRESS = bus.address;
  tcpB = await serveMeshtasticTcp(devB, { port: 0 });
  a = await startMeshBridge();
  b = await startMeshBridge();
  await createMeshInterface(a, 'mesh', 'ble://Meshtastic_1234');
  await createMeshInterface(b, 'mesh', tcpB.device);
  for (const t of [a, b]) {
    await createRule(t.call, 'out-to-mesh', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'mesh', to: '{to}' }] });
    await createRule(t.call, 'keep-mesh', { match: { direction: 'inbound', interfaces: ['mesh'] }, action: 'store' });
  }
});

test.after(async () => {
  await a?.stop();
  await b?.stop();
  await tcpB?.close();
  await bluez?.stop();
  await bus.remove();
  await relayA.stop();
  devA.close();
  devB.close();
  release?.();
  if (savedAddress === undefined) delete process.env.DBUS_SYSTEM_BUS_ADDRESS;
  else process.env.DBUS_SYSTEM_BUS_ADDRESS = savedAddress;
});

test('the BLE interface completes the handshake and shows its board', async () => {
  const ha = await waitOnline(a, 'mesh', 20_000);
  assert.is(ha.kind, 'meshtastic');
  assert.is(ha.last_error, null);
  assert.is(ha.device.firmware_version, '2.6.11.ble-a');
  assert.is(ha.device.node_id, idA);
  await waitOnline(b, 'mesh');
  // Every ToRadio went as one write request; none was a Write Command.
  const { counters } = await bluez.command({ cmd: 'counters' });
  assert.ok(counters['write-request'].count >= 1, JSON.stringify(counters));
  assert.is(counters['write-command'], undefined);
});

test('a direct message from A (BLE) is stored by B and acknowledged; one from B reaches A', async () => {
  const r = await a.call('POST', '/api/messages/send', { body: { to: idB, text: 'hello from the BLE side' } });
  assert.is(r.status, 202, r.text);
  const heard = await waitUntil('B to store the message', async () => {
    const m = await b.call('GET', '/api/messages?direction=inbound');
    return m.body.items.find((x: { text: string | null }) => x.text === 'hello from the BLE side');
  });
  assert.is(heard.from, idA);
  const done = await waitDelivery(a, r.body.deliveries[0].id, 'delivered', (x) => x.state === 'delivered');
  assert.is(done.result.acked_by, idB);

  const back = await b.call('POST', '/api/messages/send', { body: { to: idA, text: 'and back over BLE' } });
  assert.is(back.status, 202, back.text);
  const heardA = await waitUntil('A to store the answer', async () => {
    const m = await a.call('GET', '/api/messages?direction=inbound');
    return m.body.items.find((x: { text: string | null }) => x.text === 'and back over BLE');
  });
  assert.is(heardA.from, idB);
});

test('GET /api/routing/rnode/ports lists the bonded board with its port value, connecting nothing new', async () => {
  const r = await a.call('GET', '/api/routing/rnode/ports');
  assert.is(r.status, 200, r.text);
  const ble = r.body.items.find((p: { port: string }) => p.port === 'ble://C8:C9:A3:5E:12:34');
  assert.ok(ble, r.text);
  assert.match(ble.label, /^Bluetooth LE Meshtastic "Meshtastic_1234", bonded, connected, C8:C9:A3:5E:12:34 on hci0$/);
});

test('the board drops the link: A goes offline with the reason and comes back', async () => {
  relayA.drop();
  await waitUntil('A offline with the reason', async () => {
    const r = await a.call('GET', '/api/interfaces/health');
    const item = r.body.items.find((i: { name: string }) => i.name === 'mesh');
    return !item.connected && /the board disconnected/.test(item.last_error ?? '') && item;
  });
  await waitOnline(a, 'mesh', 20_000);
});

test.run();
