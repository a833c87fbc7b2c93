import { type DeviceMetadata, type LoRaRegionPresetMap, MODEM_PRESET, nameOf, presetsForRegion } from './codec/messages.ts';

// What the connected board's firmware takes (docs/meshtastic.md, "Firmware versions";
// docs/protocols/meshtastic.md 2.9): its version line, the modules its build left out and the
// longest owner names it keeps. The API refuses writes past these (the board would cut or
// ignore them), and the driver checks stored sections against them before pushing. Pure.

/** mesh.proto ExcludedModules: the bit of each module config a build can leave out. */
export const EXCLUDED_MODULES = {
  MQTT_CONFIG: 0x0001,
  SERIAL_CONFIG: 0x0002,
  EXTNOTIF_CONFIG: 0x0004,
  STOREFORWARD_CONFIG: 0x0008,
  RANGETEST_CONFIG: 0x0010,
  TELEMETRY_CONFIG: 0x0020,
  CANNEDMSG_CONFIG: 0x0040,
  AUDIO_CONFIG: 0x0080,
  REMOTEHARDWARE_CONFIG: 0x0100,
  NEIGHBORINFO_CONFIG: 0x0200,
  AMBIENTLIGHTING_CONFIG: 0x0400,
  DETECTIONSENSOR_CONFIG: 0x0800,
  PAXCOUNTER_CONFIG: 0x1000,
  BLUETOOTH_CONFIG: 0x2000,
  NETWORK_CONFIG: 0x4000,
} as const;

/** The bridge's module sections that are firmware modules, and their ExcludedModules bit. */
const MODULE_BITS: Record<string, number> = {
  store_forward: EXCLUDED_MODULES.STOREFORWARD_CONFIG,
  range_test: EXCLUDED_MODULES.RANGETEST_CONFIG,
  telemetry: EXCLUDED_MODULES.TELEMETRY_CONFIG,
  canned_message: EXCLUDED_MODULES.CANNEDMSG_CONFIG,
  neighbor_info: EXCLUDED_MODULES.NEIGHBORINFO_CONFIG,
};

/** User.long_name: 39 bytes decode on every line (mesh.options max_size 40); from 2.8 the
 *  firmware keeps 24 and cuts the rest (meshUtils.h MAX_LONG_NAME_BYTES, clampLongName). */
const LONG_NAME_BYTES_BEFORE_2_8 = 39;
const LONG_NAME_BYTES_FROM_2_8 = 24;

export interface Board {
  /** DeviceMetadata.firmware_version as the board said it; null when it said none. */
  firmware: string | null;
  /** "2.8" from "2.8.0.abc1234"; null when the version does not parse. */
  line: string | null;
  excludedModules: number;
  longNameBytes: number;
  regionPresets: LoRaRegionPresetMap | null;
}

export function boardOf(metadata: DeviceMetadata | undefined, regionPresets?: LoRaRegionPresetMap): Board {
  const firmware = metadata?.firmware_version || null;
  const m = firmware ? /^(\d+)\.(\d+)/.exec(firmware) : null;
  const major = m ? Number(m[1]) : 0;
  const minor = m ? Number(m[2]) : 0;
  const from28 = major > 2 || (major === 2 && minor >= 8);
  return {
    firmware,
    line: m ? `${major}.${minor}` : null,
    excludedModules: metadata?.excluded_modules ?? 0,
    longNameBytes: from28 ? LONG_NAME_BYTES_FROM_2_8 : LONG_NAME_BYTES_BEFORE_2_8,
    regionPresets: regionPresets ?? null,
  };
}

/** The names of the modules the board's build left out. */
export function excludedModuleNames(board: Board): string[] {
  return Object.entries(EXCLUDED_MODULES).filter(([, bit]) => (board.excludedModules & bit) !== 0).map(([name]) => name);
}

/** The presets the board allows in `region` (names), or null when it sent no map for it. */
export function allowedPresets(board: Board, region: number): string[] | null {
  if (!board.regionPresets) return null;
  const group = presetsForRegion(board.regionPresets, region);
  return group ? (group.presets ?? []).map((p) => nameOf(MODEM_PRESET, p)) : null;
}

const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');

const firmwareName = (board: Board) => `firmware ${board.firmware ?? 'of unknown version'}`;

/** What in a device section's value this board would not take, one sentence per field, each
 *  naming the limit and the firmware. `part`: the module a modules write changed. */
export function boardProblems(board: Board, section: string, value: Record<string, unknown>, part?: string): string[] {
  const problems: string[] = [];
  // The wire's own limits (39 and 4 bytes) hold for every line and the API's schema keeps to
  // them; what differs by firmware is a board that cuts a name the wire still carries.
  if (section === 'owner' && board.longNameBytes < LONG_NAME_BYTES_BEFORE_2_8) {
    const long = utf8Length(String(value.long_name ?? ''));
    if (long > board.longNameBytes) {
      problems.push(`owner.long_name is ${long} bytes; the board's ${firmwareName(board)} keeps at most ${board.longNameBytes} bytes of UTF-8 and would cut the rest`);
    }
  }
  if (section === 'modules') {
    for (const module of part ? [part] : Object.keys(MODULE_BITS)) {
      const bit = MODULE_BITS[module];
      if (bit && (board.excludedModules & bit) !== 0) {
        problems.push(`modules.${module}: the board's ${firmwareName(board)} was built without this module (DeviceMetadata.excluded_modules); a setting for it would be stored and ignored`);
      }
    }
  }
  return problems;
}

/** Splits stored settings into what this board takes and what it would not: the owner section
 *  (fits or not) and module changes (`modules` to push, `kept` back for another board). */
export function fitBoard(board: Board, owner: Record<string, unknown> | null, pending: Record<string, Record<string, unknown>>): {
  problems: string[]; ownerFits: boolean; modules: Record<string, Record<string, unknown>>; kept: Record<string, Record<string, unknown>>;
} {
  const problems = owner ? boardProblems(board, 'owner', owner) : [];
  const ownerFits = problems.length === 0;
  const modules: Record<string, Record<string, unknown>> = {};
  const kept: Record<string, Record<string, unknown>> = {};
  for (const [m, fields] of Object.entries(pending)) {
    const beyond = boardProblems(board, 'modules', pending, m);
    problems.push(...beyond);
    (beyond.length > 0 ? kept : modules)[m] = fields;
  }
  return { problems, ownerFits, modules, kept };
}
