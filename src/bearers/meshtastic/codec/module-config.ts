import { type DecodeResult, decodeMessage, defineMessage, encodeMessage, field, type MessageOf, oneofCase } from './proto.ts';

// module_config.proto ModuleConfig: one variant per module. The modules the bridge configures
// (src/bridge/config/sections.ts `modules`: telemetry, store_forward, range_test,
// neighbor_info, canned_message) are decoded; the others stay encoded bytes. The bridge's
// `position` module maps onto Config.PositionConfig (config.ts), its canned message list onto
// AdminMessage.set_canned_message_module_messages (admin.ts), and `beacon` is the bridge's own.

export const TELEMETRY_CONFIG = defineMessage('TelemetryConfig', {
  device_update_interval: field.uint32(1), // module_config.proto ModuleConfig.TelemetryConfig.device_update_interval = 1
  environment_update_interval: field.uint32(2), // module_config.proto ModuleConfig.TelemetryConfig.environment_update_interval = 2
  environment_measurement_enabled: field.bool(3), // module_config.proto ModuleConfig.TelemetryConfig.environment_measurement_enabled = 3
  environment_screen_enabled: field.bool(4), // module_config.proto ModuleConfig.TelemetryConfig.environment_screen_enabled = 4
  environment_display_fahrenheit: field.bool(5), // module_config.proto ModuleConfig.TelemetryConfig.environment_display_fahrenheit = 5
  air_quality_enabled: field.bool(6), // module_config.proto ModuleConfig.TelemetryConfig.air_quality_enabled = 6
  air_quality_interval: field.uint32(7), // module_config.proto ModuleConfig.TelemetryConfig.air_quality_interval = 7
  power_measurement_enabled: field.bool(8), // module_config.proto ModuleConfig.TelemetryConfig.power_measurement_enabled = 8
  power_update_interval: field.uint32(9), // module_config.proto ModuleConfig.TelemetryConfig.power_update_interval = 9
  power_screen_enabled: field.bool(10), // module_config.proto ModuleConfig.TelemetryConfig.power_screen_enabled = 10
  health_measurement_enabled: field.bool(11), // module_config.proto ModuleConfig.TelemetryConfig.health_measurement_enabled = 11
  health_update_interval: field.uint32(12), // module_config.proto ModuleConfig.TelemetryConfig.health_update_interval = 12
  health_screen_enabled: field.bool(13), // module_config.proto ModuleConfig.TelemetryConfig.health_screen_enabled = 13
  device_telemetry_enabled: field.bool(14), // module_config.proto ModuleConfig.TelemetryConfig.device_telemetry_enabled = 14
  air_quality_screen_enabled: field.bool(15), // module_config.proto ModuleConfig.TelemetryConfig.air_quality_screen_enabled = 15
});
export type TelemetryConfig = MessageOf<typeof TELEMETRY_CONFIG>;

export const STORE_FORWARD_CONFIG = defineMessage('StoreForwardConfig', {
  enabled: field.bool(1), // module_config.proto ModuleConfig.StoreForwardConfig.enabled = 1
  heartbeat: field.bool(2), // module_config.proto ModuleConfig.StoreForwardConfig.heartbeat = 2
  records: field.uint32(3), // module_config.proto ModuleConfig.StoreForwardConfig.records = 3
  history_return_max: field.uint32(4), // module_config.proto ModuleConfig.StoreForwardConfig.history_return_max = 4
  history_return_window: field.uint32(5), // module_config.proto ModuleConfig.StoreForwardConfig.history_return_window = 5
  is_server: field.bool(6), // module_config.proto ModuleConfig.StoreForwardConfig.is_server = 6
});
export type StoreForwardConfig = MessageOf<typeof STORE_FORWARD_CONFIG>;

export const RANGE_TEST_CONFIG = defineMessage('RangeTestConfig', {
  enabled: field.bool(1), // module_config.proto ModuleConfig.RangeTestConfig.enabled = 1
  sender: field.uint32(2), // module_config.proto ModuleConfig.RangeTestConfig.sender = 2
  save: field.bool(3), // module_config.proto ModuleConfig.RangeTestConfig.save = 3
  clear_on_reboot: field.bool(4), // module_config.proto ModuleConfig.RangeTestConfig.clear_on_reboot = 4
});
export type RangeTestConfig = MessageOf<typeof RANGE_TEST_CONFIG>;

export const NEIGHBOR_INFO_CONFIG = defineMessage('NeighborInfoConfig', {
  enabled: field.bool(1), // module_config.proto ModuleConfig.NeighborInfoConfig.enabled = 1
  update_interval: field.uint32(2), // module_config.proto ModuleConfig.NeighborInfoConfig.update_interval = 2
  transmit_over_lora: field.bool(3), // module_config.proto ModuleConfig.NeighborInfoConfig.transmit_over_lora = 3
});
export type NeighborInfoConfig = MessageOf<typeof NEIGHBOR_INFO_CONFIG>;

export const CANNED_MESSAGE_CONFIG = defineMessage('CannedMessageConfig', {
  rotary1_enabled: field.bool(1), // module_config.proto ModuleConfig.CannedMessageConfig.rotary1_enabled = 1
  inputbroker_pin_a: field.uint32(2), // module_config.proto ModuleConfig.CannedMessageConfig.inputbroker_pin_a = 2
  inputbroker_pin_b: field.uint32(3), // module_config.proto ModuleConfig.CannedMessageConfig.inputbroker_pin_b = 3
  inputbroker_pin_press: field.uint32(4), // module_config.proto ModuleConfig.CannedMessageConfig.inputbroker_pin_press = 4
  inputbroker_event_cw: field.enum(5), // module_config.proto ModuleConfig.CannedMessageConfig.inputbroker_event_cw = 5
  inputbroker_event_ccw: field.enum(6), // module_config.proto ModuleConfig.CannedMessageConfig.inputbroker_event_ccw = 6
  inputbroker_event_press: field.enum(7), // module_config.proto ModuleConfig.CannedMessageConfig.inputbroker_event_press = 7
  updown1_enabled: field.bool(8), // module_config.proto ModuleConfig.CannedMessageConfig.updown1_enabled = 8
  enabled: field.bool(9), // module_config.proto ModuleConfig.CannedMessageConfig.enabled = 9 (deprecated)
  allow_input_source: field.string(10), // module_config.proto ModuleConfig.CannedMessageConfig.allow_input_source = 10 (deprecated)
  send_bell: field.bool(11), // module_config.proto ModuleConfig.CannedMessageConfig.send_bell = 11
});
export type CannedMessageConfig = MessageOf<typeof CANNED_MESSAGE_CONFIG>;

const VARIANT = { oneof: 'payload_variant' };

export const MODULE_CONFIG = defineMessage('ModuleConfig', {
  mqtt: field.bytes(1, VARIANT), // module_config.proto ModuleConfig.mqtt = 1 (kept encoded)
  serial: field.bytes(2, VARIANT), // module_config.proto ModuleConfig.serial = 2 (kept encoded)
  external_notification: field.bytes(3, VARIANT), // module_config.proto ModuleConfig.external_notification = 3 (kept encoded)
  store_forward: field.message(4, STORE_FORWARD_CONFIG, VARIANT), // module_config.proto ModuleConfig.store_forward = 4
  range_test: field.message(5, RANGE_TEST_CONFIG, VARIANT), // module_config.proto ModuleConfig.range_test = 5
  telemetry: field.message(6, TELEMETRY_CONFIG, VARIANT), // module_config.proto ModuleConfig.telemetry = 6
  canned_message: field.message(7, CANNED_MESSAGE_CONFIG, VARIANT), // module_config.proto ModuleConfig.canned_message = 7
  audio: field.bytes(8, VARIANT), // module_config.proto ModuleConfig.audio = 8 (kept encoded)
  remote_hardware: field.bytes(9, VARIANT), // module_config.proto ModuleConfig.remote_hardware = 9 (kept encoded)
  neighbor_info: field.message(10, NEIGHBOR_INFO_CONFIG, VARIANT), // module_config.proto ModuleConfig.neighbor_info = 10
  ambient_lighting: field.bytes(11, VARIANT), // module_config.proto ModuleConfig.ambient_lighting = 11 (kept encoded)
  detection_sensor: field.bytes(12, VARIANT), // module_config.proto ModuleConfig.detection_sensor = 12 (kept encoded)
  paxcounter: field.bytes(13, VARIANT), // module_config.proto ModuleConfig.paxcounter = 13 (kept encoded)
  statusmessage: field.bytes(14, VARIANT), // module_config.proto ModuleConfig.statusmessage = 14 (kept encoded)
  traffic_management: field.bytes(15, VARIANT), // module_config.proto ModuleConfig.traffic_management = 15 (kept encoded)
  tak: field.bytes(16, VARIANT), // module_config.proto ModuleConfig.tak = 16 (kept encoded)
  mesh_beacon: field.bytes(17, VARIANT), // module_config.proto ModuleConfig.mesh_beacon = 17 (kept encoded)
});
export type ModuleConfig = MessageOf<typeof MODULE_CONFIG>;

/** The variant a ModuleConfig carries, or undefined (none, or one newer than this schema: it
 *  is then in `$unknown` with its field number). */
export function moduleConfigVariant(config: ModuleConfig): keyof Omit<ModuleConfig, '$unknown'> | undefined {
  return oneofCase(MODULE_CONFIG, config, 'payload_variant');
}

export const encodeModuleConfig = (m: ModuleConfig): Uint8Array => encodeMessage(MODULE_CONFIG, m);
export const decodeModuleConfig = (b: Uint8Array): DecodeResult<ModuleConfig> => decodeMessage(MODULE_CONFIG, b);
