import { realpathSync, stat, statSync } from 'node:fs';
import { SerialPort } from 'serialport';
import { systemClock, type Clock, type TimerHandle } from '../../../lib/clock.ts';
import { DeviceError } from '../../device-error.ts';
import { EventLink, writeDone } from './link-events.ts';
import type { Link } from './link.ts';

// A Link over a local serial port (USB CDC/UART, or a pty in tests and for the simulators).
// 8N1 with no flow control of any kind (docs/protocols/rnode.md 1.1: 115200 8N1, no XON/XOFF, no RTS/CTS,
// no DSR/DTR handshake). Every failure becomes a rejected open with a stable code or an
// onClose reason; nothing here throws out of a stream callback.

export const DEFAULT_BAUD_RATE = 115_200; // docs/protocols/rnode.md 1.1; RF:Config.h serial_baudrate
// How often the device node is checked (see DeviceWatch below).
export const DEVICE_CHECK_INTERVAL_MS = 1_000;

export interface SerialLinkOptions {
  baudRate?: number;
  /** Runs the device-node check; the system clock unless a test passes a fake one. */
  clock?: Clock;
  /** Where a driver listener's exception is reported (it is never rethrown). */
  report?: (error: unknown) => void;
}

export async function openSerialLink(path: string, options: SerialLinkOptions = {}): Promise<Link> {
  const port = new SerialPort({
    path,
    baudRate: options.baudRate ?? DEFAULT_BAUD_RATE,
    dataBits: 8,
    stopBits: 1,
    parity: 'none',
    rtscts: false,
    xon: false,
    xoff: false,
    xany: false,
    // An exclusive lock: a second opener (another interface, ModemManager, a ZigBee daemon)
    // fails to open instead of sharing the byte stream.
    lock: true,
    autoOpen: false,
  });
  // Errors after open arrive here; without a listener an 'error' event would crash the process.
  let lastError: string | null = null;
  port.on('error', (error: Error) => {
    lastError = error.message;
  });
  await new Promise<void>((resolve, reject) => {
    port.open((error) => (error ? reject(openError(path, error)) : resolve()));
  });
  const link = new SerialLink(port, path, options.report, () => lastError);
  watchDeviceNode(link, path, options.clock ?? systemClock);
  return link;
}

// The serialport binding misses some hang-ups: when a tty is hung up while a read is in
// flight, read() returns 0 and the binding retries the read forever (bindings-cpp 13
// unix-read.js treats 0 bytes as "try again"), so no close event ever comes. Seen here with a
// pty whose other side vanished within milliseconds of the open; a USB unplug hangs the tty
// up the same way. A vanished device also loses its node (/dev/ttyUSB0, /dev/pts/N), so a
// periodic stat of the node notices what the binding does not, and closing the port ends the
// binding's spin.
function watchDeviceNode(link: SerialLink, path: string, clock: Clock): void {
  let node: string;
  let rdev: number;
  try {
    node = realpathSync(path);
    rdev = statSync(node).rdev;
  } catch {
    return; // opened but already gone: the binding's own close will report it
  }
  let timer: TimerHandle | null = null;
  const check = () => {
    timer = null;
    stat(node, (error, st) => {
      if (link.isClosed) return;
      if (error || st.rdev !== rdev) link.vanished(`device gone from ${path} (its device node ${node} ${error ? 'disappeared' : 'now belongs to another device'})`);
      else timer = clock.setTimeout(check, DEVICE_CHECK_INTERVAL_MS);
    });
  };
  timer = clock.setTimeout(check, DEVICE_CHECK_INTERVAL_MS);
  link.onClose(() => {
    if (timer !== null) clock.clearTimeout(timer);
  });
}

class SerialLink extends EventLink implements Link {
  readonly kind = 'serial' as const;
  readonly description: string;
  readonly #port: SerialPort;
  #closing = false;
  #vanishedReason: string | null = null;

  constructor(port: SerialPort, path: string, report: ((error: unknown) => void) | undefined, lastError: () => string | null) {
    super(report);
    this.#port = port;
    this.description = path;
    port.on('data', (chunk: Buffer) => this.events.emitData(chunk));
    port.on('close', (error: (Error & { disconnected?: boolean }) | null) => {
      if (this.#vanishedReason !== null) this.events.emitClose(this.#vanishedReason);
      else if (this.#closing) this.events.emitClose('closed by the bridge');
      else if (error?.disconnected) this.events.emitClose(`device gone from ${path} (unplugged or reset): ${error.message}`);
      else this.events.emitClose(`${path} closed: ${error?.message ?? lastError() ?? 'no reason given'}`);
    });
  }

  get isClosed(): boolean {
    return this.events.closed;
  }

  /** The device went away without the binding noticing: close with that reason. */
  vanished(reason: string): void {
    if (this.events.closed || this.#closing) return;
    this.#vanishedReason = reason;
    this.#closing = true;
    if (!this.#port.isOpen) this.events.emitClose(reason);
    else this.#port.close(() => this.events.emitClose(reason));
  }

  write(data: Uint8Array): Promise<void> {
    if (this.events.closed || this.#closing || !this.#port.isOpen) return Promise.reject(this.events.closedError(this.description));
    // Resolves once the bytes are handed to the kernel. tcdrain (port.drain) is not waited
    // for: on a pty it blocks until the other side reads, and flow control is the
    // driver's business (RNode READY, docs/protocols/rnode.md 1.5).
    return writeDone(this.description, (done) => this.#port.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength), done));
  }

  close(): Promise<void> {
    if (this.events.closed) return Promise.resolve();
    this.#closing = true;
    return new Promise((resolve) => {
      if (!this.#port.isOpen) {
        this.events.emitClose('closed by the bridge');
        return resolve();
      }
      // A close error (the device vanished meanwhile) still leaves the link closed.
      this.#port.close(() => {
        this.events.emitClose('closed by the bridge');
        resolve();
      });
    });
  }
}

/** Maps the binding's open errors (it gives messages, not errno codes) to stable codes. */
function openError(path: string, error: Error): DeviceError {
  const text = error.message;
  const facts = { port: path, systemError: text };
  if (/no such file or directory/i.test(text)) {
    return new DeviceError('ERR_PORT_NOT_FOUND', `no device at ${path} (not plugged in, or the path is wrong)`, { retryable: true, facts });
  }
  if (/permission denied/i.test(text)) {
    return new DeviceError('ERR_PORT_PERMISSION', `permission denied opening ${path}: the service user needs the dialout group (or a udev rule)`, { retryable: false, facts });
  }
  if (/cannot lock port|resource temporarily unavailable|device or resource busy/i.test(text)) {
    return new DeviceError('ERR_PORT_BUSY', `${path} is in use by another program or interface`, { retryable: true, facts });
  }
  if (/inappropriate ioctl|not a typewriter/i.test(text)) {
    return new DeviceError('ERR_PORT_NOT_SERIAL', `${path} is not a serial port`, { retryable: false, facts });
  }
  return new DeviceError('ERR_PORT_OPEN', `opening ${path} failed: ${text}`, { retryable: true, facts });
}
