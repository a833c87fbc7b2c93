import type { Command } from '../../../../src/bearers/meshcore/codec/commands.ts';
import type { RadioMessage } from '../../../../src/bearers/meshcore/codec/responses.ts';

// Frame bodies written out byte by byte from meshcore-dev/MeshCore docs/companion_protocol.md
// ("Commands", "Parsing Responses", "Message Handling") and, where the document is silent or
// differs, from the firmware's writers in examples/companion_radio/MyMesh.cpp (noted per
// fixture). Not produced by our encoder. docs/protocols/meshcore.md 6.3-6.9.

export const hex = (s: string): Uint8Array => Uint8Array.from(s.trim().split(/\s+/).filter(Boolean).map((b) => parseInt(b, 16)));
export const toHex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0').toUpperCase()).join(' ');
const repeat = (byte: string, n: number) => Array(n).fill(byte).join(' ');
/** `s` as ASCII hex, NUL-padded to `n` bytes. */
const field = (s: string, n: number) => [...Array.from(s, (c) => c.charCodeAt(0).toString(16).padStart(2, '0')), ...Array(n - s.length).fill('00')].join(' ');
const ascii = (s: string) => Array.from(s, (c) => c.charCodeAt(0).toString(16).padStart(2, '0')).join(' ');

/** 00 01 02 ... 1F: a made-up public key. */
export const KEY_HEX = Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(2, '0')).join(' ');
export const KEY = hex(KEY_HEX);
const PREFIX = hex('A1 B2 C3 D4 E5 F6');
/** 1234567890 = 0x499602D2, the document's example timestamp. */
const TS = 'D2 02 96 49';
const T = 1234567890;

export interface Fixture<T> {
  name: string;
  wire: string;
  value: T;
}

export const commandFixtures: Fixture<Command>[] = [
  // "1. App Start" example: 7 reserved bytes then "mccli".
  { name: 'CMD_APP_START (document example)', wire: '01 00 00 00 00 00 00 00 6D 63 63 6C 69', value: { type: 'APP_START', reserved: new Uint8Array(7), appName: 'mccli' } },
  // meshcore.js puts its app version (1) in the first reserved byte.
  { name: 'CMD_APP_START as meshcore.js sends it', wire: `01 01 00 00 00 00 00 00 ${ascii('test')}`, value: { type: 'APP_START', reserved: hex('01 00 00 00 00 00 00'), appName: 'test' } },
  { name: 'CMD_DEVICE_QUERY version 3 (document example)', wire: '16 03', value: { type: 'DEVICE_QUERY', appTargetVersion: 3 } },
  { name: 'CMD_GET_CHANNEL 1 (document example)', wire: '1F 01', value: { type: 'GET_CHANNEL', index: 1 } },
  {
    name: 'CMD_SEND_CHANNEL_TXT_MSG "Hello" on channel 1 (document example)', wire: `03 00 01 ${TS} 48 65 6C 6C 6F`,
    value: { type: 'SEND_CHANNEL_TXT_MSG', txtType: 0, channelIndex: 1, timestamp: T, text: 'Hello' },
  },
  { name: 'CMD_SYNC_NEXT_MESSAGE (document example)', wire: '0A', value: { type: 'SYNC_NEXT_MESSAGE' } },
  // MyMesh.cpp CMD_SET_DEVICE_TIME: code + u32 seconds.
  { name: 'CMD_SET_DEVICE_TIME', wire: `06 ${TS}`, value: { type: 'SET_DEVICE_TIME', time: T } },
  { name: 'CMD_GET_CONTACTS', wire: '04', value: { type: 'GET_CONTACTS' } },
  { name: 'CMD_GET_CONTACTS since', wire: `04 ${TS}`, value: { type: 'GET_CONTACTS', since: T } },
  // MyMesh.cpp CMD_SEND_TXT_MSG: type, attempt, u32 timestamp, 6-byte key prefix, text.
  {
    name: 'CMD_SEND_TXT_MSG "hi", attempt 2', wire: `02 00 02 ${TS} A1 B2 C3 D4 E5 F6 68 69`,
    value: { type: 'SEND_TXT_MSG', txtType: 0, attempt: 2, timestamp: T, pubKeyPrefix: PREFIX, text: 'hi' },
  },
  { name: 'CMD_RESET_PATH', wire: `0D ${KEY_HEX}`, value: { type: 'RESET_PATH', publicKey: KEY } },
  { name: 'CMD_SEND_SELF_ADVERT flood', wire: '07 01', value: { type: 'SEND_SELF_ADVERT', flood: true } },
  { name: 'CMD_GET_DEVICE_TIME', wire: '05', value: { type: 'GET_DEVICE_TIME' } },
  // "6. Send Channel Data Datagram" example: flood (FF), DATA_TYPE_DEV (FF FF), 3 bytes.
  {
    name: 'CMD_SEND_CHANNEL_DATA flood (document example)', wire: '3E 01 FF FF FF A1 B2 C3',
    value: { type: 'SEND_CHANNEL_DATA', channelIndex: 1, pathLen: 0xff, path: new Uint8Array(0), dataType: 0xffff, payload: hex('A1 B2 C3') },
  },
  {
    // Path length 02: two hashes of one byte follow before the data type.
    name: 'CMD_SEND_CHANNEL_DATA along a path', wire: '3E 00 02 11 22 01 01 68 69',
    value: { type: 'SEND_CHANNEL_DATA', channelIndex: 0, pathLen: 2, path: hex('11 22'), dataType: 0x0101, payload: hex('68 69') },
  },
  { name: 'a command this codec does not name', wire: '63 01 02', value: { type: 'unknown', code: 0x63, body: hex('63 01 02') } },
];

const contactWire = `${KEY_HEX} 01 00 FF ${repeat('00', 64)} ${field('alice', 32)} ${TS} 40 42 0F 00 C0 BD F0 FF ${TS}`;
const contact = {
  publicKey: KEY, type: 1, flags: 0, outPathLen: 0xff, outPath: new Uint8Array(64), name: 'alice', lastAdvert: T,
  latitude: 1_000_000, longitude: -1_000_000, lastmod: T,
};

export const radioFixtures: Fixture<RadioMessage>[] = [
  { name: 'RESP_CODE_OK (firmware: code only)', wire: '00', value: { type: 'OK' } },
  { name: 'RESP_CODE_OK with the optional value (document)', wire: '00 2A 00 00 00', value: { type: 'OK', value: 42 } },
  { name: 'RESP_CODE_ERR not found', wire: '01 02', value: { type: 'ERR', code: 2 } },
  { name: 'RESP_CODE_CONTACTS_START 3', wire: '02 03 00 00 00', value: { type: 'CONTACTS_START', count: 3 } },
  // writeContactRespFrame: key, type, flags, out_path_len, 64-byte path, 32-byte name, four u32.
  { name: 'RESP_CODE_CONTACT (firmware layout)', wire: `03 ${contactWire}`, value: { type: 'CONTACT', contact } },
  { name: 'RESP_CODE_END_OF_CONTACTS', wire: `04 ${TS}`, value: { type: 'END_OF_CONTACTS', mostRecentLastmod: T } },
  {
    // "PACKET_SELF_INFO": 869.525 MHz x 1000 = 869525 = 0x000D4495, 250 kHz x 1000 = 0x0003D090.
    name: 'RESP_CODE_SELF_INFO', wire: `05 01 16 16 ${KEY_HEX} 00 00 00 00 00 00 00 00 00 00 00 00 95 44 0D 00 90 D0 03 00 0B 05 ${ascii('node')}`,
    value: {
      type: 'SELF_INFO', advType: 1, txPower: 22, maxTxPower: 22, publicKey: KEY, latitude: 0, longitude: 0, multiAcks: 0, advertLocPolicy: 0,
      telemetryModes: 0, manualAddContacts: 0, radioFreq: 869525, radioBw: 250000, radioSf: 11, radioCr: 5, name: 'node',
    },
  },
  // "PACKET_MSG_SENT": route flag 1 = flood, tag 0x12345678, 3000 ms.
  { name: 'RESP_CODE_SENT flood', wire: '06 01 78 56 34 12 B8 0B 00 00', value: { type: 'SENT', flood: true, expectedAck: 0x12345678, suggestedTimeoutMs: 3000 } },
  {
    name: 'RESP_CODE_CONTACT_MSG_RECV direct', wire: `07 A1 B2 C3 D4 E5 F6 FF 00 ${TS} 68 69`,
    value: { type: 'CONTACT_MSG_RECV', pubKeyPrefix: PREFIX, pathLen: 0xff, txtType: 0, timestamp: T, text: 'hi' },
  },
  {
    name: 'RESP_CODE_CONTACT_MSG_RECV signed (4 signature bytes)', wire: `07 A1 B2 C3 D4 E5 F6 00 02 ${TS} 01 02 03 04 68 69`,
    value: { type: 'CONTACT_MSG_RECV', pubKeyPrefix: PREFIX, pathLen: 0, txtType: 2, timestamp: T, signature: hex('01 02 03 04'), text: 'hi' },
  },
  {
    // SNR byte 0x19 = 25 quarter-dB = 6.25 dB.
    name: 'RESP_CODE_CONTACT_MSG_RECV_V3 with SNR', wire: `10 19 00 00 A1 B2 C3 D4 E5 F6 02 00 ${TS} 68 69`,
    value: { type: 'CONTACT_MSG_RECV_V3', snr: 6.25, pubKeyPrefix: PREFIX, pathLen: 2, txtType: 0, timestamp: T, text: 'hi' },
  },
  {
    name: 'RESP_CODE_CHANNEL_MSG_RECV', wire: `08 01 00 00 ${TS} ${ascii('A: hi')}`,
    value: { type: 'CHANNEL_MSG_RECV', channelIndex: 1, pathLen: 0, txtType: 0, timestamp: T, text: 'A: hi' },
  },
  {
    // SNR byte 0xF4 = -12 quarter-dB = -3 dB.
    name: 'RESP_CODE_CHANNEL_MSG_RECV_V3 with negative SNR', wire: `11 F4 00 00 00 03 00 ${TS} 68 69`,
    value: { type: 'CHANNEL_MSG_RECV_V3', snr: -3, channelIndex: 0, pathLen: 3, txtType: 0, timestamp: T, text: 'hi' },
  },
  { name: 'RESP_CODE_CURR_TIME', wire: `09 ${TS}`, value: { type: 'CURR_TIME', time: T } },
  { name: 'RESP_CODE_NO_MORE_MESSAGES', wire: '0A', value: { type: 'NO_MORE_MESSAGES' } },
  {
    // "PACKET_DEVICE_INFO" for firmware version >= 3, with bytes 80 and 81 (v9+, v10+).
    name: 'RESP_CODE_DEVICE_INFO version 13',
    wire: `0D 0D 32 08 00 00 00 00 ${field('19 Feb 2025', 12)} ${field('Heltec V3', 40)} ${field('v1.12.0', 20)} 01 00`,
    value: {
      type: 'DEVICE_INFO', firmwareVersion: 13, maxContacts: 100, maxChannels: 8, blePin: 0, buildDate: '19 Feb 2025', model: 'Heltec V3',
      version: 'v1.12.0', clientRepeat: 1, pathHashMode: 0,
    },
  },
  { name: 'RESP_CODE_DEVICE_INFO version 2 (no more fields)', wire: '0D 02', value: { type: 'DEVICE_INFO', firmwareVersion: 2 } },
  {
    // "PACKET_CHANNEL_INFO" with the public channel's well-known key from "Channel Types".
    name: 'RESP_CODE_CHANNEL_INFO public', wire: `12 00 ${field('Public', 32)} 8B 33 87 E9 C5 CD EA 6A C9 E5 ED BA A1 15 CD 72`,
    value: { type: 'CHANNEL_INFO', index: 0, name: 'Public', secret: hex('8B 33 87 E9 C5 CD EA 6A C9 E5 ED BA A1 15 CD 72') },
  },
  { name: 'RESP_CODE_DISABLED', wire: '0F', value: { type: 'DISABLED' } },
  {
    // "Receive Channel Data Datagram": SNR, 2 reserved, channel, path length (FF = direct),
    // u16 data type, length, data.
    name: 'RESP_CODE_CHANNEL_DATA_RECV', wire: '1B 19 00 00 01 FF FF FF 03 A1 B2 C3',
    value: { type: 'CHANNEL_DATA_RECV', snr: 6.25, channelIndex: 1, pathLen: 0xff, dataType: 0xffff, payload: hex('A1 B2 C3') },
  },
  { name: 'PUSH_CODE_ADVERT', wire: `80 ${KEY_HEX}`, value: { type: 'ADVERT', publicKey: KEY } },
  { name: 'PUSH_CODE_PATH_UPDATED', wire: `81 ${KEY_HEX}`, value: { type: 'PATH_UPDATED', publicKey: KEY } },
  // MyMesh.cpp processAck: 4-byte ack code + u32 round trip (the document says 6 bytes).
  { name: 'PUSH_CODE_SEND_CONFIRMED (firmware layout)', wire: '82 78 56 34 12 E8 03 00 00', value: { type: 'SEND_CONFIRMED', ackCode: 0x12345678, roundTripMs: 1000 } },
  { name: 'PUSH_CODE_MSG_WAITING', wire: '83', value: { type: 'MSG_WAITING' } },
  { name: 'PUSH_CODE_NEW_ADVERT', wire: `8A ${contactWire}`, value: { type: 'NEW_ADVERT', contact } },
  { name: 'a push this codec does not name (LOG_RX_DATA)', wire: '88 10 C4 AA', value: { type: 'unknown', code: 0x88, body: hex('88 10 C4 AA') } },
];
