import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { findDevice, findProfile } from '../../../../src/bearers/shared/links/ble-find.ts';
import { NUS_RX_CHAR_UUID, NUS_SERVICE_UUID, NUS_TX_CHAR_UUID, STREAM_FRAMING } from '../../../../src/bearers/shared/links/ble-framing.ts';
import {
  MESHTASTIC_BLE,
  MESHTASTIC_FROMNUM_UUID,
  MESHTASTIC_FROMRADIO_UUID,
  MESHTASTIC_SERVICE_UUID,
  MESHTASTIC_TORADIO_UUID,
} from '../../../../src/bearers/meshtastic/ble.ts';
import type { ManagedObjects } from '../../../../src/bearers/shared/links/bluez-client.ts';
import { DeviceError } from '../../../../src/bearers/device-error.ts';

// Choosing the board and its characteristics among BlueZ's objects, on object trees shaped
// as GetManagedObjects answers (BlueZ doc/org.bluez.Device.rst, GattService.rst,
// GattCharacteristic.rst). The same lookups run against the D-Bus stand-in in ble-rnode.test.ts.

const HCI = '/org/bluez/hci0';
const DEV = `${HCI}/dev_AA_BB_CC_DD_EE_FF`;

function tree(device: Record<string, unknown> = {}, adapter: Record<string, unknown> = {}): ManagedObjects {
  return {
    '/org/bluez': { 'org.bluez.AgentManager1': {} },
    [HCI]: { 'org.bluez.Adapter1': { Address: '00:1A:7D:DA:71:13', Powered: true, ...adapter } },
    [DEV]: { 'org.bluez.Device1': { Address: 'AA:BB:CC:DD:EE:FF', Name: 'RNode 3B87', Alias: 'RNode 3B87', Paired: true, Bonded: true, Adapter: HCI, ...device } },
    [`${HCI}/dev_11_22_33_44_55_66`]: { 'org.bluez.Device1': { Address: '11:22:33:44:55:66', Name: 'Phone', Paired: true, Bonded: true, Adapter: HCI } },
  };
}

function withNus(objects: ManagedObjects, mtu?: number): ManagedObjects {
  objects[`${DEV}/service0028`] = { 'org.bluez.GattService1': { UUID: NUS_SERVICE_UUID, Primary: true, Device: DEV } };
  objects[`${DEV}/service0028/char0029`] = { 'org.bluez.GattCharacteristic1': { UUID: NUS_RX_CHAR_UUID.toUpperCase(), ...(mtu ? { MTU: mtu } : {}) } };
  objects[`${DEV}/service0028/char002c`] = { 'org.bluez.GattCharacteristic1': { UUID: NUS_TX_CHAR_UUID } };
  return objects;
}

function withMeshtastic(objects: ManagedObjects): ManagedObjects {
  const s = `${DEV}/service0030`;
  objects[s] = { 'org.bluez.GattService1': { UUID: MESHTASTIC_SERVICE_UUID, Primary: true, Device: DEV } };
  objects[`${s}/char0031`] = { 'org.bluez.GattCharacteristic1': { UUID: MESHTASTIC_TORADIO_UUID, MTU: 185 } };
  objects[`${s}/char0034`] = { 'org.bluez.GattCharacteristic1': { UUID: MESHTASTIC_FROMRADIO_UUID } };
  objects[`${s}/char0037`] = { 'org.bluez.GattCharacteristic1': { UUID: MESHTASTIC_FROMNUM_UUID } };
  return objects;
}

const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    assert.instance(error, DeviceError);
    return `${(error as DeviceError).code}: ${(error as Error).message}`;
  }
  throw new Error('did not throw');
};

test('finds the bonded board by MAC (any case), by name or by alias', () => {
  for (const target of [{ mac: 'AA:BB:CC:DD:EE:FF', name: null }, { mac: 'aa:bb:cc:dd:ee:ff', name: null }, { mac: null, name: 'RNode 3B87' }]) {
    assert.equal(findDevice(tree(), target), { path: DEV, address: 'AA:BB:CC:DD:EE:FF', adapterPath: HCI });
  }
  assert.is(findDevice(tree({ Alias: 'Hilltop' }), { mac: null, name: 'Hilltop' }).path, DEV);
});

test('refusals say what is wrong and how to fix it', () => {
  assert.match(code(() => findDevice(tree(), { mac: '00:00:00:00:00:01', name: null })), /^ERR_BLE_NOT_FOUND: .*knows no such device.*bluetoothctl/);
  assert.match(code(() => findDevice(tree(), { mac: null, name: 'RNode' })), /^ERR_BLE_NOT_FOUND/);
  const twins = tree();
  twins[`${HCI}/dev_22`] = { 'org.bluez.Device1': { Address: '22:22:22:22:22:22', Name: 'RNode 3B87', Bonded: true, Adapter: HCI } };
  assert.match(code(() => findDevice(twins, { mac: null, name: 'RNode 3B87' })), /2 devices carry that name \(AA:BB:CC:DD:EE:FF, 22:22:22:22:22:22\); use the MAC/);
  assert.match(code(() => findDevice(tree({ Paired: false, Bonded: false }), { mac: 'AA:BB:CC:DD:EE:FF', name: null })), /^ERR_BLE_NOT_BONDED: .*not paired; .*"pair AA:BB:CC:DD:EE:FF" and "trust AA:BB:CC:DD:EE:FF"/);
  assert.match(code(() => findDevice(tree({ Bonded: false }), { mac: 'AA:BB:CC:DD:EE:FF', name: null })), /paired but not bonded/);
  assert.match(code(() => findDevice(tree({}, { Powered: false }), { mac: 'AA:BB:CC:DD:EE:FF', name: null })), /^ERR_BLE_ADAPTER_OFF: .*hci0 is powered off \(bluetoothctl power on\)/);
  const noAdapter = tree();
  delete noAdapter[HCI];
  assert.match(code(() => findDevice(noAdapter, { mac: 'AA:BB:CC:DD:EE:FF', name: null })), /^ERR_BLE_NO_ADAPTER: .*no Bluetooth adapter/);
});

test('BlueZ before 5.67 has no Bonded property: Paired counts then', () => {
  const old = tree();
  delete old[DEV]['org.bluez.Device1'].Bonded;
  assert.is(findDevice(old, { mac: 'AA:BB:CC:DD:EE:FF', name: null }).path, DEV);
  old[DEV]['org.bluez.Device1'].Paired = false;
  assert.match(code(() => findDevice(old, { mac: 'AA:BB:CC:DD:EE:FF', name: null })), /^ERR_BLE_NOT_BONDED/);
});

const STREAM = STREAM_FRAMING.services;
const MESH = MESHTASTIC_BLE.services;
const found = (p: ReturnType<typeof findProfile>) => ({ uuid: p.service.uuid, paths: p.paths, mtu: p.mtu });

test('the UART characteristics with the MTU, else the LE default 23; Meshtastic when only it is there', () => {
  assert.equal(found(findProfile(withNus(tree(), 185), DEV, 'x', STREAM)), { uuid: NUS_SERVICE_UUID, paths: { rx: `${DEV}/service0028/char0029`, tx: `${DEV}/service0028/char002c` }, mtu: 185 });
  assert.is(findProfile(withNus(tree()), DEV, 'x', STREAM).mtu, 23);
  assert.equal(found(findProfile(withMeshtastic(tree()), DEV, 'x', MESH)), {
    uuid: MESHTASTIC_SERVICE_UUID, paths: { toRadio: `${DEV}/service0030/char0031`, fromRadio: `${DEV}/service0030/char0034`, fromNum: `${DEV}/service0030/char0037` }, mtu: 185,
  });
  assert.is(findProfile(withMeshtastic(withNus(tree())), DEV, 'x', STREAM).service.uuid, NUS_SERVICE_UUID);
  assert.is(findProfile(withMeshtastic(withNus(tree())), DEV, 'x', MESH).service.uuid, MESHTASTIC_SERVICE_UUID);
  // A framing speaks only its own services: the byte stream is never sent to the Meshtastic one.
  assert.match(code(() => findProfile(withMeshtastic(tree()), DEV, 'ble://RNode 3B87', STREAM)), /^ERR_BLE_NO_SERVICE: ble:\/\/RNode 3B87: the device does not offer the Nordic UART service/);
});

test('characteristics of another device or service do not count', () => {
  const objects = tree();
  objects[`${HCI}/dev_11_22_33_44_55_66/service0028`] = { 'org.bluez.GattService1': { UUID: NUS_SERVICE_UUID } };
  objects[`${HCI}/dev_11_22_33_44_55_66/service0028/char0029`] = { 'org.bluez.GattCharacteristic1': { UUID: NUS_RX_CHAR_UUID } };
  objects[`${HCI}/dev_11_22_33_44_55_66/service0028/char002c`] = { 'org.bluez.GattCharacteristic1': { UUID: NUS_TX_CHAR_UUID } };
  objects[`${DEV}/service0010`] = { 'org.bluez.GattService1': { UUID: '0000180f-0000-1000-8000-00805f9b34fb' } };
  objects[`${DEV}/service0010/char0011`] = { 'org.bluez.GattCharacteristic1': { UUID: NUS_RX_CHAR_UUID } };
  objects[`${DEV}/service0010/char0012`] = { 'org.bluez.GattCharacteristic1': { UUID: NUS_TX_CHAR_UUID } };
  assert.match(code(() => findProfile(objects, DEV, 'ble://RNode 3B87', STREAM)), /^ERR_BLE_NO_SERVICE: ble:\/\/RNode 3B87: the device does not offer the Nordic UART service/);
  assert.match(code(() => findProfile(objects, DEV, 'ble://RNode 3B87', MESH)), /^ERR_BLE_NO_SERVICE: ble:\/\/RNode 3B87: the device offers neither the Meshtastic service \(6ba1b218-15a8-461f-9fa8-5dcae273eafd\) nor the Nordic UART service/);
});

test.run();
