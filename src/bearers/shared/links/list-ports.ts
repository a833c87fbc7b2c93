import type { BleService } from './ble-framing.ts';

// Serial ports of this machine with labels, for `fieldbridge ports` and
// GET /api/routing/rnode/ports (docs/api.md 4.8: "lists ports with labels; probes nothing"). Nothing
// is opened: the data comes from udev's database, `udevadm info -e`, the same source
// serialport's own Linux list() reads. A machine without udevadm (a minimal container) has no
// ports to offer, so ENOENT gives an empty list rather than an error.

export interface SerialPortEntry {
  /** Kernel device node, e.g. "/dev/ttyUSB0"; changes when boards are replugged in another order. */
  path: string;
  /** The stable /dev/serial/by-id/... link udev made for it, when there is one (USB devices). */
  by_id: string | null;
  /** USB serial number (udev ID_SERIAL_SHORT), when the board reports one. */
  serial_number: string | null;
  /** USB "vid:pid" in lower-case hex, e.g. "10c4:ea60"; null for on-board UARTs. */
  vid_pid: string | null;
  manufacturer: string | null;
  product: string | null;
  /** The port value to store (docs/api.md 2.7): usb_serial:<sn>, else the by-id path, else the path. */
  port: string;
  /** One line for a person choosing a port. */
  label: string;
}

/** Runs `udevadm info -e` and returns its stdout; rejects like execFile does. */
export type UdevExport = () => Promise<string>;

const runUdevadm: UdevExport = () =>
  new Promise((resolve, reject) => {
    // node:child_process loaded only when ports are listed (about 2.5 MiB of RSS at start).
    process.getBuiltinModule('node:child_process').execFile('udevadm', ['info', '-e'], { maxBuffer: 64 * 1024 * 1024, timeout: 10_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });

/** Lists serial ports; [] when udevadm is missing. Other udevadm failures are thrown. */
export async function listSerialPorts(exportDb: UdevExport = runUdevadm): Promise<SerialPortEntry[]> {
  let text: string;
  try {
    text = await exportDb();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return parseUdevExport(text);
}

// Device names that are serial ports: USB-UART bridges (ttyUSB), CDC-ACM boards with native
// USB (ttyACM), the Raspberry Pi's PL011 and mini UARTs (ttyAMA, ttyS), WCH's own driver
// (ttyWCH), Bluetooth serial (rfcomm).
const SERIAL_NAME = /^\/dev\/(ttyUSB|ttyACM|ttyAMA|ttyS|ttyWCH|ttyXRUSB|rfcomm)\d+$/;
// The 8250 driver registers ttyS0..31 placeholders whether or not a UART is behind them; they
// sit under this devpath. Real UARTs hang off their bus (pnp0 on a PC, soc on a Pi).
const PLACEHOLDER_UART = /^\/devices\/platform\/serial8250\//;

/**
 * Parses the udev database export (`udevadm info -e`): records separated by blank lines,
 * lines "P: devpath", "N: name", "S: symlink", "E: KEY=value". Pure, so tests feed it text.
 */
export function parseUdevExport(text: string): SerialPortEntry[] {
  const ports: SerialPortEntry[] = [];
  for (const record of text.split(/\n\s*\n/)) {
    const env = new Map<string, string>();
    const links: string[] = [];
    for (const line of record.split('\n')) {
      const kind = line.slice(0, 3);
      const value = line.slice(3).trim();
      if (kind === 'E: ') {
        const eq = value.indexOf('=');
        if (eq > 0) env.set(value.slice(0, eq), value.slice(eq + 1));
      } else if (kind === 'S: ') {
        links.push(`/dev/${value}`);
      }
    }
    const path = env.get('DEVNAME') ?? '';
    if (env.get('SUBSYSTEM') !== 'tty' || !SERIAL_NAME.test(path) || PLACEHOLDER_UART.test(env.get('DEVPATH') ?? '')) continue;
    for (const link of (env.get('DEVLINKS') ?? '').split(/\s+/)) if (link && !links.includes(link)) links.push(link);
    ports.push(describePort(path, links, env));
  }
  return ports.sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
}

// systemd >= 252 also writes the USB properties as ID_USB_*; older releases only as ID_*.
const usbProp = (env: Map<string, string>, name: string) => env.get(`ID_USB_${name}`) || env.get(`ID_${name}`) || null;

function describePort(path: string, links: string[], env: Map<string, string>): SerialPortEntry {
  const byId = links.find((l) => l.startsWith('/dev/serial/by-id/')) ?? null;
  const serial = usbProp(env, 'SERIAL_SHORT');
  const vid = usbProp(env, 'VENDOR_ID');
  const pid = usbProp(env, 'MODEL_ID');
  // A chip without a manufacturer string gets its vendor id as ID_VENDOR ("1a86"): not a name.
  const named = (value: string | null) => (value && value.toLowerCase() !== vid?.toLowerCase() ? value : null);
  const manufacturer = named(decodeUdev(usbProp(env, 'VENDOR_ENC'))) ?? env.get('ID_VENDOR_FROM_DATABASE') ?? named(underscored(usbProp(env, 'VENDOR')));
  const product = decodeUdev(usbProp(env, 'MODEL_ENC')) ?? env.get('ID_MODEL_FROM_DATABASE') ?? underscored(usbProp(env, 'MODEL'));
  const vidPid = vid && pid ? `${vid.toLowerCase()}:${pid.toLowerCase()}` : null;
  const port = serial ? `usb_serial:${serial}` : (byId ?? path);
  const what = [manufacturer, product].filter(Boolean).join(' ') || (vidPid ? 'USB serial device' : 'on-board UART');
  const details = [vidPid, serial ? `serial ${serial}` : null].filter(Boolean).join(', ');
  return {
    path,
    by_id: byId,
    serial_number: serial,
    vid_pid: vidPid,
    manufacturer,
    product,
    port,
    label: `${what}${details ? ` (${details})` : ''} on ${path}`,
  };
}

/** udev's *_ENC values escape unsafe bytes as \xNN (UTF-8 bytes). */
function decodeUdev(value: string | null): string | null {
  if (!value) return null;
  const parts = value.split(/(\\x[0-9a-fA-F]{2})/).map((part) =>
    /^\\x[0-9a-fA-F]{2}$/.test(part) ? Buffer.from([parseInt(part.slice(2), 16)]) : Buffer.from(part, 'utf8'),
  );
  const text = Buffer.concat(parts).toString('utf8').trim();
  return text || null;
}

const underscored = (value: string | null) => (value ? value.replace(/_/g, ' ').trim() || null : null);

/** Serial ports, then bonded BLE boards (ble-ports.ts): what GET /api/routing/rnode/ports
 *  lists. A host without D-Bus or BlueZ simply has no BLE entries. */
export async function listAllPorts(bleServices: readonly Pick<BleService, 'uuid' | 'listedAs'>[]): Promise<SerialPortEntry[]> {
  // The D-Bus client loads with the first listing, not with every bridge.
  const { listBlePorts } = await import('./ble-ports.ts');
  const [serial, ble] = await Promise.all([listSerialPorts(), listBlePorts(bleServices)]);
  return [...serial, ...ble.ports];
}
