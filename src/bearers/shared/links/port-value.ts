import { isIPv4, isIPv6 } from 'node:net';
import { z } from 'zod';

// Port (connection) values: how an interface names its device (docs/api.md 2.7 "Port (connection)
// values"; docs/design.md section 6 adds sim:// for the built-in simulators). Parsing is pure: no
// file system, no DNS. Whether the device is there is the supervisor's business, at open time.
//
// Decisions (docs/ports.md says the same to users):
//  - A device path is any absolute path, not only /dev/...: udev rules, socat links and the
//    simulators' --pty links live elsewhere, and opening a path that is not a terminal fails
//    cleanly at open. /dev/serial/by-id/... is the recommended form because it survives
//    re-enumeration; /dev/ttyUSB0 does not.
//  - Scheme words (auto, usb_serial, tcp, ble, sim) are matched case-insensitively, as URI
//    schemes are (RFC 3986 section 3.1); nothing else is folded.
//  - Leading or trailing spaces are an error rather than trimmed: a value that would be
//    stored differently from what was typed hides mistakes.

export const RNODE_TCP_PORT = 7633; // docs/protocols/rnode.md 1.1: the board listens on TCP 7633
const MAX_VALUE_LENGTH = 512;
// A USB string descriptor holds at most 126 UTF-16 characters (USB 2.0 section 9.6.7);
// udev's ID_SERIAL_SHORT, which the port lister reports, has spaces replaced by '_'.
const MAX_USB_SERIAL_LENGTH = 126;
// A BLE device name is at most 248 bytes (Core spec Vol 3 Part C 12.1).
const MAX_BLE_NAME_BYTES = 248;
const SIM_CHANNEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export type PortValue =
  | { kind: 'auto' }
  | { kind: 'usb_serial'; serialNumber: string }
  | { kind: 'path'; path: string }
  | { kind: 'tcp'; host: string; port: number }
  /** A TLS stream or UDP datagrams (unicast or a multicast group): a kind whose driver speaks
   *  them opens them itself, with what its settings say (certificates, group membership). */
  | { kind: 'tls' | 'udp'; host: string; port: number }
  | { kind: 'ble'; mac: string | null; name: string | null }
  | { kind: 'sim'; channel: string };

export type PortValueResult = { ok: true; value: PortValue } | { ok: false; error: string };

const EXPECTED =
  'auto, usb_serial:<serial_number>, an absolute device path such as /dev/serial/by-id/..., tcp://<host>[:port], tls://<host>:<port> or udp://<host>:<port> (kinds that speak them), ble://<name_or_MAC> or sim://<channel>';

/** `defaultTcpPort`: the port of a tcp:// value that names none (the RNode's 7633 unless the
 *  driver says otherwise: Meshtastic listens on 4403). */
export function parsePortValue(text: string, options: { defaultTcpPort?: number } = {}): PortValueResult {
  if (typeof text !== 'string') return fail(`expected a string (${EXPECTED})`);
  if (text === '') return fail(`is empty; expected ${EXPECTED}`);
  if (text.length > MAX_VALUE_LENGTH) return fail(`is ${text.length} characters long; at most ${MAX_VALUE_LENGTH} allowed`);
  if (text.trim() !== text) return fail(`has leading or trailing spaces: ${JSON.stringify(text)}`);
  if (/[\u0000-\u001f\u007f]/.test(text)) return fail('contains a control character');

  if (text.toLowerCase() === 'auto') return { ok: true, value: { kind: 'auto' } };
  if (text.startsWith('/')) return parsePath(text);

  const scheme = /^([A-Za-z][A-Za-z0-9+._-]*):(\/\/)?/.exec(text);
  if (!scheme) {
    const hint = /^(tty|com\d|serial)/i.test(text) ? ` (a device path must be absolute, e.g. /dev/${text})` : '';
    return fail(`${JSON.stringify(text)} is not a port value${hint}; expected ${EXPECTED}`);
  }
  const name = scheme[1].toLowerCase();
  const slashes = scheme[2] === '//';
  const rest = text.slice(scheme[0].length);
  switch (name) {
    case 'usb_serial':
      if (slashes) return fail(`usb_serial takes no '//': write usb_serial:${rest}`);
      return parseUsbSerial(rest);
    case 'tcp':
      if (!slashes) return fail(`write tcp://<host>[:port], got ${JSON.stringify(text)}`);
      return parseTcp(rest, options.defaultTcpPort ?? RNODE_TCP_PORT);
    case 'tls':
    case 'udp': {
      if (!slashes) return fail(`write ${name}://<host>:<port>, got ${JSON.stringify(text)}`);
      // No default port: which one is a matter of the protocol spoken over it, not the scheme.
      const parsed = parseTcp(rest, 0, name);
      if (parsed.ok && parsed.value.kind === 'tcp' && parsed.value.port === 0) return fail(`${name}:// needs a port, e.g. ${name}://${parsed.value.host}:${name === 'tls' ? 8089 : 6969}`);
      return parsed.ok && parsed.value.kind === 'tcp' ? { ok: true, value: { kind: name, host: parsed.value.host, port: parsed.value.port } } : parsed;
    }
    case 'ble':
      if (!slashes) return fail(`write ble://<name_or_MAC>, got ${JSON.stringify(text)}`);
      return parseBle(rest);
    case 'sim':
      if (!slashes) return fail(`write sim://<channel>, got ${JSON.stringify(text)}`);
      if (!SIM_CHANNEL.test(rest)) return fail(`sim channel ${JSON.stringify(rest)} must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
      return { ok: true, value: { kind: 'sim', channel: rest } };
    default:
      return fail(`unknown scheme '${name}'; expected ${EXPECTED}`);
  }
}

/** The canonical text of a port value (what parsePortValue reads back to the same value). */
export function formatPortValue(value: PortValue): string {
  switch (value.kind) {
    case 'auto':
      return 'auto';
    case 'usb_serial':
      return `usb_serial:${value.serialNumber}`;
    case 'path':
      return value.path;
    case 'tcp':
      return `tcp://${value.host.includes(':') ? `[${value.host}]` : value.host}${value.port === RNODE_TCP_PORT ? '' : `:${value.port}`}`;
    case 'tls':
    case 'udp':
      return `${value.kind}://${value.host.includes(':') ? `[${value.host}]` : value.host}:${value.port}`;
    case 'ble':
      return `ble://${value.mac ?? value.name}`;
    case 'sim':
      return `sim://${value.channel}`;
  }
}

/**
 * The API and settings schema: a string that parsePortValue accepts. Transform-free so it
 * converts to JSON Schema (docs/dependencies.md, "zod 4.6"); callers parse again to get the structure.
 */
export const PortValueSchema = z
  .string()
  .superRefine((text, ctx) => {
    const result = parsePortValue(text);
    if (!result.ok) ctx.addIssue({ code: 'custom', message: `port value ${result.error}` });
  })
  .meta({
    description: `Where the device is (docs/api.md 2.7 port values): ${EXPECTED}. tcp:// defaults to port ${RNODE_TCP_PORT}.`,
    examples: ['auto', 'usb_serial:0001A2B3', '/dev/serial/by-id/usb-Silicon_Labs_CP2102_0001-if00-port0', 'tcp://10.0.0.5', 'ble://RNode 3A4B', 'sim://lab'],
  });

function parsePath(path: string): PortValueResult {
  if (path.length < 2 || path.endsWith('/')) return fail(`device path ${JSON.stringify(path)} names a directory, not a device`);
  if (path.includes('//')) return fail(`device path ${JSON.stringify(path)} contains an empty segment ('//')`);
  if (path.split('/').some((s) => s === '.' || s === '..')) return fail(`device path ${JSON.stringify(path)} contains '.' or '..' segments; write the path it leads to`);
  return { ok: true, value: { kind: 'path', path } };
}

function parseUsbSerial(serial: string): PortValueResult {
  if (serial === '') return fail('usb_serial: needs the board\'s USB serial number after the colon (see GET /api/routing/rnode/ports)');
  if (serial.length > MAX_USB_SERIAL_LENGTH) return fail(`USB serial number is ${serial.length} characters long; at most ${MAX_USB_SERIAL_LENGTH} allowed`);
  // Printable ASCII without space: what udev reports (it replaces spaces and unsafe bytes).
  if (!/^[\x21-\x7e]+$/.test(serial)) return fail(`USB serial number ${JSON.stringify(serial)} may contain only printable ASCII without spaces (as udev reports it)`);
  return { ok: true, value: { kind: 'usb_serial', serialNumber: serial } };
}

function parseTcp(rest: string, defaultPort: number, scheme = 'tcp'): PortValueResult {
  if (rest === '') return fail(scheme === 'tcp' ? 'tcp:// needs a host, e.g. tcp://10.0.0.5 or tcp://rnode.local:7633' : `${scheme}:// needs a host and a port`);
  if (/[/?#@]/.test(rest)) return fail(`${scheme}:// takes only host[:port]; remove the path, query or user part from ${JSON.stringify(rest)}`);
  let host: string;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(rest);
  if (bracketed) {
    host = bracketed[1];
    portText = bracketed[2];
    if (!isIPv6(host)) return fail(`${JSON.stringify(host)} in brackets is not an IPv6 address`);
  } else {
    const colons = rest.split(':').length - 1;
    if (colons > 1) return fail(`write an IPv6 address in brackets, e.g. ${scheme}://[${rest}]:${RNODE_TCP_PORT}`);
    [host, portText] = rest.split(':') as [string, string | undefined];
    if (host === '') return fail(`${scheme}:// needs a host before ':${portText}'`);
    if (!isHostname(host) && !isIPv4(host)) return fail(`${JSON.stringify(host)} is not a host name or IPv4 address`);
  }
  let port = defaultPort;
  if (portText !== undefined) {
    const what = scheme === 'udp' ? 'UDP' : 'TCP';
    if (!/^\d{1,5}$/.test(portText)) return fail(`${what} port ${JSON.stringify(portText)} is not a number from 1 to 65535`);
    port = Number(portText);
    if (port < 1 || port > 65535) return fail(`${what} port ${port} is out of range; expected 1 to 65535`);
  }
  return { ok: true, value: { kind: 'tcp', host: host.toLowerCase(), port } };
}

function parseBle(target: string): PortValueResult {
  if (target === '') return fail('ble:// needs the bonded board\'s name or MAC address, e.g. ble://AA:BB:CC:DD:EE:FF or ble://RNode 3A4B');
  // Short alphanumeric groups joined by ':' (or six hex pairs joined by '-', the Windows
  // spelling) were meant as a MAC address; a board name does not look like that.
  if (/^[0-9A-Za-z]{0,3}(:[0-9A-Za-z]{0,3})+$/.test(target) || /^[0-9A-Fa-f:]*:[0-9A-Fa-f:]*$/.test(target) || /^[0-9A-Fa-f]{2}(-[0-9A-Fa-f]{2}){5}$/.test(target)) {
    if (!/^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$/.test(target)) {
      return fail(`${JSON.stringify(target)} is not a Bluetooth MAC address; expected six pairs of hex digits separated by ':', e.g. AA:BB:CC:DD:EE:FF`);
    }
    return { ok: true, value: { kind: 'ble', mac: target.toUpperCase(), name: null } };
  }
  if (Buffer.byteLength(target) > MAX_BLE_NAME_BYTES) return fail(`BLE name is longer than ${MAX_BLE_NAME_BYTES} bytes`);
  return { ok: true, value: { kind: 'ble', mac: null, name: target } };
}

function isHostname(host: string): boolean {
  // RFC 1123 labels; a name made only of digits and dots is a (bad) IPv4 address instead.
  if (host.length > 253 || /^[\d.]+$/.test(host)) return false;
  return host.split('.').every((label) => /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(label));
}

function fail(error: string): PortValueResult {
  return { ok: false, error };
}
