import { fromUtf8, Reader, utf8, Writer } from './bytes.ts';
import {
  CMD, CMD_NAMES, FLOOD_SCOPE_VARIANT, OUT_PATH_UNKNOWN, PUB_KEY_PREFIX_SIZE, PUB_KEY_SIZE, SCOPE_NAME_FIELD_SIZE, TRANSPORT_KEY_SIZE,
} from './constants.ts';

// Host-to-radio frame bodies (commands) the bearer and the simulator use: encoders and a
// decoder (docs/protocols/meshcore.md 6.3-6.6). Minimum lengths are the firmware's
// (MyMesh.cpp handleCmdFrame): a shorter command is `malformed`, a code this table does not
// name is `unknown` (docs/style.md habit 3); both carry the code for the caller's counters.

export type Command =
  /** CMD_APP_START: bytes 1-7 reserved (meshcore.js puts an app version in byte 1; the
   *  firmware ignores them), then the application name. Answer: SELF_INFO. */
  | { type: 'APP_START'; reserved?: Uint8Array; appName: string }
  /** CMD_DEVICE_QUERY: the protocol version the host speaks; answer DEVICE_INFO. From version
   *  3 the radio queues messages in their _V3 form (6.6). */
  | { type: 'DEVICE_QUERY'; appTargetVersion: number }
  | { type: 'GET_DEVICE_TIME' }
  /** CMD_SET_DEVICE_TIME: seconds since 1970; a time before the radio's clock is refused
   *  with ERR_CODE_ILLEGAL_ARG (6.3). */
  | { type: 'SET_DEVICE_TIME'; time: number }
  /** CMD_GET_CONTACTS, with the optional `since` (contacts modified after it). */
  | { type: 'GET_CONTACTS'; since?: number }
  | { type: 'GET_CHANNEL'; index: number }
  /** CMD_SEND_TXT_MSG: the destination is the first 6 bytes of its public key (the firmware
   *  reads only those); answer SENT or ERR (6.5). */
  | { type: 'SEND_TXT_MSG'; txtType: number; attempt: number; timestamp: number; pubKeyPrefix: Uint8Array; text: string }
  /** CMD_SEND_CHANNEL_TXT_MSG: answer OK (no ack exists for channel messages). */
  | { type: 'SEND_CHANNEL_TXT_MSG'; txtType: number; channelIndex: number; timestamp: number; text: string }
  | { type: 'SYNC_NEXT_MESSAGE' }
  /** CMD_RESET_PATH: forget the contact's path, so the next message floods (6.5). */
  | { type: 'RESET_PATH'; publicKey: Uint8Array }
  /** CMD_SEND_CHANNEL_DATA: a binary datagram on a channel (6.6). `pathLen` FF floods, else
   *  the path's bytes follow (low 6 bits: hash count; top 2 bits + 1: hash size). */
  | { type: 'SEND_CHANNEL_DATA'; channelIndex: number; pathLen: number; path: Uint8Array; dataType: number; payload: Uint8Array }
  /** CMD_SEND_SELF_ADVERT: 1 = flood, 0 = zero hop (the firmware's default when absent). */
  | { type: 'SEND_SELF_ADVERT'; flood?: boolean }
  /** CMD_SET_FLOOD_SCOPE_KEY (6.12): variant 0 with a 16-byte key sets the scope floods go
   *  out in until the radio restarts, without one clears it (the default scope applies
   *  again); variant 1 sends unscoped (v12+). The firmware reads a key only from a frame of
   *  18 bytes or more, and only its first 16 bytes. */
  | { type: 'SET_FLOOD_SCOPE_KEY'; variant: number; key?: Uint8Array }
  /** CMD_SET_DEFAULT_FLOOD_SCOPE (6.12): the region name (a 31-byte field) and its key,
   *  kept in the radio's preferences; `null` (a frame shorter than 48 bytes) clears it. */
  | { type: 'SET_DEFAULT_FLOOD_SCOPE'; scope: FloodScope | null }
  | { type: 'GET_DEFAULT_FLOOD_SCOPE' }
  | { type: 'unknown'; code: number; body: Uint8Array }
  | { type: 'malformed'; code: number; reason: string };

export type CommandType = Command['type'];

/** A flood scope as the firmware keeps it: a region name and its 16-byte transport key. */
export interface FloodScope {
  name: string;
  key: Uint8Array;
}

/** Bytes of CMD_SET_DEFAULT_FLOOD_SCOPE (and of RESP_CODE_DEFAULT_FLOOD_SCOPE) with a scope. */
export const DEFAULT_SCOPE_FRAME_BYTES = 1 + SCOPE_NAME_FIELD_SIZE + TRANSPORT_KEY_SIZE;

/** The frame body of a command. Fields are cut to their width; `unknown` sends its body. */
export function encodeCommand(c: Command): Uint8Array {
  const w = new Writer();
  switch (c.type) {
    case 'APP_START':
      return w.u8(CMD.APP_START).fixed(c.reserved ?? new Uint8Array(7), 7).bytes(utf8(c.appName)).done();
    case 'DEVICE_QUERY':
      return w.u8(CMD.DEVICE_QUERY).u8(c.appTargetVersion).done();
    case 'GET_DEVICE_TIME':
      return w.u8(CMD.GET_DEVICE_TIME).done();
    case 'SET_DEVICE_TIME':
      return w.u8(CMD.SET_DEVICE_TIME).u32(c.time).done();
    case 'GET_CONTACTS':
      w.u8(CMD.GET_CONTACTS);
      if (c.since !== undefined) w.u32(c.since);
      return w.done();
    case 'GET_CHANNEL':
      return w.u8(CMD.GET_CHANNEL).u8(c.index).done();
    case 'SEND_TXT_MSG':
      return w.u8(CMD.SEND_TXT_MSG).u8(c.txtType).u8(c.attempt).u32(c.timestamp).fixed(c.pubKeyPrefix, PUB_KEY_PREFIX_SIZE).bytes(utf8(c.text)).done();
    case 'SEND_CHANNEL_TXT_MSG':
      return w.u8(CMD.SEND_CHANNEL_TXT_MSG).u8(c.txtType).u8(c.channelIndex).u32(c.timestamp).bytes(utf8(c.text)).done();
    case 'SYNC_NEXT_MESSAGE':
      return w.u8(CMD.SYNC_NEXT_MESSAGE).done();
    case 'RESET_PATH':
      return w.u8(CMD.RESET_PATH).fixed(c.publicKey, PUB_KEY_SIZE).done();
    case 'SEND_CHANNEL_DATA':
      w.u8(CMD.SEND_CHANNEL_DATA).u8(c.channelIndex).u8(c.pathLen);
      if (c.pathLen !== OUT_PATH_UNKNOWN) w.fixed(c.path, pathBytes(c.pathLen));
      return w.u16(c.dataType).bytes(c.payload).done();
    case 'SEND_SELF_ADVERT':
      w.u8(CMD.SEND_SELF_ADVERT);
      if (c.flood !== undefined) w.u8(c.flood ? 1 : 0);
      return w.done();
    case 'SET_FLOOD_SCOPE_KEY':
      w.u8(CMD.SET_FLOOD_SCOPE_KEY).u8(c.variant);
      if (c.key !== undefined) w.fixed(c.key, TRANSPORT_KEY_SIZE);
      return w.done();
    case 'SET_DEFAULT_FLOOD_SCOPE':
      w.u8(CMD.SET_DEFAULT_FLOOD_SCOPE);
      if (c.scope) w.cstring(c.scope.name, SCOPE_NAME_FIELD_SIZE).fixed(c.scope.key, TRANSPORT_KEY_SIZE);
      return w.done();
    case 'GET_DEFAULT_FLOOD_SCOPE':
      return w.u8(CMD.GET_DEFAULT_FLOOD_SCOPE).done();
    case 'unknown':
      return c.body.slice();
    case 'malformed':
      throw new RangeError(`cannot encode a malformed command (code ${c.code}: ${c.reason})`);
  }
}

/** Minimum body lengths, from handleCmdFrame's checks (SEND_CHANNEL_TXT_MSG has none there:
 *  we ask for its fixed fields). */
const MIN_LENGTH: Partial<Record<number, number>> = {
  [CMD.APP_START]: 8,
  [CMD.DEVICE_QUERY]: 2,
  [CMD.SET_DEVICE_TIME]: 5,
  [CMD.GET_CHANNEL]: 2,
  [CMD.SEND_TXT_MSG]: 14,
  [CMD.SEND_CHANNEL_TXT_MSG]: 7,
  [CMD.RESET_PATH]: 1 + PUB_KEY_SIZE,
  [CMD.SEND_CHANNEL_DATA]: 4,
  [CMD.SET_FLOOD_SCOPE_KEY]: 2,
};

/** Bytes of a path whose encoded length is `pathLen` (Packet::writePath; docs 6.6). */
export const pathBytes = (pathLen: number): number => (pathLen & 63) * ((pathLen >> 6) + 1);

/** Decodes a command frame body. Never throws. */
export function decodeCommand(body: Uint8Array): Command {
  if (body.length === 0) return { type: 'malformed', code: -1, reason: 'empty frame' };
  const code = body[0];
  const name = CMD_NAMES.get(code);
  if (name === undefined) return { type: 'unknown', code, body: body.slice() };
  const min = MIN_LENGTH[code] ?? 1;
  if (body.length < min) return { type: 'malformed', code, reason: `CMD_${name} needs ${min} bytes, got ${body.length}` };
  const r = new Reader(body);
  switch (name) {
    case 'APP_START':
      return { type: 'APP_START', reserved: r.bytesOf(7), appName: fromUtf8(r.rest()) };
    case 'DEVICE_QUERY':
      return { type: 'DEVICE_QUERY', appTargetVersion: r.u8() };
    case 'GET_DEVICE_TIME':
      return { type: 'GET_DEVICE_TIME' };
    case 'SET_DEVICE_TIME':
      return { type: 'SET_DEVICE_TIME', time: r.u32() };
    case 'GET_CONTACTS':
      // MyMesh.cpp: `since` is read only when the frame has all four of its bytes.
      return body.length >= 5 ? { type: 'GET_CONTACTS', since: r.u32() } : { type: 'GET_CONTACTS' };
    case 'GET_CHANNEL':
      return { type: 'GET_CHANNEL', index: r.u8() };
    case 'SEND_TXT_MSG':
      return {
        type: 'SEND_TXT_MSG', txtType: r.u8(), attempt: r.u8(), timestamp: r.u32(), pubKeyPrefix: r.bytesOf(PUB_KEY_PREFIX_SIZE),
        text: fromUtf8(r.rest()),
      };
    case 'SEND_CHANNEL_TXT_MSG':
      return { type: 'SEND_CHANNEL_TXT_MSG', txtType: r.u8(), channelIndex: r.u8(), timestamp: r.u32(), text: fromUtf8(r.rest()) };
    case 'SYNC_NEXT_MESSAGE':
      return { type: 'SYNC_NEXT_MESSAGE' };
    case 'RESET_PATH':
      return { type: 'RESET_PATH', publicKey: r.bytesOf(PUB_KEY_SIZE) };
    case 'SEND_CHANNEL_DATA': {
      const channelIndex = r.u8();
      const pathLen = r.u8();
      const path = pathLen === OUT_PATH_UNKNOWN ? new Uint8Array(0) : r.bytesOf(pathBytes(pathLen));
      const dataType = r.u16();
      if (r.short) return { type: 'malformed', code, reason: `CMD_SEND_CHANNEL_DATA with path length ${pathLen} needs more than ${body.length} bytes` };
      return { type: 'SEND_CHANNEL_DATA', channelIndex, pathLen, path, dataType, payload: r.rest() };
    }
    case 'SEND_SELF_ADVERT':
      return body.length >= 2 ? { type: 'SEND_SELF_ADVERT', flood: r.u8() === 1 } : { type: 'SEND_SELF_ADVERT' };
    case 'SET_FLOOD_SCOPE_KEY': {
      const variant = r.u8();
      return variant === FLOOD_SCOPE_VARIANT.KEY && body.length >= 2 + TRANSPORT_KEY_SIZE
        ? { type: 'SET_FLOOD_SCOPE_KEY', variant, key: r.bytesOf(TRANSPORT_KEY_SIZE) }
        : { type: 'SET_FLOOD_SCOPE_KEY', variant };
    }
    case 'SET_DEFAULT_FLOOD_SCOPE':
      return body.length >= DEFAULT_SCOPE_FRAME_BYTES
        ? { type: 'SET_DEFAULT_FLOOD_SCOPE', scope: { name: r.cstring(SCOPE_NAME_FIELD_SIZE), key: r.bytesOf(TRANSPORT_KEY_SIZE) } }
        : { type: 'SET_DEFAULT_FLOOD_SCOPE', scope: null };
    case 'GET_DEFAULT_FLOOD_SCOPE':
      return { type: 'GET_DEFAULT_FLOOD_SCOPE' };
  }
}
