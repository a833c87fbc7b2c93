import { encodeFrame, encodeFrames, type KissFrame } from '../shared/codec/kiss.ts';

// RNode commands and their payloads (docs/protocols/rnode.md 1.3). Names are the firmware's own
// (RF:Framing.h) so a reader can grep both. Pure functions: bytes in, values out.

/** Command bytes, RF:Framing.h. One table: names for logs and dispatch both come from it. */
export const CMD = {
  CMD_DATA: 0x00,
  CMD_FREQUENCY: 0x01,
  CMD_BANDWIDTH: 0x02,
  CMD_TXPOWER: 0x03,
  CMD_SF: 0x04,
  CMD_CR: 0x05,
  CMD_RADIO_STATE: 0x06,
  CMD_RADIO_LOCK: 0x07,
  CMD_DETECT: 0x08,
  CMD_IMPLICIT: 0x09,
  CMD_LEAVE: 0x0a,
  CMD_ST_ALOCK: 0x0b,
  CMD_LT_ALOCK: 0x0c,
  CMD_PROMISC: 0x0e,
  CMD_READY: 0x0f,
  CMD_STAT_RX: 0x21,
  CMD_STAT_TX: 0x22,
  CMD_STAT_RSSI: 0x23,
  CMD_STAT_SNR: 0x24,
  CMD_STAT_CHTM: 0x25,
  CMD_STAT_PHYPRM: 0x26,
  CMD_STAT_BAT: 0x27,
  CMD_STAT_CSMA: 0x28,
  CMD_STAT_TEMP: 0x29,
  CMD_BLINK: 0x30,
  CMD_RANDOM: 0x40,
  CMD_BOARD: 0x47,
  CMD_PLATFORM: 0x48,
  CMD_MCU: 0x49,
  CMD_FW_VERSION: 0x50,
  CMD_RESET: 0x55,
  CMD_ERROR: 0x90,
} as const;
export type CommandName = keyof typeof CMD;

const NAME_BY_BYTE = new Map<number, CommandName>(Object.entries(CMD).map(([k, v]) => [v, k as CommandName]));
export function commandName(command: number): string {
  return NAME_BY_BYTE.get(command) ?? `0x${command.toString(16).padStart(2, '0')}`;
}

export const DETECT_REQ = 0x73;
export const DETECT_RESP = 0x46;
/** Payload of CMD_RESET: the device announces a reboot with C0 55 F8 C0 (docs/protocols/rnode.md 1.1). */
export const CMD_RESET_BYTE = 0xf8;
/** dBm = byte − 157 for RSSI values (RF RSSI_OFFSET). */
export const RSSI_OFFSET = 157;
/** Oldest firmware the host accepts (Reticulum REQUIRED_FW_VER, docs/protocols/rnode.md 1.4 step 4). */
export const REQUIRED_FW_VERSION = { major: 1, minor: 52 } as const;

/** ERROR codes (docs/protocols/rnode.md 1.3). Fatal ones close the link and retry, as Reticulum does
 *  for 01, 02 and unknown codes; 03 (EEPROM locked) means the radio cannot start either. */
export const ERRORS: Record<number, { name: string; meaning: string; fatal: boolean }> = {
  0x01: { name: 'ERROR_INITRADIO', meaning: 'the radio failed to initialise', fatal: true },
  0x02: { name: 'ERROR_TXFAILED', meaning: 'a transmission failed', fatal: true },
  0x03: { name: 'ERROR_EEPROM_LOCKED', meaning: 'the EEPROM is locked (board not provisioned)', fatal: true },
  0x04: { name: 'ERROR_QUEUE_FULL', meaning: 'the transmit queue is full', fatal: false },
  0x05: { name: 'ERROR_MEMORY_LOW', meaning: 'the device is low on memory', fatal: false },
  0x06: { name: 'ERROR_MODEM_TIMEOUT', meaning: 'the modem timed out', fatal: false },
};

export const PLATFORMS: Record<number, string> = { 0x90: 'AVR', 0x80: 'ESP32', 0x70: 'nRF52' };
export const MCUS: Record<number, string> = { 0x91: 'ATmega1284P', 0x92: 'ATmega2560', 0x81: 'ESP32', 0x71: 'nRF52' };

// ---- integers -------------------------------------------------------------------------

export function u32be(n: number): Uint8Array {
  return Uint8Array.of((n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}
export function u16be(n: number): Uint8Array {
  return Uint8Array.of((n >>> 8) & 0xff, n & 0xff);
}
export function readU32be(p: Uint8Array, at = 0): number {
  return ((p[at] << 24) >>> 0) + (p[at + 1] << 16) + (p[at + 2] << 8) + p[at + 3];
}
export function readU16be(p: Uint8Array, at = 0): number {
  return (p[at] << 8) | p[at + 1];
}

/** Airtime limit on the wire: u16 BE of percent × 100 (docs/protocols/rnode.md 1.6). Rounded, not
 *  truncated, so 0.29 % is 29 and not 28 (0.29 × 100 = 28.999… in binary floating point). */
export function airtimeLimitValue(percent: number): number {
  return Math.max(0, Math.min(10000, Math.round(percent * 100)));
}

// ---- host -> device frames ------------------------------------------------------------

/** Detect, firmware version, platform and MCU in one write (docs/protocols/rnode.md 1.4 step 2). */
export const DETECT_BURST = Uint8Array.of(0xc0, 0x08, 0x73, 0xc0, 0x50, 0x00, 0xc0, 0x48, 0x00, 0xc0, 0x49, 0x00, 0xc0);
export const DETECT_REQUEST = encodeFrame(CMD.CMD_DETECT, Uint8Array.of(DETECT_REQ));
/** The firmware acts on a command when a payload byte follows it, so even a query carries
 *  one byte (RF:RNode_Firmware.ino serial_callback); READY's value is ignored. */
export const READY_QUERY = encodeFrame(CMD.CMD_READY, Uint8Array.of(0x00));
export const LEAVE = encodeFrame(CMD.CMD_LEAVE, Uint8Array.of(0xff));
export const RADIO_OFF = encodeFrame(CMD.CMD_RADIO_STATE, Uint8Array.of(0x00));

export interface RadioConfig {
  frequency_hz: number;
  bandwidth_hz: number;
  sf: number;
  cr: number;
  tx_power_dbm: number;
  /** Percent, null = not sent (firmware default: no limit). */
  st_alock: number | null;
  lt_alock: number | null;
}

/** The configuration run of docs/protocols/rnode.md 1.4 step 5, in Reticulum's order, ending with
 *  RADIO_STATE on. */
export function configurationFrames(c: RadioConfig): KissFrame[] {
  const frames: KissFrame[] = [
    { command: CMD.CMD_FREQUENCY, payload: u32be(c.frequency_hz) },
    { command: CMD.CMD_BANDWIDTH, payload: u32be(c.bandwidth_hz) },
    { command: CMD.CMD_TXPOWER, payload: Uint8Array.of(c.tx_power_dbm & 0xff) },
    { command: CMD.CMD_SF, payload: Uint8Array.of(c.sf) },
    { command: CMD.CMD_CR, payload: Uint8Array.of(c.cr) },
  ];
  if (c.st_alock !== null) frames.push({ command: CMD.CMD_ST_ALOCK, payload: u16be(airtimeLimitValue(c.st_alock)) });
  if (c.lt_alock !== null) frames.push({ command: CMD.CMD_LT_ALOCK, payload: u16be(airtimeLimitValue(c.lt_alock)) });
  frames.push({ command: CMD.CMD_RADIO_STATE, payload: Uint8Array.of(0x01) });
  return frames;
}

export function encodeConfiguration(c: RadioConfig): Uint8Array {
  return encodeFrames(configurationFrames(c));
}

// ---- device -> host frames ------------------------------------------------------------

/** STAT_CHTM (docs/protocols/rnode.md 1.6): percentages and dBm, already converted. */
export interface ChannelStats {
  airtime_short_pct: number;
  airtime_long_pct: number;
  channel_load_short_pct: number;
  channel_load_long_pct: number;
  /** Null when the firmware sent the older 8-byte form without the RSSI bytes. */
  current_rssi_dbm: number | null;
  noise_floor_dbm: number | null;
  /** Null when the firmware reports FF (no interference). */
  interference_dbm: number | null;
}

export type DeviceMessage =
  | { type: 'data'; payload: Uint8Array }
  | { type: 'frequency'; hz: number }
  | { type: 'bandwidth'; hz: number }
  | { type: 'txpower'; dbm: number }
  | { type: 'sf'; sf: number }
  | { type: 'cr'; cr: number }
  | { type: 'radio_state'; on: boolean }
  | { type: 'radio_lock'; locked: boolean }
  | { type: 'detect'; ok: boolean }
  | { type: 'implicit'; length: number }
  | { type: 'st_alock'; percent: number }
  | { type: 'lt_alock'; percent: number }
  | { type: 'promisc'; on: boolean }
  | { type: 'ready'; room: boolean }
  | { type: 'stat_rx'; packets: number }
  | { type: 'stat_tx'; packets: number }
  | { type: 'stat_rssi'; dbm: number }
  | { type: 'stat_snr'; db: number }
  | ({ type: 'stat_chtm' } & ChannelStats)
  | { type: 'stat_phyprm'; symbol_time_us: number; symbol_rate_baud: number; preamble_symbols: number; preamble_ms: number; csma_slot_ms: number; difs_ms: number }
  | { type: 'stat_bat'; state: number; percent: number }
  | { type: 'stat_csma'; band: number; min: number; max: number }
  | { type: 'stat_temp'; celsius: number }
  | { type: 'random'; value: number }
  | { type: 'board'; id: number }
  | { type: 'platform'; id: number; name: string }
  | { type: 'mcu'; id: number; name: string }
  | { type: 'fw_version'; major: number; minor: number }
  | { type: 'reset' }
  | { type: 'error'; code: number; name: string; meaning: string; fatal: boolean }
  | { type: 'unknown'; command: number; payload: Uint8Array }
  | { type: 'malformed'; command: number; name: string; reason: string };

type Decoder = { size: number | readonly number[] | 'any'; decode: (p: Uint8Array) => DeviceMessage };

const rssi = (b: number) => b - RSSI_OFFSET;
const percent = (p: Uint8Array, at: number) => readU16be(p, at) / 100;

/** What each device -> host command means, keyed by command byte (docs/protocols/rnode.md 1.3). */
const DEVICE_DECODERS: Record<number, Decoder> = {
  [CMD.CMD_DATA]: { size: 'any', decode: (p) => ({ type: 'data', payload: p }) },
  [CMD.CMD_FREQUENCY]: { size: 4, decode: (p) => ({ type: 'frequency', hz: readU32be(p) }) },
  [CMD.CMD_BANDWIDTH]: { size: 4, decode: (p) => ({ type: 'bandwidth', hz: readU32be(p) }) },
  [CMD.CMD_TXPOWER]: { size: 1, decode: (p) => ({ type: 'txpower', dbm: p[0] }) },
  [CMD.CMD_SF]: { size: 1, decode: (p) => ({ type: 'sf', sf: p[0] }) },
  [CMD.CMD_CR]: { size: 1, decode: (p) => ({ type: 'cr', cr: p[0] }) },
  [CMD.CMD_RADIO_STATE]: { size: 1, decode: (p) => ({ type: 'radio_state', on: p[0] === 0x01 }) },
  [CMD.CMD_RADIO_LOCK]: { size: 1, decode: (p) => ({ type: 'radio_lock', locked: p[0] === 0x01 }) },
  [CMD.CMD_DETECT]: { size: 1, decode: (p) => ({ type: 'detect', ok: p[0] === DETECT_RESP }) },
  [CMD.CMD_IMPLICIT]: { size: 1, decode: (p) => ({ type: 'implicit', length: p[0] }) },
  [CMD.CMD_ST_ALOCK]: { size: 2, decode: (p) => ({ type: 'st_alock', percent: percent(p, 0) }) },
  [CMD.CMD_LT_ALOCK]: { size: 2, decode: (p) => ({ type: 'lt_alock', percent: percent(p, 0) }) },
  [CMD.CMD_PROMISC]: { size: 1, decode: (p) => ({ type: 'promisc', on: p[0] === 0x01 }) },
  [CMD.CMD_READY]: { size: 1, decode: (p) => ({ type: 'ready', room: p[0] === 0x01 }) },
  [CMD.CMD_STAT_RX]: { size: 4, decode: (p) => ({ type: 'stat_rx', packets: readU32be(p) }) },
  [CMD.CMD_STAT_TX]: { size: 4, decode: (p) => ({ type: 'stat_tx', packets: readU32be(p) }) },
  [CMD.CMD_STAT_RSSI]: { size: 1, decode: (p) => ({ type: 'stat_rssi', dbm: rssi(p[0]) }) },
  // i8, quarter dB.
  [CMD.CMD_STAT_SNR]: { size: 1, decode: (p) => ({ type: 'stat_snr', db: ((p[0] << 24) >> 24) * 0.25 }) },
  [CMD.CMD_STAT_CHTM]: { size: [8, 11], decode: decodeChannelStats },
  [CMD.CMD_STAT_PHYPRM]: {
    size: 12,
    decode: (p) => ({
      type: 'stat_phyprm',
      symbol_time_us: readU16be(p, 0),
      symbol_rate_baud: readU16be(p, 2),
      preamble_symbols: readU16be(p, 4),
      preamble_ms: readU16be(p, 6),
      csma_slot_ms: readU16be(p, 8),
      difs_ms: readU16be(p, 10),
    }),
  },
  [CMD.CMD_STAT_BAT]: { size: 2, decode: (p) => ({ type: 'stat_bat', state: p[0], percent: p[1] }) },
  [CMD.CMD_STAT_CSMA]: { size: 3, decode: (p) => ({ type: 'stat_csma', band: p[0], min: p[1], max: p[2] }) },
  // °C = value − 120 (RF:Power.h PMU_TEMP_OFFSET).
  [CMD.CMD_STAT_TEMP]: { size: 1, decode: (p) => ({ type: 'stat_temp', celsius: p[0] - 120 }) },
  [CMD.CMD_RANDOM]: { size: 1, decode: (p) => ({ type: 'random', value: p[0] }) },
  [CMD.CMD_BOARD]: { size: 1, decode: (p) => ({ type: 'board', id: p[0] }) },
  [CMD.CMD_PLATFORM]: { size: 1, decode: (p) => ({ type: 'platform', id: p[0], name: PLATFORMS[p[0]] ?? 'unknown' }) },
  [CMD.CMD_MCU]: { size: 1, decode: (p) => ({ type: 'mcu', id: p[0], name: MCUS[p[0]] ?? 'unknown' }) },
  [CMD.CMD_FW_VERSION]: { size: 2, decode: (p) => ({ type: 'fw_version', major: p[0], minor: p[1] }) },
  [CMD.CMD_RESET]: {
    size: 1,
    decode: (p) =>
      p[0] === CMD_RESET_BYTE ? { type: 'reset' } : { type: 'malformed', command: CMD.CMD_RESET, name: 'CMD_RESET', reason: 'payload is not F8' },
  },
  [CMD.CMD_ERROR]: { size: 1, decode: (p) => decodeError(p[0]) },
};

/** Decodes one frame from the device. Never throws: a command not in the table is
 *  'unknown', a payload of the wrong size is 'malformed'; the caller counts both. */
export function decodeDeviceFrame(frame: KissFrame): DeviceMessage {
  const entry = DEVICE_DECODERS[frame.command] as Decoder | undefined;
  if (!entry) return { type: 'unknown', command: frame.command, payload: frame.payload };
  const n = frame.payload.length;
  const ok = entry.size === 'any' ? n > 0 : typeof entry.size === 'number' ? n === entry.size : entry.size.includes(n);
  if (!ok) {
    const want = entry.size === 'any' ? '1 or more' : String(entry.size).replace(',', ' or ');
    return { type: 'malformed', command: frame.command, name: commandName(frame.command), reason: `payload of ${n} bytes, expected ${want}` };
  }
  return entry.decode(frame.payload);
}

function decodeChannelStats(p: Uint8Array): DeviceMessage {
  const long = p.length === 11;
  return {
    type: 'stat_chtm',
    airtime_short_pct: percent(p, 0),
    airtime_long_pct: percent(p, 2),
    channel_load_short_pct: percent(p, 4),
    channel_load_long_pct: percent(p, 6),
    current_rssi_dbm: long ? rssi(p[8]) : null,
    noise_floor_dbm: long ? rssi(p[9]) : null,
    interference_dbm: long && p[10] !== 0xff ? rssi(p[10]) : null,
  };
}

export function encodeChannelStats(s: ChannelStats): Uint8Array {
  // Same encodings as the airtime limits and STAT_RSSI (percent × 100; dBm + 157).
  const pct = (v: number) => u16be(airtimeLimitValue(v));
  const dbm = (v: number | null, none: number) => (v === null ? none : rssiByte(v));
  const out = new Uint8Array(11);
  out.set(pct(s.airtime_short_pct), 0);
  out.set(pct(s.airtime_long_pct), 2);
  out.set(pct(s.channel_load_short_pct), 4);
  out.set(pct(s.channel_load_long_pct), 6);
  out[8] = dbm(s.current_rssi_dbm, 0);
  out[9] = dbm(s.noise_floor_dbm, 0);
  out[10] = dbm(s.interference_dbm, 0xff);
  return out;
}

function decodeError(code: number): DeviceMessage {
  const known = ERRORS[code];
  if (known) return { type: 'error', code, ...known };
  return { type: 'error', code, name: 'ERROR_UNKNOWN', meaning: `unknown error code 0x${code.toString(16).padStart(2, '0')}`, fatal: true };
}

/** RSSI byte for a dBm value (the simulator's side of STAT_RSSI). */
export function rssiByte(dbm: number): number {
  return Math.max(0, Math.min(0xff, Math.round(dbm) + RSSI_OFFSET));
}
/** SNR byte for a dB value: i8 in quarter dB. */
export function snrByte(db: number): number {
  return Math.max(-128, Math.min(127, Math.round(db * 4))) & 0xff;
}

export function firmwareAtLeast(v: { major: number; minor: number }, min: { major: number; minor: number } = REQUIRED_FW_VERSION): boolean {
  return v.major > min.major || (v.major === min.major && v.minor >= min.minor);
}
export function formatFirmware(v: { major: number; minor: number }): string {
  return `${v.major}.${String(v.minor).padStart(2, '0')}`;
}
