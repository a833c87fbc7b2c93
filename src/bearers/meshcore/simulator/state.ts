import { cutUtf8, fromUtf8, utf8 } from '../codec/bytes.ts';

// Small facts the simulated companion radio needs besides the codec.

export interface SimChannel {
  name: string;
  /** 16 bytes; all zero with an empty name is an empty slot. */
  secret: Uint8Array;
}

/** The public channel in slot 0, with the well-known key companion_protocol.md gives under
 *  "Channel Types" (MyMesh.cpp PUBLIC_GROUP_PSK, base64 of the same bytes). */
export const PUBLIC_CHANNEL: SimChannel = {
  name: 'Public',
  secret: Uint8Array.from([0x8b, 0x33, 0x87, 0xe9, 0xc5, 0xcd, 0xea, 0x6a, 0xc9, 0xe5, 0xed, 0xba, 0xa1, 0x15, 0xcd, 0x72]),
};

/** `text` cut to at most `maxBytes` of UTF-8 at a character boundary. The firmware cuts at a
 *  byte (MyMesh.cpp "TODO: UTF-8 ??"); we keep the text valid. */
export function cutText(text: string, maxBytes: number): string {
  const b = utf8(text);
  return b.length <= maxBytes ? text : fromUtf8(cutUtf8(b, maxBytes));
}

/** A rough air time of a text packet at SF11 / 250 kHz: the simulator only needs figures of
 *  the right size for the suggested timeout. */
export const estimateAirtimeMs = (textBytes: number): number => Math.round(60 + 4.5 * (textBytes + 30));

/** MyMesh.cpp calcFloodTimeoutMillisFor: SEND_TIMEOUT_BASE_MILLIS + 16 x air time. */
export const floodTimeoutMs = (airtime: number): number => Math.round(500 + 16 * airtime);

/** MyMesh.cpp calcDirectTimeoutMillisFor: base + (6 x air time + 250) per hop, hops + 1. */
export const directTimeoutMs = (airtime: number, pathLen: number): number => Math.round(500 + (airtime * 6 + 250) * ((pathLen & 63) + 1));
