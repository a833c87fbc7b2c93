// The MeshCore companion-radio protocol's numbers, in one table with the names the firmware
// uses (docs/style.md habit 3): examples/companion_radio/MyMesh.cpp defines CMD_*, RESP_CODE_*,
// PUSH_CODE_* and ERR_CODE_*; src/helpers/BaseSerialInterface.h MAX_FRAME_SIZE;
// src/helpers/BaseChatMesh.h MAX_TEXT_LEN. docs/protocols/meshcore.md cites them by section.
// The companion_protocol.md document calls the radio's codes PACKET_* (its "Terminology"
// section says the byte values are the same); we keep the firmware's names.

/** Serial and TCP framing (docs/protocols/meshcore.md 6.1): a direction byte, a 16-bit
 *  little-endian length, then the frame. */
export const FRAME_START = {
  /** '<': host to radio (the firmware's ArduinoSerialInterface waits for it). */
  TO_RADIO: 0x3c,
  /** '>': radio to host (ArduinoSerialInterface::writeFrame). */
  FROM_RADIO: 0x3e,
} as const;

export const HEADER_BYTES = 3;
/** BaseSerialInterface.h MAX_FRAME_SIZE: the firmware never writes a longer frame and cuts a
 *  longer command to this size; 6.1. */
export const MAX_FRAME_SIZE = 176;
/** BaseChatMesh.h MAX_TEXT_LEN (10 x CIPHER_BLOCK_SIZE): the longest direct text in bytes; a
 *  longer one is refused with ERR_CODE_TABLE_FULL (docs 6.5). */
export const MAX_TEXT_LEN = 160;
/** examples/companion_radio/main.cpp TCP_PORT: the WiFi companion's port. */
export const TCP_PORT = 5000;
export const SERIAL_BAUD = 115200;
/** PUB_KEY_SIZE (Ed25519) and the prefix that names a contact in messages. */
export const PUB_KEY_SIZE = 32;
export const PUB_KEY_PREFIX_SIZE = 6;
/** MAX_PATH_SIZE: the out_path field of a contact frame. */
export const MAX_PATH_SIZE = 64;
/** Names are fixed fields of 32 bytes (contact adv_name, channel name). */
export const NAME_FIELD_SIZE = 32;
/** Channel secrets: only 128-bit keys are supported by the firmware (CMD_GET_CHANNEL). */
export const CHANNEL_SECRET_SIZE = 16;
/** out_path_len of a contact whose path is unknown: messages to it are flooded. */
export const OUT_PATH_UNKNOWN = 0xff;
/** The protocol version a host announces in CMD_DEVICE_QUERY from which contact and channel
 *  messages are queued in their _V3 form (with SNR): MyMesh.cpp queueMessage. */
export const V3_MESSAGES_FROM_VERSION = 3;
/** MyMesh.h FIRMWARE_VER_CODE of the firmware read for this table. */
export const FIRMWARE_VER_CODE = 13;

export const CMD = {
  APP_START: 1,
  SEND_TXT_MSG: 2,
  SEND_CHANNEL_TXT_MSG: 3,
  GET_CONTACTS: 4,
  GET_DEVICE_TIME: 5,
  SET_DEVICE_TIME: 6,
  SEND_SELF_ADVERT: 7,
  SYNC_NEXT_MESSAGE: 10,
  RESET_PATH: 13,
  DEVICE_QUERY: 22,
  GET_CHANNEL: 31,
  /** v8+ (companion 1.10.0); `CMD_SET_FLOOD_SCOPE` until 1.15.0 (docs 6.12). */
  SET_FLOOD_SCOPE_KEY: 54,
  SEND_CHANNEL_DATA: 62,
  /** v11+ (companion 1.15.0; docs 6.12). */
  SET_DEFAULT_FLOOD_SCOPE: 63,
  GET_DEFAULT_FLOOD_SCOPE: 64,
} as const;

export const RESP_CODE = {
  OK: 0,
  ERR: 1,
  CONTACTS_START: 2,
  CONTACT: 3,
  END_OF_CONTACTS: 4,
  SELF_INFO: 5,
  SENT: 6,
  CONTACT_MSG_RECV: 7,
  CHANNEL_MSG_RECV: 8,
  CURR_TIME: 9,
  NO_MORE_MESSAGES: 10,
  DEVICE_INFO: 13,
  DISABLED: 15,
  CONTACT_MSG_RECV_V3: 16,
  CHANNEL_MSG_RECV_V3: 17,
  CHANNEL_INFO: 18,
  CHANNEL_DATA_RECV: 27,
  /** The answer to CMD_GET_DEFAULT_FLOOD_SCOPE (docs 6.12). */
  DEFAULT_FLOOD_SCOPE: 28,
} as const;

export const PUSH_CODE = {
  ADVERT: 0x80,
  PATH_UPDATED: 0x81,
  SEND_CONFIRMED: 0x82,
  MSG_WAITING: 0x83,
  NEW_ADVERT: 0x8a,
} as const;

export const ERR_CODE = {
  UNSUPPORTED_CMD: 1,
  NOT_FOUND: 2,
  /** Also "send queue full" and "direct text too long" (docs 6.4, 6.5). */
  TABLE_FULL: 3,
  BAD_STATE: 4,
  FILE_IO_ERROR: 5,
  ILLEGAL_ARG: 6,
} as const;

/** TXT_TYPE_*: the text type byte of SEND_TXT_MSG and of received messages. */
export const TXT_TYPE = {
  PLAIN: 0,
  CLI_DATA: 1,
  /** Received messages of this type carry 4 more bytes (the signer's key prefix). */
  SIGNED_PLAIN: 2,
} as const;

/** DATA_TYPE_* of channel datagrams (src/helpers/TxtDataHelpers.h): 0 is refused, FFFF is
 *  the developer namespace (docs 6.6). */
export const DATA_TYPE = {
  RESERVED: 0x0000,
  DEV: 0xffff,
} as const;

/** MeshCore.h MAX_GROUP_DATA_LENGTH: the longest channel datagram payload that can be sent;
 *  MyMesh.cpp MAX_CHANNEL_DATA_LENGTH (MAX_FRAME_SIZE - 9) the longest the command takes
 *  (between the two the radio answers ERR_CODE_TABLE_FULL; docs 6.6). */
export const MAX_GROUP_DATA_LENGTH = 165;
export const MAX_CHANNEL_DATA_LENGTH = MAX_FRAME_SIZE - 9;

/** Flood scopes (docs 6.12): a transport key is 16 bytes (TransportKeyStore.h TransportKey);
 *  the default scope's name is a 31-byte field (NodePrefs.h default_scope_name), so at most
 *  30 bytes of name (MyMesh.cpp CMD_SET_DEFAULT_FLOOD_SCOPE: 0 < strlen < 31). */
export const TRANSPORT_KEY_SIZE = 16;
export const SCOPE_NAME_FIELD_SIZE = 31;
/** CMD_SET_FLOOD_SCOPE_KEY's second byte: 0 sets (with a key) or clears (without) the
 *  session's scope; 1 sends unscoped (v12+). */
export const FLOOD_SCOPE_VARIANT = { KEY: 0, UNSCOPED: 1 } as const;
/** FIRMWARE_VER_CODE from which each flood-scope command exists (docs 6.12). */
export const FLOOD_SCOPE_FROM_VERSION = { SESSION_KEY: 8, DEFAULT_SCOPE: 11, UNSCOPED: 12 } as const;

/** ADV_TYPE_*: what kind of node an advert (and a contact) is. */
export const ADV_TYPE = {
  NONE: 0,
  CHAT: 1,
  REPEATER: 2,
  ROOM: 3,
  SENSOR: 4,
} as const;

export type CmdName = keyof typeof CMD;
export type RespName = keyof typeof RESP_CODE;
export type PushName = keyof typeof PUSH_CODE;
export type ErrName = keyof typeof ERR_CODE;

function invert<T extends Record<string, number>>(table: T): Map<number, keyof T> {
  return new Map(Object.entries(table).map(([k, v]) => [v, k as keyof T]));
}

export const CMD_NAMES: ReadonlyMap<number, CmdName> = invert(CMD);
export const RESP_NAMES: ReadonlyMap<number, RespName> = invert(RESP_CODE);
export const PUSH_NAMES: ReadonlyMap<number, PushName> = invert(PUSH_CODE);
export const ERR_NAMES: ReadonlyMap<number, ErrName> = invert(ERR_CODE);
