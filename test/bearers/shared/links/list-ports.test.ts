import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { listSerialPorts, parseUdevExport } from '../../../../src/bearers/shared/links/list-ports.ts';

const fixture = readFileSync(join(import.meta.dirname, 'fixtures', 'udevadm-export-pi.txt'), 'utf8');
const ports = parseUdevExport(fixture);
const byPath = (path: string) => ports.find((p) => p.path === path);

test('lists the serial ports of a Raspberry Pi export, sorted, and nothing else', () => {
  // ttyS1 is an 8250 placeholder, tty1 a virtual console, ttyUSB9 not in the tty subsystem.
  assert.equal(ports.map((p) => p.path), ['/dev/ttyACM0', '/dev/ttyAMA0', '/dev/ttyS0', '/dev/ttyUSB0', '/dev/ttyUSB1']);
});

test('a USB board with a serial number is pinned by it (docs/api.md 2.7 usb_serial:<sn>)', () => {
  assert.equal(byPath('/dev/ttyUSB0'), {
    path: '/dev/ttyUSB0',
    by_id: '/dev/serial/by-id/usb-Silicon_Labs_CP2102_USB_to_UART_Bridge_Controller_0001-if00-port0',
    serial_number: '0001',
    vid_pid: '10c4:ea60',
    manufacturer: 'Silicon Labs',
    product: 'CP2102 USB to UART Bridge Controller',
    port: 'usb_serial:0001',
    label: 'Silicon Labs CP2102 USB to UART Bridge Controller (10c4:ea60, serial 0001) on /dev/ttyUSB0',
  });
});

test('the ID_USB_* properties of newer systemd are read, ids in lower case', () => {
  const rak = byPath('/dev/ttyACM0')!;
  assert.is(rak.vid_pid, '239a:8029');
  assert.is(rak.serial_number, 'E6B2C1F4D3A5B7C9');
  assert.is(rak.manufacturer, 'RAKwireless');
  assert.is(rak.product, 'WisCore RAK4631 Board');
  assert.is(rak.port, 'usb_serial:E6B2C1F4D3A5B7C9');
});

test('a board without a serial number is named by its by-id link; a vendor id is not a manufacturer', () => {
  const ch = byPath('/dev/ttyUSB1')!;
  assert.is(ch.serial_number, null);
  assert.is(ch.port, '/dev/serial/by-id/usb-1a86_USB_Single_Serial-if00-port0');
  assert.is(ch.manufacturer, null);
  assert.is(ch.product, 'USB Single Serial');
  assert.is(ch.label, 'USB Single Serial (1a86:55d4) on /dev/ttyUSB1');
});

test('an on-board UART is named by its path', () => {
  const uart = byPath('/dev/ttyAMA0')!;
  assert.equal([uart.port, uart.by_id, uart.vid_pid, uart.manufacturer, uart.product], ['/dev/ttyAMA0', null, null, null, null]);
  assert.is(uart.label, 'on-board UART on /dev/ttyAMA0');
});

test('\\xNN escapes are UTF-8 bytes', () => {
  const [port] = parseUdevExport('N: ttyUSB3\nE: SUBSYSTEM=tty\nE: DEVNAME=/dev/ttyUSB3\nE: ID_VENDOR_ID=0403\nE: ID_MODEL_ID=6001\nE: ID_MODEL_ENC=Radio\\x20\\xc3\\xa9t\\xc3\\xa9\\x5c');
  assert.is(port.product, 'Radio été\\');
  assert.is(port.port, '/dev/ttyUSB3');
});

test('bad input gives no ports and never throws', () => {
  assert.equal(parseUdevExport(''), []);
  assert.equal(parseUdevExport('garbage\n\n\nE: =\nE: SUBSYSTEM\nS:\n'), []);
  // A tty record without DEVNAME, or a DEVNAME that is not a serial device.
  assert.equal(parseUdevExport('E: SUBSYSTEM=tty\n\nE: SUBSYSTEM=tty\nE: DEVNAME=/dev/ttyUSB\n\nE: SUBSYSTEM=tty\nE: DEVNAME=/dev/console'), []);
  // Binary noise.
  const noise = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)).toString('latin1');
  assert.equal(parseUdevExport(noise), []);
});

test('a machine without udevadm lists no ports (ENOENT), other failures are errors', async () => {
  assert.equal(await listSerialPorts(() => Promise.reject(Object.assign(new Error('spawn udevadm ENOENT'), { code: 'ENOENT' }))), []);
  try {
    await listSerialPorts(() => Promise.reject(Object.assign(new Error('udevadm exited with 1'), { code: 1 })));
    assert.unreachable('should have thrown');
  } catch (error) {
    assert.match((error as Error).message, 'exited with 1');
  }
});

test('the real udevadm: missing from PATH gives [], present gives a list', async () => {
  const path = process.env.PATH;
  process.env.PATH = '/nonexistent';
  try {
    assert.equal(await listSerialPorts(), []);
  } finally {
    process.env.PATH = path;
  }
  assert.ok(Array.isArray(await listSerialPorts()));
});

test.run();
