import { CHANNEL, type Channel } from './channel.ts';
import { CONFIG, type Config } from './config.ts';
import { DEVICE_METADATA, type DeviceMetadata, POSITION, type Position, USER, type User } from './node.ts';
import { MODULE_CONFIG, type ModuleConfig } from './module-config.ts';
import { type DecodeResult, decodeMessage, defineMessage, encodeMessage, field, type MessageOf, oneofCase } from './proto.ts';

// admin.proto AdminMessage, the ADMIN_APP payload (docs/protocols/meshtastic.md 2.7). Sent to
// the own node in a MeshPacket with Data.portnum = ADMIN_APP; `get_*_request` messages are
// answered only when Data.want_response is set. Variants not listed here (ringtone, UI config,
// sensors, ...) are kept in `$unknown` untouched.

const V = { oneof: 'payload_variant' };

export const ADMIN_MESSAGE = defineMessage('AdminMessage', {
  get_channel_request: field.uint32(1, V), // admin.proto AdminMessage.get_channel_request = 1 (index + 1)
  get_channel_response: field.message(2, CHANNEL, V), // admin.proto AdminMessage.get_channel_response = 2
  get_owner_request: field.bool(3, V), // admin.proto AdminMessage.get_owner_request = 3
  get_owner_response: field.message(4, USER, V), // admin.proto AdminMessage.get_owner_response = 4
  /** CONFIG_TYPE. */
  get_config_request: field.enum(5, V), // admin.proto AdminMessage.get_config_request = 5 (ConfigType)
  get_config_response: field.message(6, CONFIG, V), // admin.proto AdminMessage.get_config_response = 6
  /** MODULE_CONFIG_TYPE. */
  get_module_config_request: field.enum(7, V), // admin.proto AdminMessage.get_module_config_request = 7 (ModuleConfigType)
  get_module_config_response: field.message(8, MODULE_CONFIG, V), // admin.proto AdminMessage.get_module_config_response = 8
  get_canned_message_module_messages_request: field.bool(10, V), // admin.proto AdminMessage.get_canned_message_module_messages_request = 10
  /** The canned messages joined by "|". */
  get_canned_message_module_messages_response: field.string(11, V), // admin.proto AdminMessage.get_canned_message_module_messages_response = 11
  get_device_metadata_request: field.bool(12, V), // admin.proto AdminMessage.get_device_metadata_request = 12
  get_device_metadata_response: field.message(13, DEVICE_METADATA, V), // admin.proto AdminMessage.get_device_metadata_response = 13
  set_owner: field.message(32, USER, V), // admin.proto AdminMessage.set_owner = 32
  set_channel: field.message(33, CHANNEL, V), // admin.proto AdminMessage.set_channel = 33
  /** Replaces the whole variant it carries. */
  set_config: field.message(34, CONFIG, V), // admin.proto AdminMessage.set_config = 34
  set_module_config: field.message(35, MODULE_CONFIG, V), // admin.proto AdminMessage.set_module_config = 35
  set_canned_message_module_messages: field.string(36, V), // admin.proto AdminMessage.set_canned_message_module_messages = 36
  remove_by_nodenum: field.uint32(38, V), // admin.proto AdminMessage.remove_by_nodenum = 38
  set_favorite_node: field.uint32(39, V), // admin.proto AdminMessage.set_favorite_node = 39
  remove_favorite_node: field.uint32(40, V), // admin.proto AdminMessage.remove_favorite_node = 40
  set_fixed_position: field.message(41, POSITION, V), // admin.proto AdminMessage.set_fixed_position = 41
  remove_fixed_position: field.bool(42, V), // admin.proto AdminMessage.remove_fixed_position = 42
  set_time_only: field.fixed32(43, V), // admin.proto AdminMessage.set_time_only = 43
  set_ignored_node: field.uint32(47, V), // admin.proto AdminMessage.set_ignored_node = 47
  remove_ignored_node: field.uint32(48, V), // admin.proto AdminMessage.remove_ignored_node = 48
  begin_edit_settings: field.bool(64, V), // admin.proto AdminMessage.begin_edit_settings = 64
  /** Saves and reboots the device. */
  commit_edit_settings: field.bool(65, V), // admin.proto AdminMessage.commit_edit_settings = 65
  factory_reset_device: field.int32(94, V), // admin.proto AdminMessage.factory_reset_device = 94
  reboot_ota_seconds: field.int32(95, V), // admin.proto AdminMessage.reboot_ota_seconds = 95 (deprecated)
  exit_simulator: field.bool(96, V), // admin.proto AdminMessage.exit_simulator = 96
  /** Reboot after this many seconds; negative cancels. */
  reboot_seconds: field.int32(97, V), // admin.proto AdminMessage.reboot_seconds = 97
  shutdown_seconds: field.int32(98, V), // admin.proto AdminMessage.shutdown_seconds = 98
  factory_reset_config: field.int32(99, V), // admin.proto AdminMessage.factory_reset_config = 99
  nodedb_reset: field.bool(100, V), // admin.proto AdminMessage.nodedb_reset = 100
  /** The node sends it with get_*_response and wants it back in set_* commands, but the
   *  firmware (AdminModule.cpp) checks it only when MeshPacket.from is not 0: a local
   *  serial/TCP client, which leaves `from` 0, may leave it out. */
  session_passkey: field.bytes(101), // admin.proto AdminMessage.session_passkey = 101 (outside the oneof)
});
export type AdminMessage = MessageOf<typeof ADMIN_MESSAGE>;

/** Which request or answer an AdminMessage carries, or undefined (none, or a variant this
 *  schema does not model: it is then in `$unknown`). */
export function adminVariant(message: AdminMessage): keyof Omit<AdminMessage, '$unknown' | 'session_passkey'> | undefined {
  return oneofCase(ADMIN_MESSAGE, message, 'payload_variant') as keyof Omit<AdminMessage, '$unknown' | 'session_passkey'> | undefined;
}

export const encodeAdminMessage = (m: AdminMessage): Uint8Array => encodeMessage(ADMIN_MESSAGE, m);
export const decodeAdminMessage = (b: Uint8Array): DecodeResult<AdminMessage> => decodeMessage(ADMIN_MESSAGE, b);
