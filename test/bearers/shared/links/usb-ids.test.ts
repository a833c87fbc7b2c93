import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CANDIDATE_IDS, classifyPort, NEVER_IDS, NEVER_VENDORS, parseUsbId, type SerialPortInfo } from '../../../../src/bearers/shared/links/usb-ids.ts';

const port = (vendorId: string | null, productId: string | null, extra: Partial<SerialPortInfo> = {}): SerialPortInfo => ({
  path: '/dev/ttyUSB0',
  vendorId,
  productId,
  ...extra,
});
const hex = (n: number) => n.toString(16).padStart(4, '0');

test('every candidate board id is a candidate when its strings name no stick', () => {
  for (const id of CANDIDATE_IDS) {
    const c = classifyPort(port(hex(id.vid), hex(id.pid), { manufacturer: 'Silicon Labs', product: 'CP2102 USB to UART Bridge Controller' }));
    assert.is(c.verdict, 'candidate', `${hex(id.vid)}:${hex(id.pid)}: ${c.reason}`);
  }
});

test('a Heltec on CP210x is a candidate and the reason names the chip and the id', () => {
  const c = classifyPort(port('10c4', 'ea60'));
  assert.is(c.verdict, 'candidate');
  assert.ok(c.reason.includes('CP210x') && c.reason.includes('10C4:EA60'), c.reason);
});

test('every cellular vendor is never claimed, whatever the product id', () => {
  for (const [vid] of NEVER_VENDORS) {
    for (const pid of ['0125', 'ea60', '10c4', '0001']) {
      assert.is(classifyPort(port(hex(vid), pid)).verdict, 'never', `${hex(vid)}:${pid}`);
    }
  }
});

test('every ZigBee/Z-Wave id is never claimed', () => {
  for (const id of NEVER_IDS) assert.is(classifyPort(port(hex(id.vid), hex(id.pid))).verdict, 'never', `${hex(id.vid)}:${hex(id.pid)}`);
});

test('the Telit trap: PID 10C4 under Telit is a modem, and 10C4 as a PID elsewhere proves nothing', () => {
  const telit = classifyPort(port('1bc7', '10c4'));
  assert.is(telit.verdict, 'never');
  assert.ok(telit.reason.includes('Telit'), telit.reason);
  assert.is(classifyPort(port('abcd', '10c4')).verdict, 'unknown');
  assert.is(classifyPort(port('ea60', '10c4')).verdict, 'unknown', 'swapped VID and PID are not the CP210x');
  assert.is(classifyPort(port('10c4', '1bc7')).verdict, 'unknown');
});

test('303A:1001 (ESP32-S3) is a candidate but 303A:4001 (Nabu Casa ZWA-2) is never claimed', () => {
  assert.is(classifyPort(port('303a', '1001')).verdict, 'candidate');
  assert.is(classifyPort(port('303a', '4001')).verdict, 'never');
  assert.is(classifyPort(port('303a', '0002')).verdict, 'unknown', 'the Espressif VID alone is not enough');
});

// Shared USB-UART chips: the strings decide (HA generated/usb.py descriptions).
const sticks: Array<[string, string, Partial<SerialPortInfo>]> = [
  ['1a86', '55d4', { product: 'Sonoff Zigbee 3.0 USB Dongle Plus V2' }],
  ['10c4', 'ea60', { product: 'Sonoff Zigbee 3.0 USB Dongle Plus' }],
  ['10c4', 'ea60', { pnpId: 'usb-ITead_Sonoff_Zigbee_3.0_USB_Dongle_Plus_7e93dcb7b529ec11-if00-port0' }],
  ['10c4', 'ea60', { byIdPath: '/dev/serial/by-id/usb-Silicon_Labs_slae.sh_cc2652rb_stick_-_slaesh_s_iot_stuff_00_12_4B_00-if00-port0' }],
  ['10c4', 'ea60', { product: 'SkyConnect v1.0', manufacturer: 'Nabu Casa' }],
  ['10c4', 'ea60', { byIdPath: '/dev/serial/by-id/usb-Nabu_Casa_Home_Assistant_Connect_ZBT-1_9e2adbd7-if00-port0' }],
  ['10c4', 'ea60', { product: 'SLZB-07' }],
  ['10c4', 'ea60', { product: 'TubesZB CC2652' }],
  ['1a86', '7523', { product: 'ZigStar Stick' }],
  ['1a86', '7523', { product: 'zig-a-zig-ah!' }],
  ['10c4', 'ea60', { manufacturer: 'ZiGate' }],
  ['0403', '6001', { product: 'ZiGate USB-TTL' }],
  ['1a86', '7523', { product: 'USB Z-Wave controller' }],
];

for (const [vid, pid, strings] of sticks) {
  test(`${vid}:${pid} with ${JSON.stringify(Object.values(strings)[0])} is a stick, never claimed`, () => {
    const c = classifyPort(port(vid, pid, strings));
    assert.is(c.verdict, 'never', c.reason);
    assert.ok(c.reason.includes('ZigBee/Z-Wave stick'), c.reason);
  });
}

test('a LoRa board on the same chip as a stick stays a candidate', () => {
  assert.is(classifyPort(port('1a86', '55d4', { product: 'USB Single Serial', pnpId: 'usb-1a86_USB_Single_Serial_54E2012345-if00' })).verdict, 'candidate');
  assert.is(classifyPort(port('10c4', 'ea60', { product: 'CP2102 USB to UART Bridge Controller', manufacturer: 'Silicon Labs' })).verdict, 'candidate');
});

test('ports without USB ids, with half an id, or with unknown ids are unknown, never candidates', () => {
  assert.is(classifyPort({ path: '/dev/ttyAMA0' }).verdict, 'unknown');
  assert.is(classifyPort(port(null, null)).verdict, 'unknown');
  assert.is(classifyPort(port('10c4', null)).verdict, 'unknown');
  assert.is(classifyPort(port('10c4', 'zzzz')).verdict, 'unknown');
  assert.is(classifyPort(port('not hex', 'ea60')).verdict, 'unknown');
  assert.is(classifyPort(port('067b', '2303')).verdict, 'unknown', 'a Prolific cable is not a known board');
  assert.is(classifyPort(port('1199', null)).verdict, 'never', 'a Sierra modem is refused even without a PID');
});

test('USB ids are read in every spelling the listers use', () => {
  assert.is(parseUsbId('10c4'), 0x10c4);
  assert.is(parseUsbId('10C4'), 0x10c4);
  assert.is(parseUsbId('0x10c4'), 0x10c4);
  assert.is(parseUsbId(' ea60 '), 0xea60);
  for (const bad of ['', '10c45', 'g000', null, undefined]) assert.is(parseUsbId(bad), null, String(bad));
});

test.run();
