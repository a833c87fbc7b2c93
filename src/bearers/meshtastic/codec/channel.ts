import { type DecodeResult, decodeMessage, defineMessage, encodeMessage, field, type MessageSchema, type Unknown } from './proto.ts';

// channel.proto: the channel table the handshake lists (all 8 slots, unused ones DISABLED;
// docs/protocols/meshtastic.md 2.3, 2.7).

export interface ModuleSettings extends Unknown {
  position_precision?: number;
  is_muted?: boolean;
}

export const MODULE_SETTINGS: MessageSchema<ModuleSettings> = defineMessage<ModuleSettings>('ModuleSettings', {
  position_precision: field.uint32(1), // channel.proto ModuleSettings.position_precision = 1
  is_muted: field.bool(2), // channel.proto ModuleSettings.is_muted = 2
});

/** channel.options: ChannelSettings.psk at most 32 bytes, name at most 11 (12 with the NUL). */
export const CHANNEL_PSK_MAX_BYTES = 32;

export interface ChannelSettings extends Unknown {
  channel_num?: number;
  /** Empty = no encryption; 1 byte = a default key index; 16 or 32 bytes = AES key. */
  psk?: Uint8Array;
  name?: string;
  id?: number;
  uplink_enabled?: boolean;
  downlink_enabled?: boolean;
  module_settings?: ModuleSettings;
}

export const CHANNEL_SETTINGS: MessageSchema<ChannelSettings> = defineMessage<ChannelSettings>('ChannelSettings', {
  channel_num: field.uint32(1), // channel.proto ChannelSettings.channel_num = 1 (deprecated)
  psk: field.bytes(2), // channel.proto ChannelSettings.psk = 2
  name: field.string(3), // channel.proto ChannelSettings.name = 3
  id: field.fixed32(4), // channel.proto ChannelSettings.id = 4
  uplink_enabled: field.bool(5), // channel.proto ChannelSettings.uplink_enabled = 5
  downlink_enabled: field.bool(6), // channel.proto ChannelSettings.downlink_enabled = 6
  module_settings: field.message(7, MODULE_SETTINGS), // channel.proto ChannelSettings.module_settings = 7
});

export interface Channel extends Unknown {
  /** 0..7; 0 is the primary channel. */
  index?: number;
  settings?: ChannelSettings;
  /** CHANNEL_ROLE. */
  role?: number;
}

export const CHANNEL: MessageSchema<Channel> = defineMessage<Channel>('Channel', {
  index: field.int32(1), // channel.proto Channel.index = 1
  settings: field.message(2, CHANNEL_SETTINGS), // channel.proto Channel.settings = 2
  role: field.enum(3), // channel.proto Channel.role = 3 (Channel.Role)
});

export const encodeChannel = (m: Channel): Uint8Array => encodeMessage(CHANNEL, m);
export const decodeChannel = (b: Uint8Array): DecodeResult<Channel> => decodeMessage(CHANNEL, b);
