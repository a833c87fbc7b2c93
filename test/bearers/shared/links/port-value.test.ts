import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { formatPortValue, parsePortValue, PortValueSchema, type PortValue } from '../../../../src/bearers/shared/links/port-value.ts';

const good: Array<[string, PortValue]> = [
  ['auto', { kind: 'auto' }],
  ['AUTO', { kind: 'auto' }],
  ['usb_serial:0001A2B3', { kind: 'usb_serial', serialNumber: '0001A2B3' }],
  ['usb_serial:a3f2c1d0e5b4_XYZ-1', { kind: 'usb_serial', serialNumber: 'a3f2c1d0e5b4_XYZ-1' }],
  ['/dev/serial/by-id/usb-Silicon_Labs_CP2102_USB_to_UART_Bridge_Controller_0001-if00-port0', { kind: 'path', path: '/dev/serial/by-id/usb-Silicon_Labs_CP2102_USB_to_UART_Bridge_Controller_0001-if00-port0' }],
  ['/dev/ttyUSB0', { kind: 'path', path: '/dev/ttyUSB0' }],
  ['/dev/pts/3', { kind: 'path', path: '/dev/pts/3' }],
  ['/run/fieldbridge/rnode-sim', { kind: 'path', path: '/run/fieldbridge/rnode-sim' }],
  ['tcp://10.0.0.5', { kind: 'tcp', host: '10.0.0.5', port: 7633 }],
  ['tcp://10.0.0.5:4403', { kind: 'tcp', host: '10.0.0.5', port: 4403 }],
  ['tcp://RNode.local', { kind: 'tcp', host: 'rnode.local', port: 7633 }],
  ['TCP://rnode-1.lan:65535', { kind: 'tcp', host: 'rnode-1.lan', port: 65535 }],
  ['tcp://[fe80::1]:7633', { kind: 'tcp', host: 'fe80::1', port: 7633 }],
  ['tcp://[::1]', { kind: 'tcp', host: '::1', port: 7633 }],
  ['ble://AA:BB:CC:DD:EE:FF', { kind: 'ble', mac: 'AA:BB:CC:DD:EE:FF', name: null }],
  ['ble://aa:bb:cc:dd:ee:0f', { kind: 'ble', mac: 'AA:BB:CC:DD:EE:0F', name: null }],
  ['ble://RNode 3A4B', { kind: 'ble', mac: null, name: 'RNode 3A4B' }],
  ['ble://T-Echo', { kind: 'ble', mac: null, name: 'T-Echo' }],
  ['tls://takserver.example:8089', { kind: 'tls', host: 'takserver.example', port: 8089 }],
  ['udp://239.2.3.1:6969', { kind: 'udp', host: '239.2.3.1', port: 6969 }],
  ['UDP://[ff02::1]:6969', { kind: 'udp', host: 'ff02::1', port: 6969 }],
  ['sim://lab', { kind: 'sim', channel: 'lab' }],
  ['sim://chan_2.eu-868', { kind: 'sim', channel: 'chan_2.eu-868' }],
];

for (const [text, value] of good) {
  test(`accepts ${JSON.stringify(text)}`, () => {
    const result = parsePortValue(text);
    assert.equal(result, { ok: true, value });
    assert.ok(PortValueSchema.safeParse(text).success, 'the schema agrees');
  });
}

// Every bad form, with a fragment the message must contain so a user knows what to fix.
const bad: Array<[string, string]> = [
  ['', 'is empty'],
  [' auto', 'leading or trailing spaces'],
  ['auto ', 'leading or trailing spaces'],
  ['/dev/ttyUSB0\n', 'leading or trailing spaces'],
  ['/dev/tty\u0000USB0', 'control character'],
  ['x'.repeat(513), 'at most 512'],
  ['automatic', 'not a port value'],
  ['ttyUSB0', 'must be absolute'],
  ['COM3', 'must be absolute'],
  ['rnode', 'not a port value'],
  ['http://10.0.0.5', "unknown scheme 'http'"],
  ['ftp://10.0.0.5:7633', "unknown scheme 'ftp'"],
  ['udp://239.2.3.1', 'needs a port'],
  ['tls://takserver', 'needs a port'],
  ['tls:takserver:8089', 'write tls://'],
  ['udp://239.2.3.1:70000', 'UDP port 70000 is out of range'],
  ['tls://', 'needs a host and a port'],
  ['serial:///dev/ttyUSB0', "unknown scheme 'serial'"],
  ['/', 'names a directory'],
  ['/dev/serial/by-id/', 'names a directory'],
  ['/dev//ttyUSB0', "empty segment"],
  ['/dev/../etc/shadow', "'..'"],
  ['/dev/./ttyUSB0', "'.'"],
  ['usb_serial:', 'needs the board'],
  ['usb_serial://0001', "takes no '//'"],
  ['usb_serial:has space', 'printable ASCII without spaces'],
  ['usb_serial:séries', 'printable ASCII without spaces'],
  ['usb_serial:' + 'A'.repeat(127), 'at most 126'],
  ['tcp://', 'needs a host'],
  ['tcp:10.0.0.5', 'write tcp://'],
  ['tcp://10.0.0.5:', 'is not a number'],
  ['tcp://10.0.0.5:0', 'out of range'],
  ['tcp://10.0.0.5:65536', 'out of range'],
  ['tcp://10.0.0.5:99999', 'out of range'],
  ['tcp://10.0.0.5:76x3', 'is not a number'],
  ['tcp://10.0.0.5:-1', 'is not a number'],
  ['tcp://:7633', 'needs a host'],
  ['tcp://10.0.0.256', 'not a host name or IPv4'],
  ['tcp://10.0.0', 'not a host name or IPv4'],
  ['tcp://bad_host', 'not a host name or IPv4'],
  ['tcp://-rnode.lan', 'not a host name or IPv4'],
  ['tcp://10.0.0.5/path', 'remove the path'],
  ['tcp://user@10.0.0.5', 'remove the path'],
  ['tcp://fe80::1', 'in brackets'],
  ['tcp://[fe80::g]', 'not an IPv6 address'],
  ['tcp://[:::]', 'not an IPv6 address'],
  ['tcp://[10.0.0.5]', 'not an IPv6 address'],
  ['ble://', 'needs the bonded'],
  ['ble:RNode', 'write ble://'],
  ['ble://AA:BB:CC:DD:EE', 'not a Bluetooth MAC'],
  ['ble://AA:BB:CC:DD:EE:FF:00', 'not a Bluetooth MAC'],
  ['ble://AA:BB:CC:DD:EE:GG', 'not a Bluetooth MAC'],
  ['ble://AABBCCDDEEFF:', 'not a Bluetooth MAC'],
  ['ble://AA-BB-CC-DD-EE-FF', 'not a Bluetooth MAC'],
  ['ble://' + 'n'.repeat(249), 'longer than 248 bytes'],
  ['sim://', 'sim channel'],
  ['sim:lab', 'write sim://'],
  ['sim://lab/1', 'sim channel'],
  ['sim://' + 'c'.repeat(65), 'sim channel'],
];

for (const [text, fragment] of bad) {
  test(`refuses ${JSON.stringify(text.length > 40 ? text.slice(0, 40) + '...' : text)} saying "${fragment}"`, () => {
    const result = parsePortValue(text);
    assert.is(result.ok, false);
    if (!result.ok) assert.ok(result.error.includes(fragment), `message was: ${result.error}`);
    const checked = PortValueSchema.safeParse(text);
    assert.is(checked.success, false);
    if (!checked.success) assert.ok(checked.error.issues[0].message.startsWith('port value '), checked.error.issues[0].message);
  });
}

test('the schema refuses values that are not strings', () => {
  for (const value of [null, 7633, { kind: 'auto' }, ['auto']]) assert.is(PortValueSchema.safeParse(value).success, false);
});

test('formatPortValue reads back to the same value, with the default TCP port left out', () => {
  for (const [, value] of good) {
    const text = formatPortValue(value);
    assert.equal(parsePortValue(text), { ok: true, value }, text);
  }
  assert.is(formatPortValue({ kind: 'tcp', host: '10.0.0.5', port: 7633 }), 'tcp://10.0.0.5');
  assert.is(formatPortValue({ kind: 'tcp', host: 'fe80::1', port: 4403 }), 'tcp://[fe80::1]:4403');
});

test('the schema converts to JSON Schema for the OpenAPI document', () => {
  const json = z.toJSONSchema(PortValueSchema) as { type: string; description: string };
  assert.is(json.type, 'string');
  assert.ok(json.description.includes('tcp://'));
});

test.run();
