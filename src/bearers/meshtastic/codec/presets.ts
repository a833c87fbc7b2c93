import { type DecodeResult, decodeMessage, defineMessage, encodeMessage, field, type MessageOf } from './proto.ts';

// mesh.proto LoRaRegionPresetMap, FromRadio.region_presets (2.8 handshake, right after the
// metadata): which modem presets each region allows, grouped so the map fits one frame
// (docs/protocols/meshtastic.md 2.9). Property names are the proto field names.

export const LORA_PRESET_GROUP = defineMessage('LoRaPresetGroup', {
  /** MODEM_PRESET values legal in every region of the group. */
  presets: field.repeated(field.enum(1)), // mesh.proto LoRaPresetGroup.presets = 1 (packed)
  default_preset: field.enum(2), // mesh.proto LoRaPresetGroup.default_preset = 2
  licensed_only: field.bool(3), // mesh.proto LoRaPresetGroup.licensed_only = 3
});
export type LoRaPresetGroup = MessageOf<typeof LORA_PRESET_GROUP>;

export const LORA_REGION_PRESETS = defineMessage('LoRaRegionPresets', {
  /** REGION_CODE. */
  region: field.enum(1), // mesh.proto LoRaRegionPresets.region = 1
  /** Index into LoRaRegionPresetMap.groups. */
  group_index: field.uint32(2), // mesh.proto LoRaRegionPresets.group_index = 2
});
export type LoRaRegionPresets = MessageOf<typeof LORA_REGION_PRESETS>;

export const LORA_REGION_PRESET_MAP = defineMessage('LoRaRegionPresetMap', {
  groups: field.repeated(field.message(1, LORA_PRESET_GROUP)), // mesh.proto LoRaRegionPresetMap.groups = 1
  region_groups: field.repeated(field.message(2, LORA_REGION_PRESETS)), // mesh.proto LoRaRegionPresetMap.region_groups = 2
});
export type LoRaRegionPresetMap = MessageOf<typeof LORA_REGION_PRESET_MAP>;

/** The modem presets a region allows, or null when the map says nothing about it (then it
 *  is not restricted, mesh.proto LoRaRegionPresetMap). */
export function presetsForRegion(map: LoRaRegionPresetMap, region: number): LoRaPresetGroup | null {
  const entry = map.region_groups?.find((r) => (r.region ?? 0) === region);
  return entry ? (map.groups?.[entry.group_index ?? 0] ?? null) : null;
}

export const encodeRegionPresetMap = (m: LoRaRegionPresetMap): Uint8Array => encodeMessage(LORA_REGION_PRESET_MAP, m);
export const decodeRegionPresetMap = (b: Uint8Array): DecodeResult<LoRaRegionPresetMap> => decodeMessage(LORA_REGION_PRESET_MAP, b);
