import { type DecodeResult, decodeMessage, defineMessage, encodeMessage, field, type MessageOf } from './proto.ts';

// channel.proto: the channel table the handshake lists (all 8 slots, unused ones DISABLED;
// docs/protocols/meshtastic.md 2.3, 2.7).

export const MODULE_SETTINGS = defineMessage('ModuleSettings', {
  position_precision: field.uint32(1), // channel.proto ModuleSettings.position_precision = 1
  is_muted: field.bool(2), // channel.proto ModuleSettings.is_muted = 2
});
export type ModuleSettings = MessageOf<typeof MODULE_SETTINGS>;

/** channel.options: ChannelSettings.psk at most 32 bytes, name at most 11 (12 with the NUL). */
export const CHANNEL_PSK_MAX_BYTES = 32;

export const CHANNEL_SETTINGS = defineMessage('ChannelSettings', {
  channel_num: field.uint32(1), // channel.proto ChannelSettings.channel_num = 1 (deprecated)
  /** Empty = no encryption; 1 byte = a default key index; 16 or 32 bytes = AES key. */
  psk: field.bytes(2), // channel.proto ChannelSettings.psk = 2
  name: field.string(3), // channel.proto ChannelSettings.name = 3
  id: field.fixed32(4), // channel.proto ChannelSettings.id = 4
  uplink_enabled: field.bool(5), // channel.proto ChannelSettings.uplink_enabled = 5
  downlink_enabled: field.bool(6), // channel.proto ChannelSettings.downlink_enabled = 6
  module_settings: field.message(7, MODULE_SETTINGS), // channel.proto ChannelSettings.module_settings = 7
});
export type ChannelSettings = MessageOf<typeof CHANNEL_SETTINGS>;

export const CHANNEL = defineMessage('Channel', {
  /** 0..7; 0 is the primary channel. */
  index: field.int32(1), // channel.proto Channel.index = 1
  settings: field.message(2, CHANNEL_SETTINGS), // channel.proto Channel.settings = 2
  /** CHANNEL_ROLE. */
  role: field.enum(3), // channel.proto Channel.role = 3 (Channel.Role)
});
export type Channel = MessageOf<typeof CHANNEL>;

export const encodeChannel = (m: Channel): Uint8Array => encodeMessage(CHANNEL, m);
export const decodeChannel = (b: Uint8Array): DecodeResult<Channel> => decodeMessage(CHANNEL, b);
