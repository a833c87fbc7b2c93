// USB ids for `auto` (docs/protocols/usb-ids.md section 5). A generic USB-UART bridge chip is shared by LoRa
// boards and ZigBee/Z-Wave sticks, so a VID:PID alone never proves a device: the product
// strings are checked first, then the caller's protocol probe confirms. Cellular modems and
// known ZigBee/Z-Wave sticks are never opened by `auto` at all: a stray detect burst must not
// reach a modem that ModemManager or another service owns.
//
// VID and PID are compared as separate fields, never as one string or against each other:
// Telit (VID 1BC7) has a PID 0x10C4, the same number as Silicon Labs' VID
// (docs/protocols/usb-ids.md section 5; MM:src/plugins/telit/77-mm-telit-port-types.rules).

/** What a port lister reports about one port; every field but path may be missing. */
export interface SerialPortInfo {
  path: string;
  vendorId?: string | null;
  productId?: string | null;
  serialNumber?: string | null;
  manufacturer?: string | null;
  product?: string | null;
  /** On Linux the /dev/serial/by-id name (serialport's pnpId), e.g. usb-ITead_Sonoff_..-if00-port0. */
  pnpId?: string | null;
  byIdPath?: string | null;
}

export type PortVerdict = 'candidate' | 'never' | 'unknown';

export interface PortClassification {
  verdict: PortVerdict;
  reason: string;
}

interface UsbId {
  vid: number;
  pid: number;
  label: string;
}

// Boards that may be an RNode or a Meshtastic node (docs/protocols/usb-ids.md section 5 table).
export const CANDIDATE_IDS: readonly UsbId[] = [
  { vid: 0x10c4, pid: 0xea60, label: 'SiLabs CP210x (Heltec LoRa32, T-Lora v1.3)' },
  { vid: 0x1a86, pid: 0x55d4, label: 'WCH CH9102 (T-Beam, T-Lora v2, Nano G1)' },
  { vid: 0x1a86, pid: 0x7523, label: 'WCH CH340 (RAK11200)' },
  { vid: 0x0403, pid: 0x6001, label: 'FTDI FT232R (older RNodes, FTDI cables)' },
  { vid: 0x239a, pid: 0x8029, label: 'Adafruit nRF52 (RAK4631, T-Echo)' },
  { vid: 0x239a, pid: 0x0029, label: 'Adafruit nRF52 bootloader (RAK4631, T-Echo)' },
  { vid: 0x303a, pid: 0x1001, label: 'Espressif USB-Serial/JTAG (ESP32-S3 native USB: T-Deck, T3S3, T-Beam Supreme)' },
  { vid: 0x2886, pid: 0x0059, label: 'Seeed XIAO ESP32-S3' },
];

// Cellular modem vendors: every PID (ModemManager plugin VIDs, MM:src/plugins/*/mm-plugin-*.c).
export const NEVER_VENDORS: ReadonlyMap<number, string> = new Map([
  [0x2c7c, 'Quectel cellular modem'],
  [0x1199, 'Sierra Wireless cellular modem'],
  [0x12d1, 'Huawei cellular modem'],
  [0x1bc7, 'Telit cellular modem'],
  [0x1e0e, 'SIMCom cellular modem'],
  [0x19d2, 'ZTE cellular modem'],
  [0x1546, 'u-blox cellular modem'],
  [0x2cb7, 'Fibocom cellular modem'],
  [0x1e2d, 'Cinterion cellular modem'],
  [0x1edd, 'Iridium-branded USB device'],
]);

// ZigBee / Z-Wave sticks with ids of their own (docs/protocols/usb-ids.md section 5; HA generated/usb.py).
// 0403:6015 (FTDI FT-X) is listed as the ConBee III: it is never auto-claimed, although an old
// FTDI-based RNode may use it too; such a board is pinned with usb_serial: or its by-id path.
export const NEVER_IDS: readonly UsbId[] = [
  { vid: 0x1cf1, pid: 0x0030, label: 'ConBee II ZigBee stick' },
  { vid: 0x0403, pid: 0x6015, label: 'ConBee III ZigBee stick (FTDI FT-X)' },
  { vid: 0x10c4, pid: 0x8a2a, label: 'Nortek HUSBZB-1 ZigBee/Z-Wave stick' },
  { vid: 0x10c4, pid: 0x8b34, label: 'BV 2010/10 ZigBee stick' },
  { vid: 0x0658, pid: 0x0200, label: 'Z-Wave stick (Sigma Designs)' },
  { vid: 0x303a, pid: 0x4001, label: 'Nabu Casa ZWA-2 Z-Wave stick' },
];

// Product/manufacturer strings that mark a shared bridge chip as a ZigBee or Z-Wave stick
// (HA generated/usb.py "description" globs, plus docs/protocols/usb-ids.md's zig-a-zig-ah, plus the plain
// words). Matched case-insensitively with '_' read as a space, because the by-id name is the
// udev string with spaces replaced by '_'.
export const STICK_PATTERNS: readonly string[] = [
  '*sonoff*plus*',
  '*2652*',
  '*conbee*',
  '*skyconnect*',
  '*home assistant connect zbt-1*',
  '*slzb-07*',
  '*tubeszb*',
  '*zigstar*',
  '*zig-a-zig-ah*',
  '*zigate*',
  '*zigbee*',
  '*z-wave*',
  '*zwave*',
  '*nabu casa zwa-2*',
];

const STICK_REGEXPS = STICK_PATTERNS.map((glob) => ({ glob, re: globToRegExp(glob) }));

/** Decides whether `auto` may open a port. Pure; the reason is written for a log line. */
export function classifyPort(info: SerialPortInfo): PortClassification {
  const vid = parseUsbId(info.vendorId);
  const pid = parseUsbId(info.productId);
  if (vid === null) return { verdict: 'unknown', reason: 'no USB vendor id (not a USB device, or the lister could not read it)' };
  const vendor = NEVER_VENDORS.get(vid);
  if (vendor) return { verdict: 'never', reason: `${vendor} (VID ${hex(vid)}): never claimed` };
  if (pid === null) return { verdict: 'unknown', reason: `USB ${hex(vid)} without a product id` };
  const id = `${hex(vid)}:${hex(pid)}`;
  const stick = NEVER_IDS.find((n) => n.vid === vid && n.pid === pid);
  if (stick) return { verdict: 'never', reason: `${stick.label} (${id}): never claimed` };
  const strings = describe(info);
  const match = STICK_REGEXPS.find((p) => p.re.test(strings));
  const board = CANDIDATE_IDS.find((c) => c.vid === vid && c.pid === pid);
  if (match) {
    return { verdict: 'never', reason: `USB strings ${JSON.stringify(strings)} match ${match.glob}: a ZigBee/Z-Wave stick (${id}), never claimed` };
  }
  if (board) return { verdict: 'candidate', reason: `${board.label} (${id})` };
  return { verdict: 'unknown', reason: `USB ${id} is not a known LoRa board id` };
}

/** "10c4", "10C4", "0x10c4" -> 0x10c4; anything else -> null. */
export function parseUsbId(text: string | null | undefined): number | null {
  if (typeof text !== 'string') return null;
  const m = /^(?:0x)?([0-9a-f]{1,4})$/i.exec(text.trim());
  return m ? parseInt(m[1], 16) : null;
}

function describe(info: SerialPortInfo): string {
  const byIdName = info.byIdPath ? info.byIdPath.slice(info.byIdPath.lastIndexOf('/') + 1) : null;
  return [info.manufacturer, info.product, info.pnpId, byIdName]
    .filter((s): s is string => typeof s === 'string' && s !== '')
    .join(' ')
    .replace(/_/g, ' ');
}

function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\/-]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 'is');
}

function hex(n: number): string {
  return n.toString(16).toUpperCase().padStart(4, '0');
}
