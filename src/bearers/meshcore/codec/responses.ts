import { cutUtf8, fromUtf8, Reader, utf8, Writer } from './bytes.ts';
import { DEFAULT_SCOPE_FRAME_BYTES, type FloodScope } from './commands.ts';
import {
  CHANNEL_SECRET_SIZE, MAX_PATH_SIZE, SCOPE_NAME_FIELD_SIZE, TRANSPORT_KEY_SIZE, NAME_FIELD_SIZE, PUB_KEY_PREFIX_SIZE, PUB_KEY_SIZE, PUSH_CODE, PUSH_NAMES, RESP_CODE, RESP_NAMES,
  TXT_TYPE,
} from './constants.ts';

// Radio-to-host frame bodies: the responses (RESP_CODE_*) and pushes (PUSH_CODE_*) a bearer
// needs, with encoders (the simulator's side) and one decoder (the host's side). Layouts are
// the firmware's (examples/companion_radio/MyMesh.cpp); where companion_protocol.md or
// meshcore.js read them differently, docs/protocols/meshcore.md 6.9 says how. Unknown codes
// decode to `unknown`, known codes with too few bytes to `malformed` (docs/style.md habit 3).

/** A contact as RESP_CODE_CONTACT and PUSH_CODE_NEW_ADVERT carry it (writeContactRespFrame). */
export interface Contact {
  publicKey: Uint8Array;
  /** ADV_TYPE_*. */
  type: number;
  flags: number;
  /** Encoded path length; OUT_PATH_UNKNOWN (FF) = no path, messages flood. */
  outPathLen: number;
  /** MAX_PATH_SIZE bytes, of which outPathLen's count are meaningful. */
  outPath: Uint8Array;
  name: string;
  /** Sender's clock at its last advert, seconds. */
  lastAdvert: number;
  /** Degrees x 1e6. */
  latitude: number;
  longitude: number;
  /** Radio's clock at the last change of this contact (GET_CONTACTS `since` filters on it). */
  lastmod: number;
}

/** The fields both the plain and the _V3 contact message carry. */
export interface ContactMessageFields {
  pubKeyPrefix: Uint8Array;
  /** Hops the message flooded over, or FF when it came by a direct route. */
  pathLen: number;
  txtType: number;
  /** The sender's clock, seconds. */
  timestamp: number;
  /** 4 bytes (the signer's key prefix), present only when txtType is SIGNED_PLAIN. */
  signature?: Uint8Array;
  text: string;
}

export interface ChannelMessageFields {
  channelIndex: number;
  pathLen: number;
  txtType: number;
  timestamp: number;
  /** As received: the firmware puts "<sender name>: " in front of a channel text. */
  text: string;
}

export type RadioMessage =
  /** RESP_CODE_OK; companion_protocol.md allows a 4-byte value, the firmware sends none. */
  | { type: 'OK'; value?: number }
  | { type: 'ERR'; code?: number }
  | { type: 'CONTACTS_START'; count: number }
  | { type: 'CONTACT'; contact: Contact }
  | { type: 'END_OF_CONTACTS'; mostRecentLastmod: number }
  | {
    type: 'SELF_INFO'; advType: number; txPower: number; maxTxPower: number; publicKey: Uint8Array; latitude: number; longitude: number;
    multiAcks: number; advertLocPolicy: number; telemetryModes: number; manualAddContacts: number;
    /** kHz (the firmware sends MHz x 1000). */
    radioFreq: number;
    /** Hz (kHz x 1000). */
    radioBw: number; radioSf: number; radioCr: number; name: string;
  }
  /** RESP_CODE_SENT: `expectedAck` is the tag the SEND_CONFIRMED push will carry. */
  | { type: 'SENT'; flood: boolean; expectedAck: number; suggestedTimeoutMs: number }
  | ({ type: 'CONTACT_MSG_RECV' } & ContactMessageFields)
  | ({ type: 'CONTACT_MSG_RECV_V3'; snr: number } & ContactMessageFields)
  | ({ type: 'CHANNEL_MSG_RECV' } & ChannelMessageFields)
  | ({ type: 'CHANNEL_MSG_RECV_V3'; snr: number } & ChannelMessageFields)
  | { type: 'CURR_TIME'; time: number }
  | { type: 'NO_MORE_MESSAGES' }
  /** RESP_CODE_DEVICE_INFO; the fields after firmwareVersion exist from version 3, the last
   *  two from 9 and 10. */
  | {
    type: 'DEVICE_INFO'; firmwareVersion: number; maxContacts?: number; maxChannels?: number; blePin?: number; buildDate?: string;
    model?: string; version?: string; clientRepeat?: number; pathHashMode?: number;
  }
  | { type: 'DISABLED' }
  | { type: 'CHANNEL_INFO'; index: number; name: string; secret: Uint8Array }
  /** RESP_CODE_CHANNEL_DATA_RECV: a channel datagram (MyMesh.cpp onChannelDataRecv). The
   *  path length is FF when it came by a direct route (inverted from the send side, 6.6). */
  | { type: 'CHANNEL_DATA_RECV'; snr: number; channelIndex: number; pathLen: number; dataType: number; payload: Uint8Array }
  /** RESP_CODE_DEFAULT_FLOOD_SCOPE: the radio's default scope, or null (a 1-byte frame). */
  | { type: 'DEFAULT_FLOOD_SCOPE'; scope: FloodScope | null }
  /** PUSH_CODE_ADVERT: a known contact's advert was heard (or a new one auto-added). */
  | { type: 'ADVERT'; publicKey: Uint8Array }
  | { type: 'PATH_UPDATED'; publicKey: Uint8Array }
  /** PUSH_CODE_SEND_CONFIRMED: 4-byte ack code (SENT's expectedAck) and round trip in ms. */
  | { type: 'SEND_CONFIRMED'; ackCode: number; roundTripMs: number }
  | { type: 'MSG_WAITING' }
  /** PUSH_CODE_NEW_ADVERT: an advert from a node not in the contacts (manual-add mode). */
  | { type: 'NEW_ADVERT'; contact: Contact }
  | { type: 'unknown'; code: number; body: Uint8Array }
  | { type: 'malformed'; code: number; reason: string };

export type RadioMessageType = RadioMessage['type'];

const CONTACT_BYTES = PUB_KEY_SIZE + 3 + MAX_PATH_SIZE + NAME_FIELD_SIZE + 16;

const snrByte = (snr: number) => Math.max(-128, Math.min(127, Math.round(snr * 4)));

function writeContact(w: Writer, c: Contact): Writer {
  return w.fixed(c.publicKey, PUB_KEY_SIZE).u8(c.type).u8(c.flags).u8(c.outPathLen).fixed(c.outPath, MAX_PATH_SIZE)
    .cstring(c.name, NAME_FIELD_SIZE).u32(c.lastAdvert).i32(c.latitude).i32(c.longitude).u32(c.lastmod);
}

function readContact(r: Reader): Contact {
  return {
    publicKey: r.bytesOf(PUB_KEY_SIZE), type: r.u8(), flags: r.u8(), outPathLen: r.u8(), outPath: r.bytesOf(MAX_PATH_SIZE),
    name: r.cstring(NAME_FIELD_SIZE), lastAdvert: r.u32(), latitude: r.i32(), longitude: r.i32(), lastmod: r.u32(),
  };
}

function writeContactMessage(w: Writer, m: ContactMessageFields): Uint8Array {
  w.fixed(m.pubKeyPrefix, PUB_KEY_PREFIX_SIZE).u8(m.pathLen).u8(m.txtType).u32(m.timestamp);
  if (m.txtType === TXT_TYPE.SIGNED_PLAIN) w.fixed(m.signature ?? new Uint8Array(4), 4);
  return w.bytes(utf8(m.text)).done();
}

function readContactMessage(r: Reader): ContactMessageFields {
  const pubKeyPrefix = r.bytesOf(PUB_KEY_PREFIX_SIZE);
  const pathLen = r.u8();
  const txtType = r.u8();
  const timestamp = r.u32();
  const m: ContactMessageFields = { pubKeyPrefix, pathLen, txtType, timestamp, text: '' };
  // companion_protocol.md "Contact Message Format"; MyMesh.cpp queueMessage's `extra`.
  if (txtType === TXT_TYPE.SIGNED_PLAIN) m.signature = r.bytesOf(4);
  m.text = fromUtf8(r.rest());
  return m;
}

const writeChannelMessage = (w: Writer, m: ChannelMessageFields) =>
  w.u8(m.channelIndex).u8(m.pathLen).u8(m.txtType).u32(m.timestamp).bytes(utf8(m.text)).done();

const readChannelMessage = (r: Reader): ChannelMessageFields => ({
  channelIndex: r.u8(), pathLen: r.u8(), txtType: r.u8(), timestamp: r.u32(), text: fromUtf8(r.rest()),
});

/** The frame body of a radio message. Strings are cut to their fields; `unknown` sends its
 *  body. The caller keeps texts within MAX_FRAME_SIZE (the firmware cuts them). */
export function encodeRadioMessage(m: RadioMessage): Uint8Array {
  const w = new Writer();
  switch (m.type) {
    case 'OK':
      w.u8(RESP_CODE.OK);
      if (m.value !== undefined) w.u32(m.value);
      return w.done();
    case 'ERR':
      w.u8(RESP_CODE.ERR);
      if (m.code !== undefined) w.u8(m.code);
      return w.done();
    case 'CONTACTS_START':
      return w.u8(RESP_CODE.CONTACTS_START).u32(m.count).done();
    case 'CONTACT':
      return writeContact(w.u8(RESP_CODE.CONTACT), m.contact).done();
    case 'END_OF_CONTACTS':
      return w.u8(RESP_CODE.END_OF_CONTACTS).u32(m.mostRecentLastmod).done();
    case 'SELF_INFO':
      return w.u8(RESP_CODE.SELF_INFO).u8(m.advType).u8(m.txPower).u8(m.maxTxPower).fixed(m.publicKey, PUB_KEY_SIZE).i32(m.latitude)
        .i32(m.longitude).u8(m.multiAcks).u8(m.advertLocPolicy).u8(m.telemetryModes).u8(m.manualAddContacts).u32(m.radioFreq)
        .u32(m.radioBw).u8(m.radioSf).u8(m.radioCr).bytes(utf8(m.name)).done();
    case 'SENT':
      return w.u8(RESP_CODE.SENT).u8(m.flood ? 1 : 0).u32(m.expectedAck).u32(m.suggestedTimeoutMs).done();
    case 'CONTACT_MSG_RECV':
      return writeContactMessage(w.u8(RESP_CODE.CONTACT_MSG_RECV), m);
    case 'CONTACT_MSG_RECV_V3':
      return writeContactMessage(w.u8(RESP_CODE.CONTACT_MSG_RECV_V3).i8(snrByte(m.snr)).u8(0).u8(0), m);
    case 'CHANNEL_MSG_RECV':
      return writeChannelMessage(w.u8(RESP_CODE.CHANNEL_MSG_RECV), m);
    case 'CHANNEL_MSG_RECV_V3':
      return writeChannelMessage(w.u8(RESP_CODE.CHANNEL_MSG_RECV_V3).i8(snrByte(m.snr)).u8(0).u8(0), m);
    case 'CURR_TIME':
      return w.u8(RESP_CODE.CURR_TIME).u32(m.time).done();
    case 'NO_MORE_MESSAGES':
      return w.u8(RESP_CODE.NO_MORE_MESSAGES).done();
    case 'DEVICE_INFO':
      w.u8(RESP_CODE.DEVICE_INFO).u8(m.firmwareVersion);
      if (m.firmwareVersion < 3) return w.done();
      w.u8(Math.floor((m.maxContacts ?? 0) / 2)).u8(m.maxChannels ?? 0).u32(m.blePin ?? 0)
        .fixed(cutUtf8(utf8(m.buildDate ?? ''), 12), 12).cstring(m.model ?? '', 40).cstring(m.version ?? '', 20);
      if (m.clientRepeat !== undefined) {
        w.u8(m.clientRepeat);
        if (m.pathHashMode !== undefined) w.u8(m.pathHashMode);
      }
      return w.done();
    case 'DISABLED':
      return w.u8(RESP_CODE.DISABLED).done();
    case 'CHANNEL_INFO':
      return w.u8(RESP_CODE.CHANNEL_INFO).u8(m.index).cstring(m.name, NAME_FIELD_SIZE).fixed(m.secret, CHANNEL_SECRET_SIZE).done();
    case 'CHANNEL_DATA_RECV':
      return w.u8(RESP_CODE.CHANNEL_DATA_RECV).i8(snrByte(m.snr)).u8(0).u8(0).u8(m.channelIndex).u8(m.pathLen).u16(m.dataType)
        .u8(m.payload.length).bytes(m.payload).done();
    case 'DEFAULT_FLOOD_SCOPE':
      w.u8(RESP_CODE.DEFAULT_FLOOD_SCOPE);
      if (m.scope) w.cstring(m.scope.name, SCOPE_NAME_FIELD_SIZE).fixed(m.scope.key, TRANSPORT_KEY_SIZE);
      return w.done();
    case 'ADVERT':
      return w.u8(PUSH_CODE.ADVERT).fixed(m.publicKey, PUB_KEY_SIZE).done();
    case 'PATH_UPDATED':
      return w.u8(PUSH_CODE.PATH_UPDATED).fixed(m.publicKey, PUB_KEY_SIZE).done();
    case 'SEND_CONFIRMED':
      return w.u8(PUSH_CODE.SEND_CONFIRMED).u32(m.ackCode).u32(m.roundTripMs).done();
    case 'MSG_WAITING':
      return w.u8(PUSH_CODE.MSG_WAITING).done();
    case 'NEW_ADVERT':
      return writeContact(w.u8(PUSH_CODE.NEW_ADVERT), m.contact).done();
    case 'unknown':
      return m.body.slice();
    case 'malformed':
      throw new RangeError(`cannot encode a malformed radio message (code ${m.code}: ${m.reason})`);
  }
}

/** Smallest body of each code, as the firmware writes it. */
const MIN_LENGTH: Partial<Record<number, number>> = {
  [RESP_CODE.CONTACTS_START]: 5,
  [RESP_CODE.CONTACT]: 1 + CONTACT_BYTES,
  [RESP_CODE.END_OF_CONTACTS]: 5,
  [RESP_CODE.SELF_INFO]: 58,
  [RESP_CODE.SENT]: 10,
  [RESP_CODE.CONTACT_MSG_RECV]: 13,
  [RESP_CODE.CONTACT_MSG_RECV_V3]: 16,
  [RESP_CODE.CHANNEL_MSG_RECV]: 8,
  [RESP_CODE.CHANNEL_MSG_RECV_V3]: 11,
  [RESP_CODE.CURR_TIME]: 5,
  [RESP_CODE.DEVICE_INFO]: 2,
  [RESP_CODE.CHANNEL_INFO]: 2 + NAME_FIELD_SIZE + CHANNEL_SECRET_SIZE,
  [RESP_CODE.CHANNEL_DATA_RECV]: 9,
  [PUSH_CODE.ADVERT]: 1 + PUB_KEY_SIZE,
  [PUSH_CODE.PATH_UPDATED]: 1 + PUB_KEY_SIZE,
  [PUSH_CODE.SEND_CONFIRMED]: 9,
  [PUSH_CODE.NEW_ADVERT]: 1 + CONTACT_BYTES,
};

/** Decodes a radio frame body. Never throws. */
export function decodeRadioMessage(body: Uint8Array): RadioMessage {
  if (body.length === 0) return { type: 'malformed', code: -1, reason: 'empty frame' };
  const code = body[0];
  const name = RESP_NAMES.get(code) ?? PUSH_NAMES.get(code);
  if (name === undefined) return { type: 'unknown', code, body: body.slice() };
  const min = MIN_LENGTH[code] ?? 1;
  if (body.length < min) return { type: 'malformed', code, reason: `${name} needs ${min} bytes, got ${body.length}` };
  const r = new Reader(body);
  switch (name) {
    case 'OK':
      return body.length >= 5 ? { type: 'OK', value: r.u32() } : { type: 'OK' };
    case 'ERR':
      return body.length >= 2 ? { type: 'ERR', code: r.u8() } : { type: 'ERR' };
    case 'CONTACTS_START':
      return { type: 'CONTACTS_START', count: r.u32() };
    case 'CONTACT':
      return { type: 'CONTACT', contact: readContact(r) };
    case 'END_OF_CONTACTS':
      return { type: 'END_OF_CONTACTS', mostRecentLastmod: r.u32() };
    case 'SELF_INFO':
      return {
        type: 'SELF_INFO', advType: r.u8(), txPower: r.u8(), maxTxPower: r.u8(), publicKey: r.bytesOf(PUB_KEY_SIZE), latitude: r.i32(),
        longitude: r.i32(), multiAcks: r.u8(), advertLocPolicy: r.u8(), telemetryModes: r.u8(), manualAddContacts: r.u8(),
        radioFreq: r.u32(), radioBw: r.u32(), radioSf: r.u8(), radioCr: r.u8(), name: fromUtf8(r.rest()),
      };
    case 'SENT':
      return { type: 'SENT', flood: r.u8() !== 0, expectedAck: r.u32(), suggestedTimeoutMs: r.u32() };
    case 'CONTACT_MSG_RECV':
      return { type: 'CONTACT_MSG_RECV', ...readContactMessage(r) };
    case 'CONTACT_MSG_RECV_V3': {
      const snr = r.i8() / 4;
      r.bytesOf(2); // reserved
      return { type: 'CONTACT_MSG_RECV_V3', snr, ...readContactMessage(r) };
    }
    case 'CHANNEL_MSG_RECV':
      return { type: 'CHANNEL_MSG_RECV', ...readChannelMessage(r) };
    case 'CHANNEL_MSG_RECV_V3': {
      const snr = r.i8() / 4;
      r.bytesOf(2);
      return { type: 'CHANNEL_MSG_RECV_V3', snr, ...readChannelMessage(r) };
    }
    case 'CURR_TIME':
      return { type: 'CURR_TIME', time: r.u32() };
    case 'NO_MORE_MESSAGES':
      return { type: 'NO_MORE_MESSAGES' };
    case 'DEVICE_INFO':
      return decodeDeviceInfo(r, body.length);
    case 'DISABLED':
      return { type: 'DISABLED' };
    case 'CHANNEL_INFO':
      return { type: 'CHANNEL_INFO', index: r.u8(), name: r.cstring(NAME_FIELD_SIZE), secret: r.bytesOf(CHANNEL_SECRET_SIZE) };
    case 'CHANNEL_DATA_RECV': {
      const snr = r.i8() / 4;
      r.bytesOf(2);
      const m = { type: 'CHANNEL_DATA_RECV' as const, snr, channelIndex: r.u8(), pathLen: r.u8(), dataType: r.u16(), payload: new Uint8Array(0) as Uint8Array };
      const length = r.u8();
      if (r.remaining < length) return { type: 'malformed', code, reason: `CHANNEL_DATA_RECV announces ${length} bytes of data, has ${r.remaining}` };
      m.payload = r.bytesOf(length);
      return m;
    }
    case 'DEFAULT_FLOOD_SCOPE':
      // The firmware writes 1 byte (no default) or 48 (name field and key), nothing between.
      if (body.length === 1) return { type: 'DEFAULT_FLOOD_SCOPE', scope: null };
      if (body.length < DEFAULT_SCOPE_FRAME_BYTES) return { type: 'malformed', code, reason: `DEFAULT_FLOOD_SCOPE needs 1 or ${DEFAULT_SCOPE_FRAME_BYTES} bytes, got ${body.length}` };
      return { type: 'DEFAULT_FLOOD_SCOPE', scope: { name: r.cstring(SCOPE_NAME_FIELD_SIZE), key: r.bytesOf(TRANSPORT_KEY_SIZE) } };
    case 'ADVERT':
      return { type: 'ADVERT', publicKey: r.bytesOf(PUB_KEY_SIZE) };
    case 'PATH_UPDATED':
      return { type: 'PATH_UPDATED', publicKey: r.bytesOf(PUB_KEY_SIZE) };
    case 'SEND_CONFIRMED':
      return { type: 'SEND_CONFIRMED', ackCode: r.u32(), roundTripMs: r.u32() };
    case 'MSG_WAITING':
      return { type: 'MSG_WAITING' };
    case 'NEW_ADVERT':
      return { type: 'NEW_ADVERT', contact: readContact(r) };
  }
}

/** Version 3 and later: fixed fields of 12, 40 and 20 bytes (MyMesh.cpp CMD_DEVICE_QUERY;
 *  meshcore.js reads everything after the build date as the model, docs 6.9). A frame of a
 *  version 3 radio cut short of the version field keeps what it has. */
function decodeDeviceInfo(r: Reader, length: number): RadioMessage {
  const firmwareVersion = r.u8();
  if (firmwareVersion < 3 || length < 80) return { type: 'DEVICE_INFO', firmwareVersion };
  const m: RadioMessage = {
    type: 'DEVICE_INFO', firmwareVersion, maxContacts: r.u8() * 2, maxChannels: r.u8(), blePin: r.u32(), buildDate: r.cstring(12),
    model: r.cstring(40), version: r.cstring(20),
  };
  if (length >= 81) m.clientRepeat = r.u8();
  if (length >= 82) m.pathHashMode = r.u8();
  return m;
}

/** True for the codes the radio sends unasked (PUSH_CODE_*, all 0x80 and above). */
export const isPush = (m: RadioMessage): boolean =>
  m.type === 'unknown' || m.type === 'malformed' ? m.code >= 0x80 : Object.hasOwn(PUSH_CODE, m.type);
