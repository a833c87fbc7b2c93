import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BLE_SERVICES } from '../../../../src/bearers/drivers.ts';
import { NUS_SERVICE_UUID } from '../../../../src/bearers/shared/links/ble-framing.ts';
import { MESHTASTIC_SERVICE_UUID } from '../../../../src/bearers/meshtastic/ble.ts';
import { blePortsIn, listBlePorts } from '../../../../src/bearers/shared/links/ble-ports.ts';
import { DeviceError } from '../../../../src/bearers/device-error.ts';

// The BLE part of `fieldbridge ports`: bonded boards offering the RNode's UART or the
// Meshtastic service, from Device1 properties alone (nothing is connected).

const HCI = '/org/bluez/hci0';
const dev = (mac: string, props: Record<string, unknown>) => ({
  [`${HCI}/dev_${mac.replaceAll(':', '_')}`]: { 'org.bluez.Device1': { Address: mac, Adapter: HCI, Paired: true, Bonded: true, ...props } },
});

test('lists bonded boards with either service, by MAC, and nothing else', () => {
  const objects = {
    [HCI]: { 'org.bluez.Adapter1': { Powered: true } },
    ...dev('AA:BB:CC:DD:EE:FF', { Alias: 'RNode 3B87', UUIDs: [NUS_SERVICE_UUID.toUpperCase()] }),
    ...dev('C8:C9:A3:5E:12:34', { Name: 'Meshtastic_1234', Alias: 'Meshtastic_1234', UUIDs: [MESHTASTIC_SERVICE_UUID], Connected: true }),
    ...dev('11:11:11:11:11:11', { Alias: 'RNode not bonded', UUIDs: [NUS_SERVICE_UUID], Paired: false, Bonded: false }),
    ...dev('22:22:22:22:22:22', { Alias: 'Headphones', UUIDs: ['0000110b-0000-1000-8000-00805f9b34fb'] }),
  };
  const ports = blePortsIn(objects, BLE_SERVICES);
  assert.equal(ports.map((p) => p.port), ['ble://AA:BB:CC:DD:EE:FF', 'ble://C8:C9:A3:5E:12:34']);
  assert.is(ports[0].label, 'Bluetooth LE RNode (Nordic UART) "RNode 3B87", bonded, AA:BB:CC:DD:EE:FF on hci0');
  assert.is(ports[1].label, 'Bluetooth LE Meshtastic "Meshtastic_1234", bonded, connected, C8:C9:A3:5E:12:34 on hci0');
  assert.is(ports[0].path, `${HCI}/dev_AA_BB_CC_DD_EE_FF`);
  assert.is(ports[0].serial_number, null);
});

test('no bus or no BlueZ: an empty list with the reason, never an error', async () => {
  const listing = await listBlePorts(BLE_SERVICES, () => Promise.reject(new DeviceError('ERR_BLE_UNAVAILABLE', 'no D-Bus system bus at unix:path=/nowhere', { retryable: true })));
  assert.equal(listing, { ports: [], note: 'no D-Bus system bus at unix:path=/nowhere' });
});

test.run();
