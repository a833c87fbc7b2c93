import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  chunkForWrite,
  findNus,
  NUS_RX_CHAR_UUID,
  NUS_SERVICE_UUID,
  NUS_TX_CHAR_UUID,
  openBleLink,
  type BluezGatt,
  type ManagedObjects,
} from '../../../src/bearers/links/ble-link.ts';
import { AppError } from '../../../src/lib/errors.ts';

// BlueZ and a radio cannot run in this container, so the D-Bus side is an in-memory stand-in
// holding the object tree BlueZ documents (org.bluez.Device1, GattService1,
// GattCharacteristic1). What is tested is our part: choosing the device, finding the UART,
// chunking writes, mapping notifications and disconnects. docs/ports.md says what never ran.

const dir = mkdtempSync(join(tmpdir(), 'fb-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const DEV = '/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF';
function tree(device: Record<string, unknown> = {}, mtu?: number, withUart = true): ManagedObjects {
  const objects: ManagedObjects = {
    '/org/bluez/hci0': { 'org.bluez.Adapter1': { Address: '00:11:22:33:44:55' } },
    [DEV]: { 'org.bluez.Device1': { Address: 'AA:BB:CC:DD:EE:FF', Name: 'RNode 3A4B', Alias: 'RNode 3A4B', Paired: true, Bonded: true, ...device } },
    '/org/bluez/hci0/dev_11_22_33_44_55_66': { 'org.bluez.Device1': { Address: '11:22:33:44:55:66', Name: 'Phone', Paired: true, Bonded: true } },
    '/org/bluez/hci0/dev_11_22_33_44_55_66/service0001/char0002': { 'org.bluez.GattCharacteristic1': { UUID: NUS_RX_CHAR_UUID } },
  };
  if (withUart) {
    objects[`${DEV}/service0010`] = { 'org.bluez.GattService1': { UUID: NUS_SERVICE_UUID, Primary: true } };
    objects[`${DEV}/service0010/char0011`] = { 'org.bluez.GattCharacteristic1': { UUID: NUS_RX_CHAR_UUID.toUpperCase(), ...(mtu ? { MTU: mtu } : {}) } };
    objects[`${DEV}/service0010/char0013`] = { 'org.bluez.GattCharacteristic1': { UUID: NUS_TX_CHAR_UUID } };
  }
  return objects;
}

const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    assert.instance(error, AppError);
    return (error as AppError).code;
  }
  throw new Error('did not throw');
};

test('finds the bonded board by MAC (any case), by name or by alias, with its UART characteristics', () => {
  for (const target of [
    { mac: 'AA:BB:CC:DD:EE:FF', name: null },
    { mac: 'aa:bb:cc:dd:ee:ff', name: null },
    { mac: null, name: 'RNode 3A4B' },
  ]) {
    const nus = findNus(tree(), target);
    assert.equal(nus, { devicePath: DEV, rxPath: `${DEV}/service0010/char0011`, txPath: `${DEV}/service0010/char0013`, writeChunk: 20 });
  }
  assert.is(findNus(tree({ Name: 'x', Alias: 'Field RNode' }), { mac: null, name: 'Field RNode' }).devicePath, DEV);
});

test('the write chunk is the negotiated ATT MTU minus 3, else the LE default 23 minus 3', () => {
  assert.is(findNus(tree({}, 247), { mac: 'AA:BB:CC:DD:EE:FF', name: null }).writeChunk, 244);
  assert.is(findNus(tree({}, 2), { mac: 'AA:BB:CC:DD:EE:FF', name: null }).writeChunk, 20, 'a nonsense MTU falls back');
});

test('unknown, ambiguous, unbonded and UART-less devices are refused with their own codes', () => {
  assert.is(code(() => findNus(tree(), { mac: '00:00:00:00:00:01', name: null })), 'ERR_BLE_NOT_FOUND');
  assert.is(code(() => findNus(tree(), { mac: null, name: 'RNode' })), 'ERR_BLE_NOT_FOUND', 'a name prefix is not a name');
  const twins = tree();
  twins['/org/bluez/hci0/dev_22'] = { 'org.bluez.Device1': { Address: '22:22:22:22:22:22', Name: 'RNode 3A4B', Bonded: true } };
  assert.is(code(() => findNus(twins, { mac: null, name: 'RNode 3A4B' })), 'ERR_BLE_NOT_FOUND');
  assert.is(code(() => findNus(tree({ Paired: false, Bonded: false }), { mac: 'AA:BB:CC:DD:EE:FF', name: null })), 'ERR_BLE_NOT_BONDED');
  assert.is(code(() => findNus(tree({}, undefined, false), { mac: 'AA:BB:CC:DD:EE:FF', name: null })), 'ERR_BLE_NO_UART');
});

test('chunkForWrite splits in order and never exceeds the size', () => {
  const data = Uint8Array.from({ length: 45 }, (_, i) => i);
  const chunks = chunkForWrite(data, 20);
  assert.equal(chunks.map((c) => c.length), [20, 20, 5]);
  assert.equal([...Buffer.concat(chunks)], [...data]);
  assert.equal(chunkForWrite(new Uint8Array(0), 20), []);
  assert.throws(() => chunkForWrite(data, 0), /at least 1/);
});

test('without a D-Bus client: a clear ERR_BLE_UNAVAILABLE, naming the missing socket when it is missing', async () => {
  const missing = join(dir, 'no_bus_socket');
  const e1 = await openBleLink({ mac: null, name: 'RNode 3A4B' }, { socketPath: missing }).catch((e: AppError) => e);
  assert.instance(e1, AppError);
  assert.is((e1 as AppError).code, 'ERR_BLE_UNAVAILABLE');
  assert.ok((e1 as Error).message.includes(missing) && (e1 as Error).message.includes('/run/dbus'), (e1 as Error).message);

  const socketPath = join(dir, 'system_bus_socket');
  const server = createServer();
  await new Promise<void>((r) => server.listen(socketPath, r));
  const e2 = await openBleLink({ mac: 'AA:BB:CC:DD:EE:FF', name: null }, { socketPath }).catch((e: AppError) => e);
  await new Promise((r) => server.close(r));
  assert.is((e2 as AppError).code, 'ERR_BLE_UNAVAILABLE');
  assert.ok((e2 as Error).message.includes('no D-Bus client'), (e2 as Error).message);
});

class FakeBluez implements BluezGatt {
  objects: ManagedObjects;
  calls: string[] = [];
  writes: Uint8Array[] = [];
  notify: ((value: Uint8Array) => void) | null = null;
  disconnected: ((reason: string) => void) | null = null;
  constructor(objects: ManagedObjects) {
    this.objects = objects;
  }
  async getManagedObjects() {
    return this.objects;
  }
  async connect(path: string) {
    this.calls.push(`connect ${path}`);
  }
  async disconnect(path: string) {
    this.calls.push(`disconnect ${path}`);
  }
  async startNotify(path: string, onValue: (value: Uint8Array) => void) {
    this.calls.push(`notify ${path}`);
    this.notify = onValue;
  }
  async writeCommand(path: string, value: Uint8Array) {
    this.calls.push(`write ${path} ${value.length}`);
    this.writes.push(value);
  }
  onDisconnect(_path: string, listener: (reason: string) => void) {
    this.disconnected = listener;
  }
}

test('over a BlueZ stand-in: connects, hears notifications, writes in chunks, reports a disconnect', async () => {
  const bus = new FakeBluez(tree({}, 23));
  const link = await openBleLink({ mac: 'AA:BB:CC:DD:EE:FF', name: null }, { bus });
  assert.is(link.kind, 'ble');
  assert.is(link.description, 'ble://AA:BB:CC:DD:EE:FF');
  assert.equal(bus.calls, [`connect ${DEV}`, `notify ${DEV}/service0010/char0013`]);
  const heard: number[] = [];
  link.onData((c) => heard.push(...c));
  bus.notify!(Uint8Array.from([0xc0, 0x08, 0x46, 0xc0]));
  assert.equal(heard, [0xc0, 0x08, 0x46, 0xc0]);
  await link.write(new Uint8Array(50).fill(7));
  assert.equal(bus.writes.map((w) => w.length), [20, 20, 10]);
  const reasons: string[] = [];
  link.onClose((r) => reasons.push(r));
  bus.disconnected!('Connected became false');
  assert.equal(reasons, ['ble://AA:BB:CC:DD:EE:FF disconnected: Connected became false']);
  const refused = await link.write(Uint8Array.from([1])).catch((e: AppError) => e);
  assert.is((refused as AppError).code, 'ERR_LINK_CLOSED');
});

test('close() disconnects the device and reports "closed by the bridge"; a failed setup disconnects too', async () => {
  const bus = new FakeBluez(tree());
  const link = await openBleLink({ mac: null, name: 'RNode 3A4B' }, { bus });
  const reasons: string[] = [];
  link.onClose((r) => reasons.push(r));
  await link.close();
  assert.equal(reasons, ['closed by the bridge']);
  assert.is(bus.calls.at(-1), `disconnect ${DEV}`);

  const noUart = new FakeBluez(tree({}, undefined, false));
  const error = await openBleLink({ mac: 'AA:BB:CC:DD:EE:FF', name: null }, { bus: noUart }).catch((e: AppError) => e);
  assert.is((error as AppError).code, 'ERR_BLE_NO_UART');
  assert.equal(noUart.calls, [`connect ${DEV}`, `disconnect ${DEV}`]);
});

test.run();
