import { type DecodeResult, decodeMessage, defineMessage, encodeMessage, field, type MessageOf } from './proto.ts';
import { DEVICE_METRICS, type DeviceMetrics } from './telemetry.ts';

// mesh.proto messages about nodes: positions, owners, the node database and the device's
// own description (docs/protocols/meshtastic.md 2.3). Property names are the proto field
// names; see proto.ts for the conventions.

// ---------------------------------------------------------------------------------------------
// Position (POSITION_APP payload)

export const POSITION = defineMessage('Position', {
  /** Degrees x 1e7. */
  latitude_i: field.sfixed32(1, { optional: true }), // mesh.proto Position.latitude_i = 1
  /** Degrees x 1e7. */
  longitude_i: field.sfixed32(2, { optional: true }), // mesh.proto Position.longitude_i = 2
  /** Metres above mean sea level. */
  altitude: field.int32(3, { optional: true }), // mesh.proto Position.altitude = 3
  time: field.fixed32(4), // mesh.proto Position.time = 4
  location_source: field.enum(5), // mesh.proto Position.location_source = 5 (LocSource)
  altitude_source: field.enum(6), // mesh.proto Position.altitude_source = 6 (AltSource)
  timestamp: field.fixed32(7), // mesh.proto Position.timestamp = 7
  timestamp_millis_adjust: field.int32(8), // mesh.proto Position.timestamp_millis_adjust = 8
  altitude_hae: field.sint32(9, { optional: true }), // mesh.proto Position.altitude_hae = 9
  altitude_geoidal_separation: field.sint32(10, { optional: true }), // mesh.proto Position.altitude_geoidal_separation = 10
  PDOP: field.uint32(11), // mesh.proto Position.PDOP = 11
  HDOP: field.uint32(12), // mesh.proto Position.HDOP = 12
  VDOP: field.uint32(13), // mesh.proto Position.VDOP = 13
  gps_accuracy: field.uint32(14), // mesh.proto Position.gps_accuracy = 14
  ground_speed: field.uint32(15, { optional: true }), // mesh.proto Position.ground_speed = 15
  ground_track: field.uint32(16, { optional: true }), // mesh.proto Position.ground_track = 16
  fix_quality: field.uint32(17), // mesh.proto Position.fix_quality = 17
  fix_type: field.uint32(18), // mesh.proto Position.fix_type = 18
  sats_in_view: field.uint32(19), // mesh.proto Position.sats_in_view = 19
  sensor_id: field.uint32(20), // mesh.proto Position.sensor_id = 20
  next_update: field.uint32(21), // mesh.proto Position.next_update = 21
  seq_number: field.uint32(22), // mesh.proto Position.seq_number = 22
  precision_bits: field.uint32(23), // mesh.proto Position.precision_bits = 23
});
export type Position = MessageOf<typeof POSITION>;

// ---------------------------------------------------------------------------------------------
// User (NODEINFO_APP payload, AdminMessage owner)

export const USER = defineMessage('User', {
  /** "!a1b2c3d4" */
  id: field.string(1), // mesh.proto User.id = 1
  /** Up to 39 UTF-8 bytes on the wire; the firmware keeps 24 (mesh.proto User.long_name). */
  long_name: field.string(2), // mesh.proto User.long_name = 2
  /** Up to 4 UTF-8 bytes. */
  short_name: field.string(3), // mesh.proto User.short_name = 3
  macaddr: field.bytes(4), // mesh.proto User.macaddr = 4 (deprecated)
  /** mesh.proto HardwareModel. */
  hw_model: field.enum(5), // mesh.proto User.hw_model = 5
  is_licensed: field.bool(6), // mesh.proto User.is_licensed = 6
  /** DEVICE_ROLE. */
  role: field.enum(7), // mesh.proto User.role = 7 (Config.DeviceConfig.Role)
  public_key: field.bytes(8), // mesh.proto User.public_key = 8
  is_unmessagable: field.bool(9, { optional: true }), // mesh.proto User.is_unmessagable = 9
});
export type User = MessageOf<typeof USER>;

// ---------------------------------------------------------------------------------------------
// Node database and the device itself (handshake)

export const NODE_INFO = defineMessage('NodeInfo', {
  num: field.uint32(1), // mesh.proto NodeInfo.num = 1
  user: field.message(2, USER), // mesh.proto NodeInfo.user = 2
  position: field.message(3, POSITION), // mesh.proto NodeInfo.position = 3
  snr: field.float(4), // mesh.proto NodeInfo.snr = 4
  last_heard: field.fixed32(5), // mesh.proto NodeInfo.last_heard = 5
  device_metrics: field.message(6, DEVICE_METRICS), // mesh.proto NodeInfo.device_metrics = 6
  channel: field.uint32(7), // mesh.proto NodeInfo.channel = 7
  via_mqtt: field.bool(8), // mesh.proto NodeInfo.via_mqtt = 8
  hops_away: field.uint32(9, { optional: true }), // mesh.proto NodeInfo.hops_away = 9
  is_favorite: field.bool(10), // mesh.proto NodeInfo.is_favorite = 10
  is_ignored: field.bool(11), // mesh.proto NodeInfo.is_ignored = 11
  is_key_manually_verified: field.bool(12), // mesh.proto NodeInfo.is_key_manually_verified = 12
  is_muted: field.bool(13), // mesh.proto NodeInfo.is_muted = 13
  has_xeddsa_signed: field.bool(14), // mesh.proto NodeInfo.has_xeddsa_signed = 14
});
export type NodeInfo = MessageOf<typeof NODE_INFO>;

export const MY_NODE_INFO = defineMessage('MyNodeInfo', {
  my_node_num: field.uint32(1), // mesh.proto MyNodeInfo.my_node_num = 1
  reboot_count: field.uint32(8), // mesh.proto MyNodeInfo.reboot_count = 8
  min_app_version: field.uint32(11), // mesh.proto MyNodeInfo.min_app_version = 11
  device_id: field.bytes(12), // mesh.proto MyNodeInfo.device_id = 12
  pio_env: field.string(13), // mesh.proto MyNodeInfo.pio_env = 13
  firmware_edition: field.enum(14), // mesh.proto MyNodeInfo.firmware_edition = 14
  nodedb_count: field.uint32(15), // mesh.proto MyNodeInfo.nodedb_count = 15
});
export type MyNodeInfo = MessageOf<typeof MY_NODE_INFO>;

export const DEVICE_METADATA = defineMessage('DeviceMetadata', {
  firmware_version: field.string(1), // mesh.proto DeviceMetadata.firmware_version = 1
  device_state_version: field.uint32(2), // mesh.proto DeviceMetadata.device_state_version = 2
  canShutdown: field.bool(3), // mesh.proto DeviceMetadata.canShutdown = 3
  hasWifi: field.bool(4), // mesh.proto DeviceMetadata.hasWifi = 4
  hasBluetooth: field.bool(5), // mesh.proto DeviceMetadata.hasBluetooth = 5
  hasEthernet: field.bool(6), // mesh.proto DeviceMetadata.hasEthernet = 6
  role: field.enum(7), // mesh.proto DeviceMetadata.role = 7
  position_flags: field.uint32(8), // mesh.proto DeviceMetadata.position_flags = 8
  hw_model: field.enum(9), // mesh.proto DeviceMetadata.hw_model = 9
  hasRemoteHardware: field.bool(10), // mesh.proto DeviceMetadata.hasRemoteHardware = 10
  hasPKC: field.bool(11), // mesh.proto DeviceMetadata.hasPKC = 11
  excluded_modules: field.uint32(12), // mesh.proto DeviceMetadata.excluded_modules = 12
  has_xeddsa: field.bool(14), // mesh.proto DeviceMetadata.has_xeddsa = 14
});
export type DeviceMetadata = MessageOf<typeof DEVICE_METADATA>;

// ---------------------------------------------------------------------------------------------
// StatusMessage (NODE_STATUS_APP payload, a node's short status line)

export const STATUS_MESSAGE = defineMessage('StatusMessage', {
  status: field.string(1), // mesh.proto StatusMessage.status = 1
});
export type StatusMessage = MessageOf<typeof STATUS_MESSAGE>;

export const encodeStatusMessage = (m: StatusMessage): Uint8Array => encodeMessage(STATUS_MESSAGE, m);
export const decodeStatusMessage = (b: Uint8Array): DecodeResult<StatusMessage> => decodeMessage(STATUS_MESSAGE, b);
export const encodePosition = (m: Position): Uint8Array => encodeMessage(POSITION, m);
export const decodePosition = (b: Uint8Array): DecodeResult<Position> => decodeMessage(POSITION, b);
export const encodeUser = (m: User): Uint8Array => encodeMessage(USER, m);
export const decodeUser = (b: Uint8Array): DecodeResult<User> => decodeMessage(USER, b);
export const encodeNodeInfo = (m: NodeInfo): Uint8Array => encodeMessage(NODE_INFO, m);
export const decodeNodeInfo = (b: Uint8Array): DecodeResult<NodeInfo> => decodeMessage(NODE_INFO, b);
export const encodeMyNodeInfo = (m: MyNodeInfo): Uint8Array => encodeMessage(MY_NODE_INFO, m);
export const decodeMyNodeInfo = (b: Uint8Array): DecodeResult<MyNodeInfo> => decodeMessage(MY_NODE_INFO, b);
export const encodeDeviceMetadata = (m: DeviceMetadata): Uint8Array => encodeMessage(DEVICE_METADATA, m);
export const decodeDeviceMetadata = (b: Uint8Array): DecodeResult<DeviceMetadata> => decodeMessage(DEVICE_METADATA, b);
