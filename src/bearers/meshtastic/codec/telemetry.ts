import { type DecodeResult, decodeMessage, defineMessage, encodeMessage, field, type MessageOf } from './proto.ts';

// Telemetry, the TELEMETRY_APP payload (docs/protocols/meshtastic.md 2.3; telemetry.proto).
// Device metrics are decoded; the other variants stay encoded bytes.

export const DEVICE_METRICS = defineMessage('DeviceMetrics', {
  /** 0-100 %, 101 = powered from outside. */
  battery_level: field.uint32(1, { optional: true }), // telemetry.proto DeviceMetrics.battery_level = 1
  voltage: field.float(2, { optional: true }), // telemetry.proto DeviceMetrics.voltage = 2
  /** Percent of air time this node hears used in the last minute. */
  channel_utilization: field.float(3, { optional: true }), // telemetry.proto DeviceMetrics.channel_utilization = 3
  /** Percent of the last hour this node spent transmitting. */
  air_util_tx: field.float(4, { optional: true }), // telemetry.proto DeviceMetrics.air_util_tx = 4
  uptime_seconds: field.uint32(5, { optional: true }), // telemetry.proto DeviceMetrics.uptime_seconds = 5
});
export type DeviceMetrics = MessageOf<typeof DEVICE_METRICS>;

const VARIANT = { oneof: 'variant' };

export const TELEMETRY = defineMessage('Telemetry', {
  /** Seconds since 1970, 0 = unknown. */
  time: field.fixed32(1), // telemetry.proto Telemetry.time = 1
  device_metrics: field.message(2, DEVICE_METRICS, VARIANT), // telemetry.proto Telemetry.device_metrics = 2
  environment_metrics: field.bytes(3, VARIANT), // telemetry.proto Telemetry.environment_metrics = 3 (EnvironmentMetrics, kept encoded)
  air_quality_metrics: field.bytes(4, VARIANT), // telemetry.proto Telemetry.air_quality_metrics = 4 (kept encoded)
  power_metrics: field.bytes(5, VARIANT), // telemetry.proto Telemetry.power_metrics = 5 (kept encoded)
  local_stats: field.bytes(6, VARIANT), // telemetry.proto Telemetry.local_stats = 6 (kept encoded)
  health_metrics: field.bytes(7, VARIANT), // telemetry.proto Telemetry.health_metrics = 7 (kept encoded)
  host_metrics: field.bytes(8, VARIANT), // telemetry.proto Telemetry.host_metrics = 8 (kept encoded)
  traffic_management_stats: field.bytes(9, VARIANT), // telemetry.proto Telemetry.traffic_management_stats = 9 (kept encoded)
});
export type Telemetry = MessageOf<typeof TELEMETRY>;

export const encodeTelemetry = (m: Telemetry): Uint8Array => encodeMessage(TELEMETRY, m);
export const decodeTelemetry = (b: Uint8Array): DecodeResult<Telemetry> => decodeMessage(TELEMETRY, b);
export const encodeDeviceMetrics = (m: DeviceMetrics): Uint8Array => encodeMessage(DEVICE_METRICS, m);
export const decodeDeviceMetrics = (b: Uint8Array): DecodeResult<DeviceMetrics> => decodeMessage(DEVICE_METRICS, b);
