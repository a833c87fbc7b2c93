import { CHANNEL, type Channel } from './channel.ts';
import { CONFIG, type Config } from './config.ts';
import { MESH_PACKET, type MeshPacket } from './mesh.ts';
import { MODULE_CONFIG, type ModuleConfig } from './module-config.ts';
import { LORA_REGION_PRESET_MAP, type LoRaRegionPresetMap } from './presets.ts';
import { DEVICE_METADATA, type DeviceMetadata, MY_NODE_INFO, type MyNodeInfo, NODE_INFO, type NodeInfo } from './node.ts';
import { type DecodeResult, decodeMessage, defineMessage, encodeMessage, field, type MessageOf, oneofCase } from './proto.ts';
import { encodeFrame } from './stream.ts';

// The two envelopes of the stream API (docs/protocols/meshtastic.md 2.2, 2.3): the host sends
// ToRadio, the device answers with FromRadio, one per frame (stream.ts).

export const LOG_RECORD = defineMessage('LogRecord', {
  message: field.string(1), // mesh.proto LogRecord.message = 1
  time: field.fixed32(2), // mesh.proto LogRecord.time = 2
  source: field.string(3), // mesh.proto LogRecord.source = 3
  /** LOG_LEVEL. */
  level: field.enum(4), // mesh.proto LogRecord.level = 4 (LogRecord.Level)
});
export type LogRecord = MessageOf<typeof LOG_RECORD>;

export const QUEUE_STATUS = defineMessage('QueueStatus', {
  /** 0 = accepted; otherwise a firmware error code. */
  res: field.int32(1), // mesh.proto QueueStatus.res = 1
  free: field.uint32(2), // mesh.proto QueueStatus.free = 2
  maxlen: field.uint32(3), // mesh.proto QueueStatus.maxlen = 3
  mesh_packet_id: field.uint32(4), // mesh.proto QueueStatus.mesh_packet_id = 4
});
export type QueueStatus = MessageOf<typeof QUEUE_STATUS>;


export const encodeLogRecord = (m: LogRecord): Uint8Array => encodeMessage(LOG_RECORD, m);
export const decodeLogRecord = (b: Uint8Array): DecodeResult<LogRecord> => decodeMessage(LOG_RECORD, b);
export const encodeQueueStatus = (m: QueueStatus): Uint8Array => encodeMessage(QUEUE_STATUS, m);
export const decodeQueueStatus = (b: Uint8Array): DecodeResult<QueueStatus> => decodeMessage(QUEUE_STATUS, b);

export const HEARTBEAT = defineMessage('Heartbeat', {
  /** Leave 0: recent firmware answers nonce 1 by broadcasting its NodeInfo (2.7). */
  nonce: field.uint32(1), // mesh.proto Heartbeat.nonce = 1
});
export type Heartbeat = MessageOf<typeof HEARTBEAT>;

export const FILE_INFO = defineMessage('FileInfo', {
  file_name: field.string(1), // mesh.proto FileInfo.file_name = 1
  size_bytes: field.uint32(2), // mesh.proto FileInfo.size_bytes = 2
});
export type FileInfo = MessageOf<typeof FILE_INFO>;

export const CLIENT_NOTIFICATION = defineMessage('ClientNotification', {
  /** The id of the packet it is about, if any. */
  reply_id: field.uint32(1, { optional: true }), // mesh.proto ClientNotification.reply_id = 1
  time: field.fixed32(2), // mesh.proto ClientNotification.time = 2
  /** LOG_LEVEL. */
  level: field.enum(3), // mesh.proto ClientNotification.level = 3 (LogRecord.Level)
  message: field.string(4), // mesh.proto ClientNotification.message = 4
});
/** A notice for the user from the device (e.g. why a packet was refused). Its key-verification
 *  variants (fields 11-15) stay in `$unknown`. */
export type ClientNotification = MessageOf<typeof CLIENT_NOTIFICATION>;

const V = { oneof: 'payload_variant' };

export const TO_RADIO = defineMessage('ToRadio', {
  packet: field.message(1, MESH_PACKET, V), // mesh.proto ToRadio.packet = 1
  /** Starts the handshake; the device ends it with FromRadio.config_complete_id equal to this.
   *  Use a random u32: 69420 and 69421 are special (docs/protocols/meshtastic.md 2.7). */
  want_config_id: field.uint32(3, V), // mesh.proto ToRadio.want_config_id = 3
  disconnect: field.bool(4, V), // mesh.proto ToRadio.disconnect = 4
  xmodemPacket: field.bytes(5, V), // mesh.proto ToRadio.xmodemPacket = 5 (XModem, kept encoded)
  mqttClientProxyMessage: field.bytes(6, V), // mesh.proto ToRadio.mqttClientProxyMessage = 6 (kept encoded)
  heartbeat: field.message(7, HEARTBEAT, V), // mesh.proto ToRadio.heartbeat = 7
});
export type ToRadio = MessageOf<typeof TO_RADIO>;

export const FROM_RADIO = defineMessage('FromRadio', {
  /** The device's running number for this message (0 on some firmware). */
  id: field.uint32(1), // mesh.proto FromRadio.id = 1
  packet: field.message(2, MESH_PACKET, V), // mesh.proto FromRadio.packet = 2
  my_info: field.message(3, MY_NODE_INFO, V), // mesh.proto FromRadio.my_info = 3
  node_info: field.message(4, NODE_INFO, V), // mesh.proto FromRadio.node_info = 4
  config: field.message(5, CONFIG, V), // mesh.proto FromRadio.config = 5
  log_record: field.message(6, LOG_RECORD, V), // mesh.proto FromRadio.log_record = 6
  config_complete_id: field.uint32(7, V), // mesh.proto FromRadio.config_complete_id = 7
  rebooted: field.bool(8, V), // mesh.proto FromRadio.rebooted = 8
  moduleConfig: field.message(9, MODULE_CONFIG, V), // mesh.proto FromRadio.moduleConfig = 9
  channel: field.message(10, CHANNEL, V), // mesh.proto FromRadio.channel = 10
  queueStatus: field.message(11, QUEUE_STATUS, V), // mesh.proto FromRadio.queueStatus = 11
  xmodemPacket: field.bytes(12, V), // mesh.proto FromRadio.xmodemPacket = 12 (XModem, kept encoded)
  metadata: field.message(13, DEVICE_METADATA, V), // mesh.proto FromRadio.metadata = 13
  mqttClientProxyMessage: field.bytes(14, V), // mesh.proto FromRadio.mqttClientProxyMessage = 14 (kept encoded)
  fileInfo: field.message(15, FILE_INFO, V), // mesh.proto FromRadio.fileInfo = 15
  clientNotification: field.message(16, CLIENT_NOTIFICATION, V), // mesh.proto FromRadio.clientNotification = 16
  deviceuiConfig: field.bytes(17, V), // mesh.proto FromRadio.deviceuiConfig = 17 (DeviceUIConfig, kept encoded)
  lockdown_status: field.bytes(18, V), // mesh.proto FromRadio.lockdown_status = 18 (LockdownStatus, kept encoded)
  region_presets: field.message(19, LORA_REGION_PRESET_MAP, V), // mesh.proto FromRadio.region_presets = 19 (LoRaRegionPresetMap)
});
export type FromRadio = MessageOf<typeof FROM_RADIO>;

export type ToRadioVariant = keyof Omit<ToRadio, '$unknown'>;
export type FromRadioVariant = keyof Omit<FromRadio, '$unknown' | 'id'>;

/** What a ToRadio carries, or undefined. */
export function toRadioVariant(message: ToRadio): ToRadioVariant | undefined {
  return oneofCase(TO_RADIO, message, 'payload_variant');
}

/** What a FromRadio carries ('packet', 'config_complete_id', ...), or undefined (nothing, or a
 *  variant newer than this schema: it is then in `$unknown`; count it, docs/style.md habit 3). */
export function fromRadioVariant(message: FromRadio): FromRadioVariant | undefined {
  return oneofCase(FROM_RADIO, message, 'payload_variant') as FromRadioVariant | undefined;
}

export const encodeToRadio = (m: ToRadio): Uint8Array => encodeMessage(TO_RADIO, m);
export const decodeToRadio = (b: Uint8Array): DecodeResult<ToRadio> => decodeMessage(TO_RADIO, b);
export const encodeFromRadio = (m: FromRadio): Uint8Array => encodeMessage(FROM_RADIO, m);
export const decodeFromRadio = (b: Uint8Array): DecodeResult<FromRadio> => decodeMessage(FROM_RADIO, b);

/** A ToRadio as a whole stream frame (header and body), ready to write. Throws when the body
 *  passes 512 bytes (see encodeFrame); a Data.payload within DATA_PAYLOAD_LEN never does. */
export function encodeToRadioFrame(message: ToRadio): Uint8Array {
  return encodeFrame(encodeToRadio(message));
}
