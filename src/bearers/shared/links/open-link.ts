import { systemClock, type Clock } from '../../../lib/clock.ts';
import { DeviceError } from '../../device-error.ts';
import { silentLogger, type Logger } from '../../../lib/log.ts';
import type { BleFraming } from './ble-framing.ts';
import type { BluezGatt } from './bluez-client.ts';
import { SharedLink } from './link-share.ts';
import type { Link } from './link.ts';
import type { SerialPortEntry } from './list-ports.ts';
import { PortClaims, processPortClaims, serialClaimKey } from './port-claims.ts';
import { formatPortValue, parsePortValue, type PortValue } from './port-value.ts';
import type { SerialLinkOptions } from './serial-link.ts';
import { openTcpLink } from './tcp-link.ts';
import { classifyPort, type SerialPortInfo } from './usb-ids.ts';

// openLink: from a port value (docs/api.md 2.7) to an open Link. Called on every (re)connect, so
// usb_serial:<sn> and auto look at the ports as they are now, after any re-enumeration.
// DeviceSupervisor (device-supervisor.ts) keeps one interface's link up with it.
//
// Each link kind's code is imported when a link of that kind is first opened:
// a bridge without serial devices never loads serialport and its addon, one without ble://
// never loads the D-Bus client, one without usb_serial: or auto never lists ports. Opening a
// link is not the message path; frames never wait for an import. TCP needs only node:net,
// which the HTTP server has loaded anyway, so it stays a static import.

// docs/protocols/rnode.md 1.1: opening the port can reboot an ESP32; the host waits 2.0 s before detect.
export const ESP32_RESET_WAIT_MS = 2_000;
export const DEFAULT_PROBE_TIMEOUT_MS = 3_000;

/** Tells whether the device behind a freshly opened link speaks the caller's protocol. */
export type Probe = (link: Link) => Promise<boolean>;

export interface OpenLinkOptions {
  clock?: Clock;
  log?: Logger;
  /** Who claims the device (the interface id); a device claimed by another owner is refused. */
  owner?: string;
  claims?: PortClaims;
  /** Lists serial ports (default: udev through list-ports.ts). Tests inject their own. */
  listPorts?: () => Promise<SerialPortEntry[]>;
  /** Required for `auto`: the driver's detect exchange (RNode: docs/protocols/rnode.md 1.4 detect burst). */
  probe?: Probe;
  probeTimeoutMs?: number;
  baudRate?: number;
  /** Wait after opening a serial port, bytes heard meanwhile dropped (default 2000 ms). */
  resetWaitMs?: number;
  connectTimeoutMs?: number;
  /** Serves sim://<channel> (the simulators); absent = sim:// is refused. */
  openSim?: (channel: string) => Promise<Link>;
  /** The port of a tcp:// value that names none (default 7633, the RNode's). */
  defaultTcpPort?: number;
  /** How the driver's bytes travel over ble:// (the driver module's `bleFraming`). */
  bleFraming?: BleFraming;
  /** Speaks to BlueZ for ble:// (a new one per open); default: the system bus (docs/ports.md "BLE"). */
  bluez?: () => BluezGatt;
}

export async function openLink(device: string | PortValue, options: OpenLinkOptions = {}): Promise<Link> {
  let value: PortValue;
  if (typeof device === 'string') {
    const parsed = parsePortValue(device, { defaultTcpPort: options.defaultTcpPort });
    if (!parsed.ok) throw new DeviceError('ERR_PORT_VALUE', `port value ${parsed.error}`, { retryable: false });
    value = parsed.value;
  } else value = device;
  const o = resolveOptions(options);
  switch (value.kind) {
    case 'path':
      return openSerialClaimed(value.path, o);
    case 'usb_serial':
      return openSerialClaimed(await findBySerialNumber(value.serialNumber, o), o);
    case 'auto':
      return openAuto(o);
    case 'tcp':
      return claimed(formatPortValue(value), o, () =>
        openTcpLink(value.host, value.port, { clock: o.clock, connectTimeoutMs: o.connectTimeoutMs, report: o.report }),
      );
    case 'ble':
      return claimed(formatPortValue(value), o, async () =>
        (await import('./ble-link.ts')).openBleLink(value, { bus: o.bluez?.(), framing: o.bleFraming, report: o.report }),
      );
    case 'tls':
    case 'udp':
      throw new DeviceError('ERR_PORT_UNSUPPORTED', `${formatPortValue(value)}: ${value.kind}:// is opened by the driver of a kind that speaks it; this interface kind does not`, { retryable: false });
    case 'sim':
      if (!o.openSim) {
        throw new DeviceError('ERR_PORT_UNSUPPORTED', `${formatPortValue(value)}: this interface kind has no simulator behind sim:// here`, { retryable: false });
      }
      return o.openSim(value.channel);
  }
}

type Resolved = Required<Pick<OpenLinkOptions, 'clock' | 'log' | 'owner' | 'claims' | 'listPorts' | 'probeTimeoutMs' | 'resetWaitMs'>> &
  OpenLinkOptions & { report: (error: unknown) => void };

function resolveOptions(options: OpenLinkOptions): Resolved {
  const log = options.log ?? silentLogger;
  return {
    ...options,
    clock: options.clock ?? systemClock,
    log,
    owner: options.owner ?? 'anonymous',
    claims: options.claims ?? processPortClaims,
    listPorts: options.listPorts ?? (async () => (await import('./list-ports.ts')).listSerialPorts()),
    probeTimeoutMs: options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
    resetWaitMs: options.resetWaitMs ?? ESP32_RESET_WAIT_MS,
    report: (error) => log.error('link.listener_failed', { error: error instanceof Error ? error.message : String(error) }),
  };
}

/** Claims `key`, opens, and releases the claim when the link closes or the open fails. */
async function claimed(key: string, o: Resolved, open: () => Promise<Link>): Promise<Link> {
  if (!o.claims.claim(key, o.owner)) {
    throw new DeviceError('ERR_PORT_BUSY', `${key} is already used by interface ${o.claims.holder(key)}`, { retryable: true });
  }
  try {
    const link = await open();
    link.onClose(() => o.claims.release(key, o.owner));
    return link;
  } catch (error) {
    o.claims.release(key, o.owner);
    throw error;
  }
}

/** serial-link.ts (and with it serialport and its native addon) on the first serial open; its
 *  default speed (115200) applies when the driver names none. */
async function openSerial(path: string, o: Resolved): Promise<Link> {
  const { openSerialLink } = await import('./serial-link.ts');
  const options: SerialLinkOptions = { baudRate: o.baudRate, report: o.report };
  return openSerialLink(path, options);
}

/** Opens a serial path and lets an ESP32 finish rebooting before anyone writes to it. */
async function openSerialClaimed(path: string, o: Resolved): Promise<Link> {
  const link = await claimed(serialClaimKey(path), o, () => openSerial(path, o));
  const shared = new SharedLink(link, o.report);
  shared.mute();
  await sleep(o.clock, o.resetWaitMs);
  if (shared.closedReason !== null) throw new DeviceError('ERR_PORT_GONE', `${path} went away right after opening: ${shared.closedReason}`, { retryable: true });
  return shared.view();
}

async function findBySerialNumber(serialNumber: string, o: Resolved): Promise<string> {
  const ports = await o.listPorts();
  // A composite board (two UARTs) shows one serial number twice; the lister sorts by path,
  // so the first interface is taken, the same one every time.
  const found = ports.find((p) => p.serial_number === serialNumber);
  if (!found) {
    const seen = ports.map((p) => p.serial_number).filter(Boolean);
    throw new DeviceError('ERR_PORT_NOT_FOUND', `no USB serial port with serial number ${serialNumber} is plugged in${seen.length ? ` (present: ${seen.join(', ')})` : ' (no USB serial ports with serial numbers present)'}`, { retryable: true });
  }
  return found.by_id ?? found.path;
}

/**
 * auto (docs/api.md 2.7): open each candidate board in path order, skipping never-claim ids and ports
 * another interface holds, wait out the ESP32 reset, run the probe, keep the first that answers.
 */
async function openAuto(o: Resolved): Promise<Link> {
  if (!o.probe) throw new DeviceError('ERR_PORT_UNSUPPORTED', 'auto needs a driver that can probe for its device', { retryable: false });
  const ports = await o.listPorts();
  const tried: string[] = [];
  for (const port of ports) {
    const verdict = classifyPort(toPortInfo(port));
    if (verdict.verdict !== 'candidate') {
      o.log.debug('auto.skip', { path: port.path, verdict: verdict.verdict, reason: verdict.reason });
      tried.push(`${port.path}: ${verdict.verdict} (${verdict.reason})`);
      continue;
    }
    const key = serialClaimKey(port.path);
    const holder = o.claims.holder(key);
    if (holder !== null && holder !== o.owner) {
      tried.push(`${port.path}: used by interface ${holder}`);
      continue;
    }
    let link: Link;
    try {
      link = await claimed(key, o, () => openSerial(port.path, o));
    } catch (error) {
      tried.push(`${port.path}: ${(error as Error).message}`);
      continue;
    }
    const shared = new SharedLink(link, o.report);
    shared.mute();
    await sleep(o.clock, o.resetWaitMs);
    o.log.info('auto.probe', { path: port.path, board: verdict.reason });
    const answered = await probeWithTimeout(o, shared.view(false));
    if (answered) {
      o.log.info('auto.claimed', { path: port.path, owner: o.owner });
      return shared.view();
    }
    tried.push(`${port.path}: ${verdict.reason}, did not answer the probe`);
    await link.close();
  }
  throw new DeviceError('ERR_PORT_NOT_FOUND', `auto found no board that answers${tried.length ? `: ${tried.join('; ')}` : ': no serial ports present'}`, { retryable: true });
}

async function probeWithTimeout(o: Resolved, view: Link): Promise<boolean> {
  let timer: ReturnType<Clock['setTimeout']> | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = o.clock.setTimeout(() => resolve(false), o.probeTimeoutMs);
  });
  const probe = Promise.resolve()
    .then(() => o.probe!(view))
    .catch((error) => {
      o.log.debug('auto.probe_failed', { path: view.description, error: (error as Error).message });
      return false;
    });
  const closed = new Promise<boolean>((resolve) => view.onClose(() => resolve(false)));
  try {
    return await Promise.race([probe, timeout, closed]);
  } finally {
    if (timer !== undefined) o.clock.clearTimeout(timer);
    await view.close(); // hands the link back; the probe hears nothing more
  }
}

/** list-ports.ts entries in the shape usb-ids.ts classifies ("10c4:ea60" split in two). */
export function toPortInfo(entry: SerialPortEntry): SerialPortInfo {
  const [vendorId, productId] = entry.vid_pid ? entry.vid_pid.split(':') : [null, null];
  return {
    path: entry.path,
    vendorId,
    productId,
    serialNumber: entry.serial_number,
    manufacturer: entry.manufacturer,
    product: entry.product,
    byIdPath: entry.by_id,
  };
}

export function sleep(clock: Clock, ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}
