import { child, escapeXml, readXml, type XmlElement } from './xml.ts';

// Cursor-on-Target events (docs/protocols/tak.md 2): a position (an "atom", type a-...) and a
// GeoChat message (type b-t-f), written as TAK clients write them, and the events a TAK server
// or client sends, read into what the bridge uses. Pure: times come in as epoch milliseconds.

/** docs/protocols/tak.md 2.1-2.6: the values this code writes and reads, by their CoT names. */
export const COT = {
  version: '2.0',
  /** The "unknown" value of point hae, ce and le (2.2). */
  unknown: 9999999.0,
  how: { gps: 'm-g', estimated: 'h-e', gigo: 'h-g-i-g-o' },
  type: { friendlyGroundCombat: 'a-f-G-U-C', chat: 'b-t-f', ping: 't-x-c-t', pong: 't-x-c-t-r' },
  /** The chat room every GeoChat user sees (2.5). */
  allChatRooms: 'All Chat Rooms',
  chatParent: 'RootContactGroup',
  linkRelationParent: 'p-p',
} as const;

/** MIL-STD-2525 as CoT writes it (2.3): a-<affiliation>-<dimension>[-<function>...]. */
export const ATOM_TYPE = /^a-[fhunpsjkaox.]-[A-Z.](-[A-Za-z0-9.]{1,8}){0,8}$/;
/** TAK team colours (2.4, __group name). */
export const TEAMS = ['White', 'Yellow', 'Orange', 'Magenta', 'Red', 'Maroon', 'Purple', 'Dark Blue', 'Blue', 'Cyan', 'Teal', 'Green', 'Dark Green', 'Brown'] as const;
/** TAK team roles (2.4, __group role). */
export const ROLES = ['Team Member', 'Team Lead', 'HQ', 'Sniper', 'Medic', 'Forward Observer', 'RTO', 'K9'] as const;

export interface PositionEvent {
  uid: string;
  type: string;
  how: string;
  /** Epoch ms: time and start are the fix's time, stale is when the map should grey it. */
  timeMs: number;
  staleMs: number;
  lat: number;
  lon: number;
  /** Metres above the WGS84 ellipsoid; absent: unknown. */
  hae?: number;
  /** Circular and linear error in metres (90 %); absent: unknown. */
  ce?: number;
  le?: number;
  callsign: string;
  group?: { name: string; role: string };
  /** Degrees from true north and metres per second. */
  track?: { course: number; speed: number };
  remarks?: string;
}

export interface ChatEvent {
  /** The sender's own uid (its marker) and callsign. */
  senderUid: string;
  senderCallsign: string;
  /** The room: All Chat Rooms, or a user's uid (a direct message) and the name shown. */
  roomId: string;
  roomName: string;
  messageId: string;
  timeMs: number;
  staleMs: number;
  text: string;
  /** Where the sender is, when known (GeoChat events carry a point; 0,0 otherwise is common). */
  point?: { lat: number; lon: number };
}

const iso = (ms: number) => new Date(ms).toISOString();
const num = (v: number, digits: number) => String(Number(v.toFixed(digits)));
const attrs = (a: Record<string, string | number | undefined>) =>
  Object.entries(a).filter(([, v]) => v !== undefined).map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`).join('');

function point(p: { lat: number; lon: number; hae?: number; ce?: number; le?: number }): string {
  return `<point${attrs({ lat: num(p.lat, 7), lon: num(p.lon, 7), hae: p.hae === undefined ? num(COT.unknown, 1) : num(p.hae, 1), ce: p.ce === undefined ? num(COT.unknown, 1) : num(p.ce, 1), le: p.le === undefined ? num(COT.unknown, 1) : num(p.le, 1) })}/>`;
}

function event(a: { uid: string; type: string; how: string; timeMs: number; staleMs: number }, inner: string): string {
  const t = iso(a.timeMs);
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><event${attrs({ version: COT.version, uid: a.uid, type: a.type, how: a.how, time: t, start: t, stale: iso(a.staleMs) })}>${inner}</event>`;
}

/** A position ("PLI") event for one node. */
export function encodePosition(p: PositionEvent): string {
  const detail = [
    `<contact${attrs({ callsign: p.callsign })}/>`,
    p.group ? `<__group${attrs({ name: p.group.name, role: p.group.role })}/>` : '',
    p.track ? `<track${attrs({ course: num(p.track.course, 1), speed: num(p.track.speed, 2) })}/>` : '',
    p.remarks ? `<remarks>${escapeXml(p.remarks)}</remarks>` : '',
  ].join('');
  return event(p, `${point(p)}<detail>${detail}</detail>`);
}

/** The uid TAK clients give a GeoChat event (2.5): GeoChat.<sender uid>.<room id>.<message id>. */
export function chatUid(c: Pick<ChatEvent, 'senderUid' | 'roomId' | 'messageId'>): string {
  return `GeoChat.${c.senderUid}.${c.roomId}.${c.messageId}`;
}

/** A GeoChat message to All Chat Rooms or, by uid, to one user. */
export function encodeChat(c: ChatEvent): string {
  const direct = c.roomId !== COT.allChatRooms;
  const detail = [
    `<__chat${attrs({ parent: COT.chatParent, groupOwner: 'false', messageId: c.messageId, chatroom: c.roomName, id: c.roomId, senderCallsign: c.senderCallsign })}>`,
    `<chatgrp${attrs({ uid0: c.senderUid, uid1: c.roomId, id: c.roomId })}/></__chat>`,
    `<link${attrs({ uid: c.senderUid, type: COT.type.friendlyGroundCombat, relation: COT.linkRelationParent })}/>`,
    `<remarks${attrs({ source: `BAO.F.ATAK.${c.senderUid}`, to: c.roomId, time: iso(c.timeMs) })}>${escapeXml(c.text)}</remarks>`,
    // A TAK server delivers an event with a marti destination only to that user (2.6).
    direct ? `<marti><dest${attrs({ uid: c.roomId })}/></marti>` : '',
  ].join('');
  return event({ uid: chatUid(c), type: COT.type.chat, how: COT.how.gigo, timeMs: c.timeMs, staleMs: c.staleMs }, `${point({ lat: c.point?.lat ?? 0, lon: c.point?.lon ?? 0 })}<detail>${detail}</detail>`);
}

/** What an event heard from TAK is, for the bridge. */
export type CotRead =
  | { type: 'position'; uid: string; cotType: string; callsign: string | null; lat: number; lon: number; hae: number | null; timeMs: number; staleMs: number }
  | { type: 'chat'; uid: string; senderUid: string; senderCallsign: string; roomId: string; roomName: string; messageId: string; text: string; timeMs: number }
  /** A well-formed event the bridge has no use for (a ping, a drawing, a mission update). */
  | { type: 'other'; uid: string; cotType: string }
  | { type: 'invalid'; error: string };

export function readEvent(xml: string): CotRead {
  const doc = readXml(xml);
  if (!doc.ok) return { type: 'invalid', error: doc.error };
  const e = doc.root;
  if (e.name !== 'event') return { type: 'invalid', error: `the root element is <${e.name}>, not <event>` };
  const { uid, type } = e.attrs;
  const timeMs = Date.parse(e.attrs.time ?? '');
  const staleMs = Date.parse(e.attrs.stale ?? '');
  if (!uid || !type) return { type: 'invalid', error: 'an event needs uid and type' };
  if (!Number.isFinite(timeMs) || !Number.isFinite(staleMs)) return { type: 'invalid', error: 'an event needs time and stale as ISO times' };
  const detail = child(e, 'detail');
  if (type === COT.type.chat) return readChat(uid, timeMs, detail);
  if (type.startsWith('a-')) {
    const p = child(e, 'point');
    const lat = Number(p?.attrs.lat);
    const lon = Number(p?.attrs.lon);
    if (!p || !Number.isFinite(lat) || !Number.isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180) return { type: 'invalid', error: 'a position event needs a point with lat and lon' };
    const hae = Number(p.attrs.hae);
    const callsign = detail && child(detail, 'contact')?.attrs.callsign;
    return { type: 'position', uid, cotType: type, callsign: callsign || null, lat, lon, hae: Number.isFinite(hae) && hae !== COT.unknown ? hae : null, timeMs, staleMs };
  }
  return { type: 'other', uid, cotType: type };
}

function readChat(uid: string, timeMs: number, detail: XmlElement | undefined): CotRead {
  const chat = detail && child(detail, '__chat');
  const remarks = detail && child(detail, 'remarks');
  if (!chat || !remarks) return { type: 'invalid', error: 'a GeoChat event needs __chat and remarks' };
  const grp = child(chat, 'chatgrp');
  const link = detail && child(detail, 'link');
  // The sender: chatgrp uid0, else the parent link (2.5); the uid's second part as a last resort.
  const senderUid = grp?.attrs.uid0 || link?.attrs.uid || uid.split('.')[1] || '';
  const roomId = chat.attrs.id || chat.attrs.chatroom || '';
  if (!senderUid || !roomId) return { type: 'invalid', error: 'a GeoChat event needs its sender and room' };
  return {
    type: 'chat', uid, senderUid, senderCallsign: chat.attrs.senderCallsign || senderUid, roomId, roomName: chat.attrs.chatroom || roomId,
    messageId: chat.attrs.messageId || uid, text: remarks.text, timeMs,
  };
}
