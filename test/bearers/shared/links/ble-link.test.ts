import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NUS_RX_CHAR_UUID, NUS_SERVICE_UUID, NUS_TX_CHAR_UUID } from '../../../../src/bearers/shared/links/ble-framing.ts';
import { MESHTASTIC_BLE, MESHTASTIC_FROMNUM_UUID, MESHTASTIC_FROMRADIO_UUID, MESHTASTIC_SERVICE_UUID, MESHTASTIC_TORADIO_UUID } from '../../../../src/bearers/meshtastic/ble.ts';
import { MESHCORE_BLE } from '../../../../src/bearers/meshcore/ble.ts';
import { chunkForWrite, openBleLink } from '../../../../src/bearers/shared/links/ble-link.ts';
import type { BluezGatt, ManagedObjects, WriteType } from '../../../../src/bearers/shared/links/bluez-client.ts';
import { encodeFrame, WAKE_BYTES } from '../../../../src/bearers/meshtastic/codec/stream.ts';
import { MAX_FRAME_SIZE as MESHCORE_MAX_FRAME } from '../../../../src/bearers/meshcore/codec/constants.ts';
import { DeviceError } from '../../../../src/bearers/device-error.ts';

// The link's own logic over an in-memory BluezGatt: what it writes for the driver's bytes,
// what the driver reads, and when it closes. ble-rnode.test.ts and ble-meshtastic.test.ts run
// the same link over D-Bus against the BlueZ stand-in.

const HCI = '/org/bluez/hci0';
const DEV = `${HCI}/dev_AA_BB_CC_DD_EE_FF`;
const S = `${DEV}/service0028`;

function objects(profile: 'nus' | 'meshtastic', mtu = 23): ManagedObjects {
  const o: ManagedObjects = {
    [HCI]: { 'org.bluez.Adapter1': { Powered: true } },
    [DEV]: { 'org.bluez.Device1': { Address: 'AA:BB:CC:DD:EE:FF', Name: 'Board', Paired: true, Bonded: true, Adapter: HCI } },
  };
  if (profile === 'nus') {
    o[S] = { 'org.bluez.GattService1': { UUID: NUS_SERVICE_UUID } };
    o[`${S}/char0029`] = { 'org.bluez.GattCharacteristic1': { UUID: NUS_RX_CHAR_UUID, MTU: mtu } };
    o[`${S}/char002c`] = { 'org.bluez.GattCharacteristic1': { UUID: NUS_TX_CHAR_UUID, MTU: mtu } };
  } else {
    o[S] = { 'org.bluez.GattService1': { UUID: MESHTASTIC_SERVICE_UUID } };
    o[`${S}/char0029`] = { 'org.bluez.GattCharacteristic1': { UUID: MESHTASTIC_TORADIO_UUID, MTU: mtu } };
    o[`${S}/char002c`] = { 'org.bluez.GattCharacteristic1': { UUID: MESHTASTIC_FROMRADIO_UUID, MTU: mtu } };
    o[`${S}/char002f`] = { 'org.bluez.GattCharacteristic1': { UUID: MESHTASTIC_FROMNUM_UUID, MTU: mtu } };
  }
  return o;
}

class FakeBluez implements BluezGatt {
  calls: string[] = [];
  writes: Array<{ path: string; value: number[]; type: WriteType }> = [];
  fromRadio: Uint8Array[] = [];
  watchers: Array<{ path: string; listener: (c: Record<string, unknown>) => void }> = [];
  gone: ((reason: string) => void) | null = null;
  closed = false;
  readonly tree: ManagedObjects;
  constructor(tree: ManagedObjects) {
    this.tree = tree;
  }
  async getManagedObjects() {
    return this.tree;
  }
  async connect(path: string) {
    this.calls.push(`connect ${path}`);
  }
  async disconnect(path: string) {
    this.calls.push(`disconnect ${path}`);
  }
  watch(path: string, _iface: string, listener: (c: Record<string, unknown>) => void) {
    const entry = { path, listener };
    this.watchers.push(entry);
    return () => void (this.watchers = this.watchers.filter((w) => w !== entry));
  }
  changed(path: string, props: Record<string, unknown>) {
    for (const w of this.watchers.filter((x) => x.path === path)) w.listener(props);
  }
  async startNotify(path: string) {
    this.calls.push(`notify ${path}`);
  }
  async readValue(path: string) {
    this.calls.push(`read ${path}`);
    return this.fromRadio.shift() ?? new Uint8Array(0);
  }
  async writeValue(path: string, value: Uint8Array, type: WriteType) {
    this.writes.push({ path, value: [...value], type });
  }
  onGone(_path: string, listener: (reason: string) => void) {
    this.gone = listener;
  }
  close() {
    this.closed = true;
  }
}

const tick = () => new Promise((r) => setTimeout(r, 5));

test('Nordic UART: notifications are the stream; writes are Write Commands of MTU - 3, the MTU followed', async () => {
  const bus = new FakeBluez(objects('nus', 23));
  const link = await openBleLink({ mac: 'AA:BB:CC:DD:EE:FF', name: null }, { bus });
  assert.equal(bus.calls, [`connect ${DEV}`, `notify ${S}/char002c`]);
  const heard: number[] = [];
  link.onData((c) => heard.push(...c));
  bus.changed(`${S}/char002c`, { Value: Buffer.from([0xc0, 0x08, 0x46, 0xc0]) });
  bus.changed(`${S}/char0029`, { Value: Buffer.from([1, 2, 3]) }); // another characteristic's value is not data
  assert.equal(heard, [0xc0, 0x08, 0x46, 0xc0]);
  await link.write(new Uint8Array(50).fill(7));
  assert.equal(bus.writes.map((w) => [w.value.length, w.type]), [[20, 'command'], [20, 'command'], [10, 'command']]);
  bus.changed(`${S}/char0029`, { MTU: 247 });
  await link.write(new Uint8Array(300));
  assert.equal(bus.writes.slice(3).map((w) => w.value.length), [244, 56]);
});

test('Meshtastic: one ToRadio per write request, frames cut anywhere; FromRadio read until empty after writes and FromNum', async () => {
  const bus = new FakeBluez(objects('meshtastic', 185));
  const link = await openBleLink({ mac: null, name: 'Board' }, { bus, framing: MESHTASTIC_BLE });
  assert.equal(bus.calls, [`connect ${DEV}`, `notify ${S}/char002f`]);
  const heard: number[] = [];
  link.onData((c) => heard.push(...c));
  const one = Uint8Array.from([0x18, 0x2a]);
  const two = Uint8Array.from([0x0a, 0x03, 1, 2, 3]);
  bus.fromRadio.push(Uint8Array.from([0x38, 0x2a]));
  await link.write(WAKE_BYTES);
  const stream = new Uint8Array([...encodeFrame(one), ...encodeFrame(two)]);
  await link.write(stream.subarray(0, 3));
  await link.write(stream.subarray(3));
  await tick();
  assert.equal(bus.writes.map((w) => [w.path, w.value, w.type]), [[`${S}/char0029`, [...one], 'request'], [`${S}/char0029`, [...two], 'request']]);
  assert.equal(heard, [...encodeFrame(Uint8Array.from([0x38, 0x2a]))]);
  bus.fromRadio.push(Uint8Array.from([1]), Uint8Array.from([2]));
  bus.changed(`${S}/char002f`, { Value: Buffer.from([1, 0, 0, 0]) });
  await tick();
  assert.equal(heard.slice(6), [...encodeFrame(Uint8Array.from([1])), ...encodeFrame(Uint8Array.from([2]))]);
  assert.ok(bus.calls.filter((c) => c.startsWith('read')).length >= 4, 'each drain ends on an empty read');
});

test('MeshCore: each < frame of the driver is one write request without its header; each notification one > frame', async () => {
  const bus = new FakeBluez(objects('nus', 23));
  const link = await openBleLink({ mac: null, name: 'Board' }, { bus, framing: MESHCORE_BLE });
  assert.equal(bus.calls, [`connect ${DEV}`, `notify ${S}/char002c`]);
  const heard: number[] = [];
  link.onData((c) => heard.push(...c));
  // Written by hand from docs/protocols/meshcore.md 6.1: '<' (3C), length low, high, body.
  // CMD_DEVICE_QUERY (22 = 0x16) with app version 3; CMD_APP_START (1) with 7 reserved bytes and "fb".
  const query = [0x3c, 0x02, 0x00, 0x16, 0x03];
  const appStart = [0x3c, 0x0a, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x66, 0x62];
  const bytes = Uint8Array.from([0x00, ...query, ...appStart]); // a stray byte first: dropped
  await link.write(bytes.subarray(0, 4)); // cut inside the first frame's body
  await link.write(bytes.subarray(4));
  assert.equal(bus.writes.map((w) => [w.path, w.value, w.type]), [
    [`${S}/char0029`, [0x16, 0x03], 'request'],
    [`${S}/char0029`, [0x01, 0, 0, 0, 0, 0, 0, 0, 0x66, 0x62], 'request'],
  ]);
  // RESP_CODE_OK (0) and a 120-byte frame (longer than the default MTU allows a serial link
  // to cut; a notification carries it whole): each becomes a '>' frame.
  bus.changed(`${S}/char002c`, { Value: Buffer.from([0x00]) });
  const long = Buffer.alloc(120, 0x41);
  bus.changed(`${S}/char002c`, { Value: long });
  assert.equal(heard, [0x3e, 0x01, 0x00, 0x00, 0x3e, 120, 0x00, ...long]);
  // Empty and oversized notifications are not frames: dropped, the link stays up.
  bus.changed(`${S}/char002c`, { Value: Buffer.alloc(0) });
  bus.changed(`${S}/char002c`, { Value: Buffer.alloc(MESHCORE_MAX_FRAME + 1, 1) });
  assert.is(heard.length, 4 + 3 + 120);
  assert.is((link as unknown as { notFrames: number }).notFrames, 2);
  await link.close();
});

test('gone: the reason is reported once, writes are refused, the bus connection is closed', async () => {
  const bus = new FakeBluez(objects('nus'));
  const link = await openBleLink({ mac: 'AA:BB:CC:DD:EE:FF', name: null }, { bus });
  const reasons: string[] = [];
  link.onClose((r) => reasons.push(r));
  bus.gone!('the board disconnected: Connection timeout (org.bluez.Reason.Timeout)');
  await tick();
  assert.equal(reasons, ['ble://AA:BB:CC:DD:EE:FF: the board disconnected: Connection timeout (org.bluez.Reason.Timeout)']);
  assert.ok(bus.closed);
  const refused = await link.write(Uint8Array.from([1])).catch((e: DeviceError) => e);
  assert.is((refused as DeviceError).code, 'ERR_LINK_CLOSED');
});

test('close() disconnects and closes the bus; a board without either service is refused and disconnected', async () => {
  const bus = new FakeBluez(objects('nus'));
  const link = await openBleLink({ mac: null, name: 'Board' }, { bus });
  await link.close();
  assert.is(bus.calls.at(-1), `disconnect ${DEV}`);
  assert.ok(bus.closed);

  const bare = objects('nus');
  delete bare[`${S}/char0029`];
  const bus2 = new FakeBluez(bare);
  const error = await openBleLink({ mac: 'AA:BB:CC:DD:EE:FF', name: null }, { bus: bus2 }).catch((e: DeviceError) => e);
  assert.is((error as DeviceError).code, 'ERR_BLE_NO_SERVICE');
  assert.equal(bus2.calls, [`connect ${DEV}`, `disconnect ${DEV}`]);
  assert.ok(bus2.closed);
});

test('chunkForWrite splits in order and never exceeds the size', () => {
  const data = Uint8Array.from({ length: 45 }, (_, i) => i);
  assert.equal(chunkForWrite(data, 20).map((c) => c.length), [20, 20, 5]);
  assert.equal([...Buffer.concat(chunkForWrite(data, 20))], [...data]);
  assert.equal(chunkForWrite(new Uint8Array(0), 20), []);
  assert.throws(() => chunkForWrite(data, 0), /at least 1/);
});

test.run();
