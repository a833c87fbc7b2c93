// The firmware line a simulated board behaves as (docs/protocols/meshtastic.md 2.9). One plain
// object per line, so a behaviour that differs between lines is one field here and one `if`
// where it happens; a line's further differences are further fields.

export type FirmwareLine = '2.7' | '2.8';
export const FIRMWARE_LINES: readonly FirmwareLine[] = ['2.7', '2.8'];

export interface FirmwareProfile {
  line: FirmwareLine;
  /** DeviceMetadata.firmware_version. */
  version: string;
  /** The long name the board stores, in bytes: longer ones are cut there (2.8, meshUtils.h
   *  MAX_LONG_NAME_BYTES 24) or, past 39, fail to decode (both lines, mesh.options). */
  longNameStoredBytes: number;
  /** DeviceMetadata.excluded_modules (mesh.proto ExcludedModules bits). */
  excludedModules: number;
  /** After config_complete_id the board replays its node database's positions, telemetry
   *  and status as packets, and sends other nodes' NodeInfo without them (PhoneAPI, 2.8). */
  replaysNodeDb: boolean;
  /** FromRadio.region_presets follows the metadata in the handshake (PhoneAPI, 2.8). */
  regionPresets: boolean;
  /** The primary channel's ModuleSettings.position_precision on a fresh node: 13 before 2.8,
   *  0 (no position broadcast) from 2.8 (firmware PR #10929). */
  positionPrecision: number;
  /** How many ModuleConfig variants the handshake lists, in ModuleConfigType order: 13 (mqtt
   *  to paxcounter) before 2.8, all 17 (to mesh_beacon) from 2.8 (PhoneAPI STATE_SEND_MODULECONFIG). */
  handshakeModules: number;
  /** A node's number is the CRC-32 of its X25519 public key (NodeDB createNewIdentity, 2.8);
   *  before 2.8 it came from the MAC address (identity.ts). */
  numbersByKey: boolean;
}

/** mesh.proto ExcludedModules.RANGETEST_CONFIG: 2.8 builds never include Range Test
 *  (firmware PR #11150, "Always exclude range test"). */
export const EXCLUDED_RANGETEST = 0x0010;

export const FIRMWARE_PROFILES: Readonly<Record<FirmwareLine, Readonly<FirmwareProfile>>> = {
  // The version string predates the profiles: the 2.7 simulator always reported it.
  '2.7': { line: '2.7', version: '2.6.11.sim', longNameStoredBytes: 39, excludedModules: 0, replaysNodeDb: false, regionPresets: false, positionPrecision: 13, handshakeModules: 13, numbersByKey: false },
  '2.8': { line: '2.8', version: '2.8.0.sim', longNameStoredBytes: 24, excludedModules: EXCLUDED_RANGETEST, replaysNodeDb: true, regionPresets: true, positionPrecision: 0, handshakeModules: 17, numbersByKey: true },
};

export function firmwareProfile(firmware: FirmwareLine | FirmwareProfile | undefined): FirmwareProfile {
  if (firmware === undefined) return { ...FIRMWARE_PROFILES['2.7'] };
  return typeof firmware === 'string' ? { ...FIRMWARE_PROFILES[firmware] } : { ...firmware };
}

/** Cuts a name to at most `bytes` bytes of UTF-8 without splitting a character (firmware
 *  clampLongName: it also repairs a cut sequence). */
export function clampUtf8(text: string, bytes: number): string {
  const encoded = new TextEncoder().encode(text);
  if (encoded.length <= bytes) return text;
  let end = bytes;
  while (end > 0 && (encoded[end] & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(encoded.subarray(0, end));
}
