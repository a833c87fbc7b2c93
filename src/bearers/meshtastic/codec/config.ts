import { type DecodeResult, decodeMessage, defineMessage, encodeMessage, field, type MessageOf, oneofCase } from './proto.ts';

// config.proto Config: the device configuration, one variant per message. LoRa and position
// are decoded field by field (the bridge's radio and position settings map onto them,
// src/bridge/config/sections.ts); every other variant stays its encoded bytes. set_config
// replaces a whole variant (docs/protocols/meshtastic.md 2.7), so a change is: decode the
// variant the device sent, change fields, encode it back; unknown fields ride along in
// `$unknown`.

export const LORA_CONFIG = defineMessage('LoRaConfig', {
  use_preset: field.bool(1), // config.proto Config.LoRaConfig.use_preset = 1
  /** MODEM_PRESET. */
  modem_preset: field.enum(2), // config.proto Config.LoRaConfig.modem_preset = 2 (ModemPreset)
  /** kHz, when use_preset is false. */
  bandwidth: field.uint32(3), // config.proto Config.LoRaConfig.bandwidth = 3
  spread_factor: field.uint32(4), // config.proto Config.LoRaConfig.spread_factor = 4
  /** Denominator of 4/x. */
  coding_rate: field.uint32(5), // config.proto Config.LoRaConfig.coding_rate = 5
  /** MHz. */
  frequency_offset: field.float(6), // config.proto Config.LoRaConfig.frequency_offset = 6
  /** REGION_CODE; UNSET keeps the transmitter off. */
  region: field.enum(7), // config.proto Config.LoRaConfig.region = 7 (RegionCode)
  hop_limit: field.uint32(8), // config.proto Config.LoRaConfig.hop_limit = 8
  tx_enabled: field.bool(9), // config.proto Config.LoRaConfig.tx_enabled = 9
  /** dBm; 0 = the region's legal maximum. */
  tx_power: field.int32(10), // config.proto Config.LoRaConfig.tx_power = 10
  channel_num: field.uint32(11), // config.proto Config.LoRaConfig.channel_num = 11
  override_duty_cycle: field.bool(12), // config.proto Config.LoRaConfig.override_duty_cycle = 12
  sx126x_rx_boosted_gain: field.bool(13), // config.proto Config.LoRaConfig.sx126x_rx_boosted_gain = 13
  /** MHz; 0 = computed from region and channel. */
  override_frequency: field.float(14), // config.proto Config.LoRaConfig.override_frequency = 14
  pa_fan_disabled: field.bool(15), // config.proto Config.LoRaConfig.pa_fan_disabled = 15
  ignore_incoming: field.repeated(field.uint32(103)), // config.proto Config.LoRaConfig.ignore_incoming = 103
  ignore_mqtt: field.bool(104), // config.proto Config.LoRaConfig.ignore_mqtt = 104
  config_ok_to_mqtt: field.bool(105), // config.proto Config.LoRaConfig.config_ok_to_mqtt = 105
  /** FEM_LNA_MODE. */
  fem_lna_mode: field.enum(106), // config.proto Config.LoRaConfig.fem_lna_mode = 106 (FEM_LNA_Mode)
  serial_hal_only: field.bool(107), // config.proto Config.LoRaConfig.serial_hal_only = 107
});
export type LoRaConfig = MessageOf<typeof LORA_CONFIG>;

export const POSITION_CONFIG = defineMessage('PositionConfig', {
  position_broadcast_secs: field.uint32(1), // config.proto Config.PositionConfig.position_broadcast_secs = 1
  position_broadcast_smart_enabled: field.bool(2), // config.proto Config.PositionConfig.position_broadcast_smart_enabled = 2
  fixed_position: field.bool(3), // config.proto Config.PositionConfig.fixed_position = 3
  gps_enabled: field.bool(4), // config.proto Config.PositionConfig.gps_enabled = 4 (deprecated)
  gps_update_interval: field.uint32(5), // config.proto Config.PositionConfig.gps_update_interval = 5
  gps_attempt_time: field.uint32(6), // config.proto Config.PositionConfig.gps_attempt_time = 6 (deprecated)
  position_flags: field.uint32(7), // config.proto Config.PositionConfig.position_flags = 7
  rx_gpio: field.uint32(8), // config.proto Config.PositionConfig.rx_gpio = 8
  tx_gpio: field.uint32(9), // config.proto Config.PositionConfig.tx_gpio = 9
  broadcast_smart_minimum_distance: field.uint32(10), // config.proto Config.PositionConfig.broadcast_smart_minimum_distance = 10
  broadcast_smart_minimum_interval_secs: field.uint32(11), // config.proto Config.PositionConfig.broadcast_smart_minimum_interval_secs = 11
  gps_en_gpio: field.uint32(12), // config.proto Config.PositionConfig.gps_en_gpio = 12
  gps_mode: field.enum(13), // config.proto Config.PositionConfig.gps_mode = 13 (GpsMode)
});
export type PositionConfig = MessageOf<typeof POSITION_CONFIG>;

const VARIANT = { oneof: 'payload_variant' };

export const CONFIG = defineMessage('Config', {
  device: field.bytes(1, VARIANT), // config.proto Config.device = 1 (DeviceConfig, kept encoded)
  position: field.message(2, POSITION_CONFIG, VARIANT), // config.proto Config.position = 2
  power: field.bytes(3, VARIANT), // config.proto Config.power = 3 (PowerConfig, kept encoded)
  network: field.bytes(4, VARIANT), // config.proto Config.network = 4 (NetworkConfig, kept encoded)
  display: field.bytes(5, VARIANT), // config.proto Config.display = 5 (DisplayConfig, kept encoded)
  lora: field.message(6, LORA_CONFIG, VARIANT), // config.proto Config.lora = 6
  bluetooth: field.bytes(7, VARIANT), // config.proto Config.bluetooth = 7 (BluetoothConfig, kept encoded)
  security: field.bytes(8, VARIANT), // config.proto Config.security = 8 (SecurityConfig, kept encoded)
  sessionkey: field.bytes(9, VARIANT), // config.proto Config.sessionkey = 9 (SessionkeyConfig, kept encoded)
  device_ui: field.bytes(10, VARIANT), // config.proto Config.device_ui = 10 (DeviceUIConfig, kept encoded)
});
export type Config = MessageOf<typeof CONFIG>;

/** The variant a Config carries ('lora', 'device', ...), or undefined (none, or one newer than
 *  this schema: it is then in `$unknown`). */
export function configVariant(config: Config): keyof Omit<Config, '$unknown'> | undefined {
  return oneofCase(CONFIG, config, 'payload_variant');
}

export const encodeConfig = (m: Config): Uint8Array => encodeMessage(CONFIG, m);
export const decodeConfig = (b: Uint8Array): DecodeResult<Config> => decodeMessage(CONFIG, b);
export const encodeLoRaConfig = (m: LoRaConfig): Uint8Array => encodeMessage(LORA_CONFIG, m);
export const decodeLoRaConfig = (b: Uint8Array): DecodeResult<LoRaConfig> => decodeMessage(LORA_CONFIG, b);
