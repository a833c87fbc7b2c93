import { z } from 'zod';
import type { FieldError } from '../../lib/errors.ts';
import { DeviceError } from '../device-error.ts';
import type { RadioConfig } from './protocol.ts';

// RNode radio settings: the presets of docs/api.md 2.7, the settings schema, preset-plus-override
// resolution, the ranges Reticulum accepts (docs/protocols/rnode.md 1.4), the bit rate Reticulum derives
// (1.7) and LoRa time on air (1.8). Pure.

export const PRESET_NAMES = ['us-915', 'eu-868', 'au-915', 'ism-433'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

export interface RadioPreset {
  name: PresetName;
  frequency_hz: number;
  bandwidth_hz: number;
  sf: number;
  cr: number;
  tx_power_dbm: number;
}

/** Exactly the docs/api.md 2.7 presets table. */
export const RNODE_PRESETS: readonly RadioPreset[] = [
  { name: 'us-915', frequency_hz: 915_000_000, bandwidth_hz: 125_000, sf: 7, cr: 5, tx_power_dbm: 22 },
  { name: 'eu-868', frequency_hz: 867_200_000, bandwidth_hz: 125_000, sf: 8, cr: 5, tx_power_dbm: 14 },
  { name: 'au-915', frequency_hz: 915_000_000, bandwidth_hz: 125_000, sf: 7, cr: 5, tx_power_dbm: 22 },
  { name: 'ism-433', frequency_hz: 433_000_000, bandwidth_hz: 125_000, sf: 7, cr: 5, tx_power_dbm: 12 },
];

export function findPreset(name: string): RadioPreset | undefined {
  return RNODE_PRESETS.find((p) => p.name === name);
}

export const RNODE_MODES = ['raw', 'reticulum'] as const;
export type RnodeMode = (typeof RNODE_MODES)[number];
/** Half an hour between announces: often enough for peers to keep our key, rare enough for a
 *  slow LoRa channel (docs/reticulum.md). */
export const DEFAULT_ANNOUNCE_INTERVAL_S = 1800;
/** Seconds between syncs with a propagation node (docs/reticulum.md, "Propagation node"). */
export const DEFAULT_PROPAGATION_SYNC_INTERVAL_S = 3600;
/** The highest propagation stamp cost the bridge computes by default: about 2^20 hashes. */
export const DEFAULT_PROPAGATION_MAX_STAMP_COST = 20;

// Ranges Reticulum accepts (docs/protocols/rnode.md 1.4): 137 MHz–3 GHz, BW 7.8–1625 kHz, SF 5–12,
// CR 5–8 (4/5…4/8), TX 0–37 dBm, airtime limits 0–100 %.
const int = (min: number, max: number, unit: string) =>
  z.number().int().min(min).max(max).describe(`${unit}, ${min} to ${max}`);

/** The interface's stored settings (kind `rnode`). Every field optional here: a preset fills
 *  the five radio fields and explicit fields override it; resolveRadioSettings() checks that
 *  the result is complete. Transform-free so it converts to JSON Schema for OpenAPI. */
export const rnodeSettingsSchema = z
  .object({
    preset: z.enum(PRESET_NAMES).optional().describe('Fills the five radio fields (docs/api.md 2.7)'),
    frequency_hz: int(137_000_000, 3_000_000_000, 'Hz'),
    bandwidth_hz: int(7_800, 1_625_000, 'Hz'),
    sf: int(5, 12, 'spreading factor'),
    cr: int(5, 8, 'coding rate 4/5 (5) to 4/8 (8)'),
    tx_power_dbm: int(0, 37, 'dBm'),
    st_alock: z.number().min(0).max(100).nullable().describe('Short-term (15 s) airtime limit in percent; null or 0 = none'),
    lt_alock: z.number().min(0).max(100).nullable().describe('Long-term (1 h) airtime limit in percent; null or 0 = none'),
    callsign: z.string().min(1).max(32).nullable().describe('Station identification sent as a beacon frame'),
    beacon_interval_s: z.number().int().min(30).max(86_400).nullable().describe('Seconds between beacons (default 600 when a callsign is set)'),
    flow_control: z.boolean().describe('Wait for the radio READY before each frame (default true)'),
    mode: z.enum(RNODE_MODES).describe('raw (default): one LoRa frame per message; reticulum: the interface is an LXMF endpoint on a Reticulum network (docs/reticulum.md)'),
    display_name: z.string().trim().min(1).max(64).nullable().describe('reticulum mode: the name announced with the LXMF address (default: the host name)'),
    announce_interval_s: z.number().int().min(60).max(86_400).describe(`reticulum mode: seconds between announces (default ${DEFAULT_ANNOUNCE_INTERVAL_S}), never above the announce budget`),
    propagation_node: z.string().regex(/^[0-9a-fA-F]{32}$/, 'an LXMF propagation node address: 32 hex digits').nullable().describe('reticulum mode: the LXMF propagation node (its lxmf.propagation address) that holds messages for peers the bridge cannot reach, and from which it fetches its own'),
    propagation_sync_interval_s: z.number().int().min(300).max(86_400).describe(`reticulum mode: seconds between fetches from the propagation node (default ${DEFAULT_PROPAGATION_SYNC_INTERVAL_S}; also at every start)`),
    propagation_max_stamp_cost: z.number().int().min(1).max(28).describe(`reticulum mode: the highest stamp cost the bridge computes for the propagation node (default ${DEFAULT_PROPAGATION_MAX_STAMP_COST}); a node asking more is refused`),
  })
  .partial()
  .strict();
export type RnodeSettingsInput = z.input<typeof rnodeSettingsSchema>;

export interface RnodeSettings extends RadioConfig {
  preset: PresetName | null;
  mode: RnodeMode;
  display_name: string | null;
  announce_interval_s: number;
  propagation_node: string | null;
  propagation_sync_interval_s: number;
  propagation_max_stamp_cost: number;
  callsign: string | null;
  beacon_interval_s: number | null;
  flow_control: boolean;
}

/** Beacon interval when a callsign is given without one: ten minutes, the usual amateur
 *  identification interval (e.g. FCC 97.119(a)). */
export const DEFAULT_BEACON_INTERVAL_S = 600;
const RADIO_FIELDS = ['frequency_hz', 'bandwidth_hz', 'sf', 'cr', 'tx_power_dbm'] as const;

export type ResolveResult = { ok: true; settings: RnodeSettings } | { ok: false; errors: FieldError[] };

/** Preset fills, explicit fields override; every bad or missing field reported at once
 *  (docs/style.md habit 9). */
export function resolveRadioSettings(input: unknown): ResolveResult {
  const raw = input ?? {};
  const parsed = rnodeSettingsSchema.safeParse(raw);
  const errors: FieldError[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      errors.push({ path: issue.path.join('.') || '(settings)', message: issue.message });
    }
  }
  // Missing fields are checked on the raw input too, so a bad SF and a missing frequency
  // come back in one answer.
  const s = (parsed.success ? parsed.data : typeof raw === 'object' ? raw : {}) as Partial<Record<string, unknown>>;
  errors.push(...crossFieldErrors(s));
  if (errors.length || !parsed.success) return { ok: false, errors };
  const preset = typeof s.preset === 'string' ? findPreset(s.preset) : undefined;
  const radio = Object.fromEntries(RADIO_FIELDS.map((f) => [f, (s[f] ?? preset?.[f]) as number])) as Record<(typeof RADIO_FIELDS)[number], number>;
  const d = parsed.data;
  return {
    ok: true,
    settings: {
      preset: d.preset ?? null,
      frequency_hz: radio.frequency_hz!,
      bandwidth_hz: radio.bandwidth_hz!,
      sf: radio.sf!,
      cr: radio.cr!,
      tx_power_dbm: radio.tx_power_dbm!,
      st_alock: d.st_alock ?? null,
      lt_alock: d.lt_alock ?? null,
      callsign: d.callsign ?? null,
      beacon_interval_s: d.callsign != null ? (d.beacon_interval_s ?? DEFAULT_BEACON_INTERVAL_S) : null,
      flow_control: d.flow_control ?? true,
      mode: d.mode ?? 'raw',
      display_name: d.display_name ?? null,
      announce_interval_s: d.announce_interval_s ?? DEFAULT_ANNOUNCE_INTERVAL_S,
      propagation_node: d.propagation_node?.toLowerCase() ?? null,
      propagation_sync_interval_s: d.propagation_sync_interval_s ?? DEFAULT_PROPAGATION_SYNC_INTERVAL_S,
      propagation_max_stamp_cost: d.propagation_max_stamp_cost ?? DEFAULT_PROPAGATION_MAX_STAMP_COST,
    },
  };
}

/** What to give instead, named in every missing-radio-field error (docs/api.md 2.7). */
const GIVE_PRESET = `give settings.preset (${PRESET_NAMES.join(', ')}) or all five radio fields (${RADIO_FIELDS.join(', ')})`;

/** The rules across fields: a preset or all five radio fields; a beacon interval needs a callsign. */
export function crossFieldErrors(s: Partial<Record<string, unknown>>): FieldError[] {
  const errors: FieldError[] = [];
  const preset = typeof s.preset === 'string' ? findPreset(s.preset) : undefined;
  const missing = RADIO_FIELDS.filter((field) => (s[field] ?? preset?.[field]) == null);
  if (s.preset == null && missing.length === RADIO_FIELDS.length) {
    // Nothing radio given at all (an interface created with a device and no settings): one
    // error, on the field most people want, rather than five about fields they never meant to set.
    errors.push({ path: 'preset', message: `required: ${GIVE_PRESET}` });
  } else {
    for (const field of missing) errors.push({ path: field, message: `required when no preset is given: ${GIVE_PRESET}` });
  }
  if (s.beacon_interval_s != null && s.callsign == null) errors.push({ path: 'beacon_interval_s', message: 'a beacon interval needs a callsign to send' });
  return errors;
}

/** resolveRadioSettings for callers that want an error: ERR_RNODE_SETTINGS with every field. */
export function parseRnodeSettings(input: unknown): RnodeSettings {
  const r = resolveRadioSettings(input);
  if (r.ok) return r.settings;
  const summary = r.errors.map((e) => `${e.path}: ${e.message}`).join('; ');
  throw new DeviceError('ERR_RNODE_SETTINGS', `invalid RNode settings: ${summary}`, { retryable: false, facts: { fields: r.errors } });
}

/** Reticulum's derived bit rate (docs/protocols/rnode.md 1.7): SF × (4/CR) / (2^SF / BW_kHz) × 1000. */
export function bitrateBps(sf: number, bandwidthHz: number, cr: number): number {
  return ((sf * (4 / cr)) / (2 ** sf / (bandwidthHz / 1000))) * 1000;
}

export interface AirtimeParams {
  payloadBytes: number;
  sf: number;
  bandwidthHz: number;
  /** RNode coding rate 5…8 (4/5…4/8). */
  cr: number;
  preambleSymbols?: number;
  implicitHeader?: boolean;
  crc?: boolean;
  /** Low data rate optimisation; by default on when a symbol lasts more than 16 ms. */
  lowDataRateOptimize?: boolean;
}

/** LoRa time on air in milliseconds (Semtech AN1200.13; docs/protocols/rnode.md 1.8). */
export function loraTimeOnAirMs(p: AirtimeParams): number {
  const tSym = 2 ** p.sf / (p.bandwidthHz / 1000);
  const nPre = p.preambleSymbols ?? 8;
  const ih = p.implicitHeader ? 1 : 0;
  const crc = (p.crc ?? true) ? 1 : 0;
  const de = (p.lowDataRateOptimize ?? tSym > 16) ? 1 : 0;
  const cri = p.cr - 4;
  const tPre = (nPre + 4.25) * tSym;
  const bits = 8 * p.payloadBytes - 4 * p.sf + 28 + 16 * crc - 20 * ih;
  const nPay = 8 + Math.max(Math.ceil(bits / (4 * (p.sf - 2 * de))) * (cri + 4), 0);
  return tPre + nPay * tSym;
}

/** What the RNode firmware actually spends on air for one host packet: one header byte per
 *  LoRa frame, a split into two frames above 254 bytes, and a preamble of at least 18
 *  symbols (docs/protocols/rnode.md 1.2, 1.6, 1.8). Used by the simulator for its airtime figures. */
export function rnodeAirtimeMs(payloadBytes: number, radio: { sf: number; bandwidthHz: number; cr: number }): number {
  const parts = payloadBytes > 254 ? [Math.ceil(payloadBytes / 2), Math.floor(payloadBytes / 2)] : [payloadBytes];
  return parts.reduce((ms, n) => ms + loraTimeOnAirMs({ ...radio, payloadBytes: n + 1, preambleSymbols: 18 }), 0);
}
