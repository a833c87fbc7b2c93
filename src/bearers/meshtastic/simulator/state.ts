import {
  CHANNEL_ROLE, type Channel, type Config, type LoRaConfig, MODEM_PRESET, type ModuleConfig, REGION_CODE, type User, DEVICE_ROLE, formatNodeId,
} from '../codec/messages.ts';
import { DEFAULT_HOP_LIMIT } from './mesh.ts';

// What a simulated Meshtastic device stores in flash: owner, configuration, module settings,
// channels. It outlives reboots (within the simulator's lifetime), as the firmware's
// /prefs files do. Defaults are those of a freshly flashed 2.6 node with its region set.

export type ConfigKey = keyof Omit<Config, '$unknown'>;
export type ModuleKey = keyof Omit<ModuleConfig, '$unknown'>;

/** Config variants in AdminMessage.ConfigType order (CONFIG_TYPE value = index), as the
 *  handshake lists them; device_ui is left out (the simulated board has no screen UI). */
export const CONFIG_KEYS: readonly ConfigKey[] = ['device', 'position', 'power', 'network', 'display', 'lora', 'bluetooth', 'security', 'sessionkey', 'device_ui'];
export const HANDSHAKE_CONFIG_KEYS: readonly ConfigKey[] = CONFIG_KEYS.slice(0, 9);

/** ModuleConfig variants in AdminMessage.ModuleConfigType order (value = index); the
 *  handshake of a 2.7 firmware lists the first 13, of a 2.8 one all (firmware.ts). */
export const MODULE_KEYS: readonly ModuleKey[] = [
  'mqtt', 'serial', 'external_notification', 'store_forward', 'range_test', 'telemetry', 'canned_message', 'audio', 'remote_hardware',
  'neighbor_info', 'ambient_lighting', 'detection_sensor', 'paxcounter', 'statusmessage', 'traffic_management', 'tak', 'mesh_beacon',
];

/** mesh.options: User.long_name max_size 40 and short_name 5, NUL included: a longer one
 *  makes the whole AdminMessage fail to decode on the device (docs 2.7). */
export const LONG_NAME_MAX_BYTES = 39;
export const SHORT_NAME_MAX_BYTES = 4;
/** channel.proto: 8 channel slots, 0 the primary. */
export const CHANNEL_SLOTS = 8;

export const DEFAULT_LORA: Readonly<LoRaConfig> = {
  use_preset: true,
  modem_preset: MODEM_PRESET.LONG_FAST,
  region: REGION_CODE.EU_868,
  hop_limit: DEFAULT_HOP_LIMIT,
  tx_enabled: true,
  tx_power: 22,
  // The slot LONG_FAST's default channel name hashes to in EU_868 (the band has one slot).
  channel_num: 1,
  sx126x_rx_boosted_gain: true,
};

export interface DeviceState {
  owner: User;
  /** One Config per variant, each holding only that variant. */
  config: Map<ConfigKey, Config>;
  modules: Map<ModuleKey, ModuleConfig>;
  channels: Channel[];
  rebootCount: number;
}

export function defaultState(num: number, options: { longName?: string; shortName?: string; hwModel: number; lora?: Partial<LoRaConfig>; positionPrecision?: number }): DeviceState {
  const id = formatNodeId(num);
  const config = new Map<ConfigKey, Config>();
  for (const key of CONFIG_KEYS) config.set(key, { [key]: new Uint8Array(0) });
  config.set('position', { position: { position_broadcast_secs: 900, position_broadcast_smart_enabled: true } });
  config.set('lora', { lora: { ...DEFAULT_LORA, ...options.lora } });
  const modules = new Map<ModuleKey, ModuleConfig>();
  for (const key of MODULE_KEYS) modules.set(key, { [key]: new Uint8Array(0) });
  for (const key of ['store_forward', 'range_test', 'telemetry', 'canned_message', 'neighbor_info'] as const) modules.set(key, { [key]: {} });
  const channels: Channel[] = [];
  for (let index = 0; index < CHANNEL_SLOTS; index++) {
    channels.push(
      index === 0
        ? // The default primary channel: no name (LongFast), the 1-byte default key index.
          { index, settings: { psk: Uint8Array.of(1), module_settings: { position_precision: options.positionPrecision ?? 13 } }, role: CHANNEL_ROLE.PRIMARY }
        : { index, settings: {}, role: CHANNEL_ROLE.DISABLED },
    );
  }
  return {
    // The firmware names a fresh node "Meshtastic abcd" / "abcd" after its id's last 4 digits.
    owner: { id, long_name: options.longName ?? `Meshtastic ${id.slice(-4)}`, short_name: options.shortName ?? id.slice(-4), hw_model: options.hwModel, role: DEVICE_ROLE.CLIENT },
    config,
    modules,
    channels,
    rebootCount: 0,
  };
}

export function loraOf(state: DeviceState): LoRaConfig {
  return state.config.get('lora')?.lora ?? {};
}

/** A node number from a name (FNV-1a), so a named simulator keeps its node id across runs.
 *  Avoids 0..3 (reserved) and BROADCAST. */
export function nodeNumFromName(name: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(name)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  if (h < 4) h += 4;
  return h === 0xffffffff ? 0xfffffffe : h;
}

export const utf8Length = (s: string | undefined): number => new TextEncoder().encode(s ?? '').length;
