import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Bearer } from '../../../../src/bearers/bearer.ts';
import { createRNodeBearer } from '../../../../src/bearers/rnode/driver.ts';
import { listBlePorts } from '../../../../src/bearers/shared/links/ble-ports.ts';
import { BLE_SERVICES } from '../../../../src/bearers/drivers.ts';
import { RNODE_PRESETS } from '../../../../src/bearers/rnode/radio.ts';
import { RNodeChannel } from '../../../../src/bearers/rnode/simulator/channel.ts';
import { RNodeSimulator } from '../../../../src/bearers/rnode/simulator/simulator.ts';
import { contractContext, waitFor, type RecordedContext } from '../../contract.ts';
import { BluezStandin, DEFAULT_ADAPTER, PrivateBus, Relay } from '../../../peers/bluez/standin.ts';

// RNode interfaces over ble:// through the BlueZ stand-in (test/peers/bluez/): a private
// dbus-daemon, bluez_standin.py exporting org.bluez on it, and TCP relays from its Nordic UART
// characteristics to RNode simulators on one radio channel. The bridge side is the real one:
// open-link.ts -> ble-link.ts -> the D-Bus client, found through DBUS_SYSTEM_BUS_ADDRESS.
// Nothing here has touched a Bluetooth radio (docs/ports.md, "BLE").

const BY_NAME = 'ble://RNode 3B87';
const BY_MAC = 'ble://AA:BB:CC:DD:EE:FF';
const UNBONDED = 'ble://RNode 0C1D';

const channel = new RNodeChannel();
const simA = new RNodeSimulator({ name: 'ble-a', channel });
const simB = new RNodeSimulator({ name: 'ble-b', channel });
const simC = new RNodeSimulator({ name: 'ble-c', channel });
const relayA = new Relay(simA);
const relayB = new Relay(simB);
const relayC = new Relay(simC);
const bus = new PrivateBus();
let bluez: BluezStandin;
const running: Bearer[] = [];
const savedAddress = process.env.DBUS_SYSTEM_BUS_ADDRESS;

function rnode(name: string, preset = 'us-915'): { bearer: Bearer; rec: RecordedContext } {
  const rec = contractContext(`ble-${name}`, { settings: { preset }, link: {} });
  const bearer = createRNodeBearer(rec.ctx, { openLink: rec.ctx.openLink, timing: { backoffInitialMs: 50, backoffMaxMs: 300 } });
  running.push(bearer);
  return { bearer, rec };
}

const last = (rec: RecordedContext) => rec.states[rec.states.length - 1];
const online = (rec: RecordedContext, what: string, ms = 15_000) => waitFor(`${what} online`, () => last(rec)?.connected === true, ms);
const offline = (rec: RecordedContext, what: string, pattern: RegExp, ms = 15_000) =>
  waitFor(`${what} offline with ${pattern}`, () => last(rec)?.connected === false && pattern.test(last(rec)?.lastError ?? ''), ms);

async function stopAll(): Promise<void> {
  await Promise.all(running.splice(0).map((b) => b.stop()));
}

test.before(async () => {
  await bus.start();
  for (const relay of [relayA, relayB, relayC]) await relay.listen();
  bluez = new BluezStandin(bus, {
    devices: [
      { address: 'F0:F5:BD:51:3B:87', name: 'RNode 3B87', profile: 'nus', relay: relayA.address, mtu: 23 },
      { address: 'AA:BB:CC:DD:EE:FF', name: 'RNode 9E21', alias: 'Hilltop RNode', profile: 'nus', relay: relayB.address, mtu: 185 },
      { address: 'C4:DE:E2:10:0C:1D', name: 'RNode 0C1D', profile: 'nus', relay: relayC.address, paired: false, bonded: false, trusted: false },
    ],
  });
  await bluez.start();
  process.env.DBUS_SYSTEM_BUS_ADDRESS = bus.address;
});

test.after.each(async () => {
  await stopAll();
});

test.after(async () => {
  await bluez?.stop();
  await bus.remove();
  for (const relay of [relayA, relayB, relayC]) await relay.stop();
  for (const sim of [simA, simB, simC]) sim.close();
  if (savedAddress === undefined) delete process.env.DBUS_SYSTEM_BUS_ADDRESS;
  else process.env.DBUS_SYSTEM_BUS_ADDRESS = savedAddress;
});

test('by name and by MAC, with every preset: online, and a frame crosses between the two', async () => {
  for (const preset of RNODE_PRESETS) {
    const a = rnode('name', preset.name);
    const b = rnode('mac', preset.name);
    await a.bearer.start(BY_NAME);
    await b.bearer.start(BY_MAC);
    await online(a.rec, `${BY_NAME} (${preset.name})`);
    await online(b.rec, `${BY_MAC} (${preset.name})`);
    const text = `hello over BLE on ${preset.name}`;
    const payload = new TextEncoder().encode(text);
    const sent = await a.bearer.send({ deliveryId: 'd1', messageId: 'm1', to: 'broadcast', channel: null, kind: 'text', text, payload });
    assert.ok(sent.ok, JSON.stringify(sent));
    await waitFor(`the frame heard by ${BY_MAC}`, () => b.rec.received.some((f) => f.text === text), 10_000);
    await stopAll();
  }
  // Write Commands never passed ATT_MTU - 3: the stand-in refuses longer ones as BlueZ cannot send them.
  const { counters } = await bluez.command({ cmd: 'counters' });
  assert.ok(counters['write-command'].count > 0);
  assert.ok(counters['write-command'].max <= 185 - 3, JSON.stringify(counters));
});

test('the ports listing shows the two bonded boards by MAC, not the unbonded one', async () => {
  const listing = await listBlePorts(BLE_SERVICES);
  assert.is(listing.note, null);
  assert.equal(listing.ports.map((p) => p.port), ['ble://AA:BB:CC:DD:EE:FF', 'ble://F0:F5:BD:51:3B:87']);
  assert.is(listing.ports[0].label, 'Bluetooth LE RNode (Nordic UART) "Hilltop RNode", bonded, AA:BB:CC:DD:EE:FF on hci0');
});

test('an unbonded board: a clear reason naming bluetoothctl, then online once it is bonded', async () => {
  const c = rnode('unbonded');
  await c.bearer.start(UNBONDED);
  await offline(c.rec, UNBONDED, /ERR_BLE_NOT_BONDED.*not paired.*bluetoothctl.*pair C4:DE:E2:10:0C:1D.*trust C4:DE:E2:10:0C:1D/);
  await bluez.command({ cmd: 'set', device: 'C4:DE:E2:10:0C:1D', prop: 'Paired', value: true });
  await offline(c.rec, UNBONDED, /paired but not bonded/);
  await bluez.command({ cmd: 'set', device: 'C4:DE:E2:10:0C:1D', prop: 'Bonded', value: true });
  await online(c.rec, UNBONDED);
});

test('the board disconnects in the middle of a frame: offline with the reason, then back and clean', async () => {
  const a = rnode('drop');
  const b = rnode('peer');
  await a.bearer.start(BY_NAME);
  await b.bearer.start(BY_MAC);
  await online(a.rec, BY_NAME);
  await online(b.rec, BY_MAC);
  relayA.inject(Uint8Array.from([0xc0, 0x00, 0x41, 0x42, 0x43])); // a data frame cut short
  await new Promise((r) => setTimeout(r, 50));
  relayA.drop();
  await offline(a.rec, BY_NAME, /the board disconnected: Connection timeout \(org\.bluez\.Reason\.Timeout\)/);
  await online(a.rec, `${BY_NAME} again`);
  const text = 'after the drop';
  const sent = await b.bearer.send({ deliveryId: 'd2', messageId: 'm2', to: 'broadcast', channel: null, kind: 'text', text, payload: new TextEncoder().encode(text) });
  assert.ok(sent.ok, JSON.stringify(sent));
  await waitFor('the frame heard after reconnecting', () => a.rec.received.some((f) => f.text === text), 10_000);
  assert.not.ok(a.rec.received.some((f) => f.text?.includes('ABC')), 'the half frame was not taken for a frame');
});

test('the board goes out of range: BlueZ\'s Connect error with a hint, then online when it is back', async () => {
  const a = rnode('range');
  await a.bearer.start(BY_NAME);
  await online(a.rec, BY_NAME);
  await relayA.stop();
  await offline(a.rec, BY_NAME, /ERR_BLE_CONNECT: BlueZ could not connect: org\.bluez\.Error\.Failed: le-connection-abort-by-local \(the board did not answer/);
  await relayA.listen();
  await online(a.rec, `${BY_NAME} back in range`);
});

test('the adapter goes away: offline, ERR_BLE_NO_ADAPTER while it is missing, back when it returns', async () => {
  const a = rnode('adapter');
  await a.bearer.start(BY_NAME);
  await online(a.rec, BY_NAME);
  await bluez.command({ cmd: 'remove_adapter', adapter: 'hci0' });
  await offline(a.rec, BY_NAME, /adapter hci0 went away|ERR_BLE_NO_ADAPTER/);
  await offline(a.rec, BY_NAME, /ERR_BLE_NO_ADAPTER: .*no Bluetooth adapter/);
  await bluez.command({ cmd: 'add_adapter', spec: { ...DEFAULT_ADAPTER, powered: false } });
  await offline(a.rec, BY_NAME, /ERR_BLE_ADAPTER_OFF: .*hci0 is powered off \(bluetoothctl power on\)/);
  await bluez.command({ cmd: 'power', adapter: 'hci0', value: true });
  await online(a.rec, `${BY_NAME} after the adapter came back`);
});

test('BlueZ stops and restarts: offline with the reason, then back', async () => {
  const a = rnode('restart');
  await a.bearer.start(BY_NAME);
  await online(a.rec, BY_NAME);
  await bluez.stop();
  await offline(a.rec, BY_NAME, /BlueZ left the system bus|BlueZ \(org\.bluez\) is not on the system bus/);
  await offline(a.rec, BY_NAME, /ERR_BLE_UNAVAILABLE: BlueZ \(org\.bluez\) is not on the system bus: is bluetoothd running/);
  await bluez.start();
  await online(a.rec, `${BY_NAME} after BlueZ restarted`);
});

test('no D-Bus at all: ERR_BLE_UNAVAILABLE naming the bus, online once the bus and BlueZ are there, and again after the bus restarts', async () => {
  const other = new PrivateBus();
  process.env.DBUS_SYSTEM_BUS_ADDRESS = other.address;
  const otherBluez = new BluezStandin(other, { devices: [{ address: 'F0:F5:BD:51:3B:87', name: 'RNode 3B87', profile: 'nus', relay: relayA.address }] });
  try {
    const a = rnode('nobus');
    await a.bearer.start(BY_NAME);
    await offline(a.rec, BY_NAME, new RegExp(`ERR_BLE_UNAVAILABLE: no D-Bus system bus at unix:path=${other.socketPath} \\(no socket there\\)`));
    await other.start();
    await offline(a.rec, BY_NAME, /BlueZ \(org\.bluez\) is not on the system bus/);
    await otherBluez.start();
    await online(a.rec, `${BY_NAME} on the bus that appeared`);
    // The bus itself goes away under a running link (dbus.service stopped).
    await otherBluez.stop();
    await other.stop();
    await offline(a.rec, BY_NAME, /the D-Bus connection ended|BlueZ left the system bus/);
    await offline(a.rec, BY_NAME, /ERR_BLE_UNAVAILABLE: no D-Bus system bus/);
    await other.start();
    await otherBluez.start();
    await online(a.rec, `${BY_NAME} once the bus and BlueZ are back`);
  } finally {
    await stopAll();
    await otherBluez.stop();
    await other.remove();
    process.env.DBUS_SYSTEM_BUS_ADDRESS = bus.address;
  }
});

test.run();
