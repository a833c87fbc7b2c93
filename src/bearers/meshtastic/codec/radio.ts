import { CHANNEL, type Channel } from './channel.ts';
import { CONFIG, type Config } from './config.ts';
import { MESH_PACKET, type MeshPacket } from './mesh.ts';
import { MODULE_CONFIG, type ModuleConfig } from './module-config.ts';
import { LORA_REGION_PRESET_MAP, type LoRaRegionPresetMap } from './presets.ts';
import { DEVICE_METADATA, type DeviceMetadata, MY_NODE_INFO, type MyNodeInfo, NODE_INFO, type NodeInfo } from './node.ts';
import { type DecodeResult, decodeMessage, defineMessage, encodeMessage, field, type MessageSchema, oneofCase, type Unknown } from './proto.ts';
import { encodeFrame } from './stream.ts';

// The two envelopes of the stream API (docs/protocols/meshtastic.md 2.2, 2.3): the host sends
// ToRadio, the device answers with FromRadio, one per frame (stream.ts).

export interface LogRecord extends Unknown {
  message?: string;
  time?: number;
  source?: string;
  /** LOG_LEVEL. */
  level?: number;
}

export const LOG_RECORD: MessageSchema<LogRecord> = defineMessage<LogRecord>('LogRecord', {
  message: field.string(1), // mesh.proto LogRecord.message = 1
  time: field.fixed32(2), // mesh.proto LogRecord.time = 2
  source: field.string(3), // mesh.proto LogRecord.source = 3
  level: field.enum(4), // mesh.proto LogRecord.level = 4 (LogRecord.Level)
});

export interface QueueStatus extends Unknown {
  /** 0 = accepted; otherwise a firmware error code. */
  res?: number;
  free?: number;
  maxlen?: number;
  mesh_packet_id?: number;
}

export const QUEUE_STATUS: MessageSchema<QueueStatus> = defineMessage<QueueStatus>('QueueStatus', {
  res: field.int32(1), // mesh.proto QueueStatus.res = 1
  free: field.uint32(2), // mesh.proto QueueStatus.free = 2
  maxlen: field.uint32(3), // mesh.proto QueueStatus.maxlen = 3
  mesh_packet_id: field.uint32(4), // mesh.proto QueueStatus.mesh_packet_id = 4
});


export const encodeLogRecord = (m: LogRecord): Uint8Array => encodeMessage(LOG_RECORD, m);
export const decodeLogRecord = (b: Uint8Array): DecodeResult<LogRecord> => decodeMessage(LOG_RECORD, b);
export const encodeQueueStatus = (m: QueueStatus): Uint8Array => encodeMessage(QUEUE_STATUS, m);
export const decodeQueueStatus = (b: Uint8Array): DecodeResult<QueueStatus> => decodeMessage(QUEUE_STATUS, b);

export interface Heartbeat extends Unknown {
  /** Leave 0: recent firmware answers nonce 1 by broadcasting its NodeInfo (2.7). */
  nonce?: number;
}

export const HEARTBEAT: MessageSchema<Heartbeat> = defineMessage<Heartbeat>('Heartbeat', {
  nonce: field.uint32(1), // mesh.proto Heartbeat.nonce = 1
});

export interface FileInfo extends Unknown {
  file_name?: string;
  size_bytes?: number;
}

export const FILE_INFO: MessageSchema<FileInfo> = defineMessage<FileInfo>('FileInfo', {
  file_name: field.string(1), // mesh.proto FileInfo.file_name = 1
  size_bytes: field.uint32(2), // mesh.proto FileInfo.size_bytes = 2
});

/** A notice for the user from the device (e.g. why a packet was refused). Its key-verification
 *  variants (fields 11-15) stay in `$unknown`. */
export interface ClientNotification extends Unknown {
  /** The id of the packet it is about, if any. */
  reply_id?: number;
  time?: number;
  /** LOG_LEVEL. */
  level?: number;
  message?: string;
}

export const CLIENT_NOTIFICATION: MessageSchema<ClientNotification> = defineMessage<ClientNotification>('ClientNotification', {
  reply_id: field.uint32(1, { optional: true }), // mesh.proto ClientNotification.reply_id = 1
  time: field.fixed32(2), // mesh.proto ClientNotification.time = 2
  level: field.enum(3), // mesh.proto ClientNotification.level = 3 (LogRecord.Level)
  message: field.string(4), // mesh.proto ClientNotification.message = 4
});

export interface ToRadio extends Unknown {
  // oneof payload_variant
  packet?: MeshPacket;
  /** Starts the handshake; the device ends it with FromRadio.config_complete_id equal to this.
   *  Use a random u32: 69420 and 69421 are special (docs/protocols/meshtastic.md 2.7). */
  want_config_id?: number;
  disconnect?: boolean;
  xmodemPacket?: Uint8Array;
  mqttClientProxyMessage?: Uint8Array;
  heartbeat?: Heartbeat;
}

const V = { oneof: 'payload_variant' };

export const TO_RADIO: MessageSchema<ToRadio> = defineMessage<ToRadio>('ToRadio', {
  packet: field.message(1, MESH_PACKET, V), // mesh.proto ToRadio.packet = 1
  want_config_id: field.uint32(3, V), // mesh.proto ToRadio.want_config_id = 3
  disconnect: field.bool(4, V), // mesh.proto ToRadio.disconnect = 4
  xmodemPacket: field.bytes(5, V), // mesh.proto ToRadio.xmodemPacket = 5 (XModem, kept encoded)
  mqttClientProxyMessage: field.bytes(6, V), // mesh.proto ToRadio.mqttClientProxyMessage = 6 (kept encoded)
  heartbeat: field.message(7, HEARTBEAT, V), // mesh.proto ToRadio.heartbeat = 7
});

export interface FromRadio extends Unknown {
  /** The device's running number for this message (0 on some firmware). */
  id?: number;
  // oneof payload_variant
  packet?: MeshPacket;
  my_info?: MyNodeInfo;
  node_info?: NodeInfo;
  config?: Config;
  log_record?: LogRecord;
  config_complete_id?: number;
  rebooted?: boolean;
  moduleConfig?: ModuleConfig;
  channel?: Channel;
  queueStatus?: QueueStatus;
  xmodemPacket?: Uint8Array;
  metadata?: DeviceMetadata;
  mqttClientProxyMessage?: Uint8Array;
  fileInfo?: FileInfo;
  clientNotification?: ClientNotification;
  deviceuiConfig?: Uint8Array;
  lockdown_status?: Uint8Array;
  region_presets?: LoRaRegionPresetMap;
}

export const FROM_RADIO: MessageSchema<FromRadio> = defineMessage<FromRadio>('FromRadio', {
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
