import { type LoRaRegionPresetMap, MODEM_PRESET, REGION_CODE } from '../codec/messages.ts';

// The region-to-preset map a simulated 2.8 board sends after its metadata (FromRadio
// region_presets; docs/protocols/meshtastic.md 2.9). A small made-up table in the firmware's
// grouped layout, not the firmware's own: enough for a host to decode and show it.

export function regionPresetMap(): LoRaRegionPresetMap {
  const standard = [
    MODEM_PRESET.LONG_FAST, MODEM_PRESET.LONG_MODERATE, MODEM_PRESET.LONG_SLOW, MODEM_PRESET.MEDIUM_SLOW, MODEM_PRESET.MEDIUM_FAST,
    MODEM_PRESET.SHORT_SLOW, MODEM_PRESET.SHORT_FAST, MODEM_PRESET.SHORT_TURBO,
  ];
  return {
    groups: [{ presets: standard, default_preset: MODEM_PRESET.LONG_FAST }],
    region_groups: [REGION_CODE.US, REGION_CODE.EU_433, REGION_CODE.EU_868].map((region) => ({ region, group_index: 0 })),
  };
}
