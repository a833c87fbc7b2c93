import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DbusConnection, DbusError, propertyMap, systemBusAddress, variantValue } from '../../../../src/bearers/shared/links/dbus-connection.ts';
import { describeBluezError } from '../../../../src/bearers/shared/links/bluez-client.ts';
import { DeviceError } from '../../../../src/bearers/device-error.ts';
import { PrivateBus } from '../../../peers/bluez/standin.ts';

// The D-Bus wrapper around @homebridge/dbus-native: plain values out of its variant form, a
// missing or malformed bus as ERR_BLE_UNAVAILABLE, and calls against a real dbus-daemon.

test('variants and a{sv} dictionaries come out as plain values', () => {
  const tree = [{ type: 'b', child: [] }];
  assert.is(variantValue([tree, [true]]), true);
  assert.equal(
    propertyMap([
      ['Connected', [tree, [false]]],
      ['Value', [[{ type: 'a', child: [{ type: 'y', child: [] }] }], [Buffer.from([1, 2])]]],
      ['UUIDs', [[{ type: 'a', child: [{ type: 's', child: [] }] }], [['6e400001-b5a3-f393-e0a9-e50e24dcca9e']]]],
    ]),
    { Connected: false, Value: Buffer.from([1, 2]), UUIDs: ['6e400001-b5a3-f393-e0a9-e50e24dcca9e'] },
  );
  assert.equal(propertyMap(null), {});
});

test('the system bus address: DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus', () => {
  assert.is(systemBusAddress({}), 'unix:path=/run/dbus/system_bus_socket');
  assert.is(systemBusAddress({ DBUS_SYSTEM_BUS_ADDRESS: 'unix:path=/tmp/x' }), 'unix:path=/tmp/x');
});

test('no bus at the address, or an address that is not one: ERR_BLE_UNAVAILABLE naming it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-'));
  try {
    for (const [address, why] of [[`unix:path=${join(dir, 'none')}`, /no socket there/], ['nonsense', /no D-Bus system bus at nonsense/]] as const) {
      const error = await DbusConnection.open(address).catch((e: DeviceError) => e);
      assert.instance(error, DeviceError);
      assert.is((error as DeviceError).code, 'ERR_BLE_UNAVAILABLE');
      assert.match((error as Error).message, why);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('over a real dbus-daemon: calls answer, error replies are DbusErrors, calls after close are refused', async () => {
  const bus = new PrivateBus();
  await bus.start();
  try {
    const conn = await DbusConnection.open(bus.address);
    const [names] = await conn.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'ListNames');
    assert.ok((names as string[]).includes('org.freedesktop.DBus'));
    const missing = await conn.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'GetNameOwner', 's', ['org.bluez']).catch((e) => e);
    assert.instance(missing, DbusError);
    assert.is((missing as DbusError).dbusName, 'org.freedesktop.DBus.Error.NameHasNoOwner');
    const reasons: string[] = [];
    conn.onClose((r) => reasons.push(r));
    conn.close();
    assert.equal(reasons, ['closed by the bridge']);
    const refused = await conn.call('org.freedesktop.DBus', '/', 'org.freedesktop.DBus', 'GetId').catch((e: Error) => e);
    assert.match((refused as Error).message, /closed/);
  } finally {
    await bus.remove();
  }
});

test('BlueZ errors are shown with a hint where one helps', () => {
  assert.is(
    describeBluezError(new DbusError('org.bluez.Error.Failed', 'le-connection-abort-by-local')),
    'org.bluez.Error.Failed: le-connection-abort-by-local (the board did not answer: out of range, off, or connected to another host)',
  );
  assert.is(describeBluezError(new DbusError('org.bluez.Error.Failed', 'Not connected')), 'org.bluez.Error.Failed: Not connected');
});

test.run();
