import { createHash } from 'node:crypto';
import type { FrameOrigin, OutboundFrame } from '../bearer.ts';
import { fixOf } from '../shared/codec/position-json.ts';
import { COT, encodeChat, encodePosition, type PositionEvent } from './cot.ts';
import type { TakSettings } from './settings.ts';

// What an outbound frame becomes on a TAK interface (docs/tak.md, "What appears on the map"):
// a position of a node becomes its marker's event, a text a GeoChat message. Pure.

/** Addresses that mean "everyone": the chat room of the interface's settings. */
const BROADCAST = new Set(['^all', 'broadcast', 'all', '*']);

export interface Sender {
  uid: string;
  callsign: string;
  /** The node id or address the sender has on its own bearer (for per-node overrides). */
  id: string;
}

/**
 * The marker a message's sender is on the map. One uid per node, stable: from the node's public
 * key when the node database knows it (a Meshtastic node renumbered by a new firmware keeps its
 * key, so it stays one marker), else from its network and id. A message the API sent is the
 * bridge's own. Dots separate the parts of a GeoChat uid, so none is in ours but the prefix's.
 */
export function senderOf(origin: FrameOrigin | undefined, s: TakSettings): Sender {
  if (!origin || origin.interfaceId === null) return { uid: `${s.uid_prefix}.bridge`, callsign: s.callsign, id: 'local' };
  const node = origin.node;
  const safe = (v: string) => v.replace(/[^A-Za-z0-9!_+:@-]/g, '_');
  const uid = node?.public_key
    ? `${s.uid_prefix}.key-${createHash('sha256').update(node.public_key).digest('hex').slice(0, 20)}`
    : `${s.uid_prefix}.${safe(node?.network ?? 'node')}-${safe(origin.from)}`;
  return { uid, callsign: node?.long_name || node?.short_name || origin.from, id: origin.from };
}

export interface PositionOut {
  uid: string;
  fixMs: number;
  xml: string;
}

/** A position frame as its node's marker event; null when it carries no fix. `nowMs`: used for
 *  a fix without a time of its own (the message's time, not the send's, when known). */
export function positionEvent(frame: OutboundFrame, s: TakSettings, nowMs: number): PositionOut | null {
  const fix = fixOf(frame.payload);
  if (!fix) return null;
  const sender = senderOf(frame.origin, s);
  const stored = frame.origin ? Date.parse(frame.origin.createdAt) : NaN;
  const fixTime = fix.time ? Date.parse(fix.time) : NaN;
  // The fix's own time; else when the bridge heard it. Never the time of sending: a fix held
  // while the TAK server was down arrives as old as it is.
  const fixMs = Number.isFinite(fixTime) ? fixTime : Number.isFinite(stored) ? stored : nowMs;
  const type = s.node_types[sender.id] ?? (frame.origin?.node?.long_name ? s.node_types[frame.origin.node.long_name] : undefined) ?? s.cot_type;
  const event: PositionEvent = {
    uid: sender.uid, type, how: COT.how.gps, timeMs: fixMs, staleMs: fixMs + s.stale_s * 1000,
    lat: fix.latitude, lon: fix.longitude, callsign: sender.callsign, group: { name: s.team, role: s.role },
    ...(fix.altitude_m !== undefined ? { hae: fix.altitude_m } : {}),
    ...(fix.accuracy_m !== undefined ? { ce: fix.accuracy_m } : {}),
    ...(fix.course_deg !== undefined && fix.speed_mps !== undefined ? { track: { course: fix.course_deg, speed: fix.speed_mps } } : {}),
  };
  const remarks = remarksOf(frame.origin, sender, s);
  if (remarks) event.remarks = remarks;
  return { uid: sender.uid, fixMs, xml: encodePosition(event) };
}

function remarksOf(origin: FrameOrigin | undefined, sender: Sender, s: TakSettings): string {
  const parts: string[] = [];
  for (const part of s.remarks) {
    if (part === 'battery' && origin?.node?.device_metrics?.battery_level_pct !== undefined) parts.push(`battery ${origin.node.device_metrics.battery_level_pct}%`);
    if (part === 'last_heard' && origin?.node?.last_heard_at) parts.push(`last heard ${origin.node.last_heard_at}`);
    if (part === 'via' && origin?.interfaceName) parts.push(`via ${origin.interfaceName}`);
    if (part === 'node_id') parts.push(`node ${sender.id}`);
  }
  return parts.join('; ');
}

/** A text frame as a GeoChat event: to the interface's chat room for a broadcast, else to the
 *  TAK user whose uid the destination is. */
export function chatEvent(frame: OutboundFrame, s: TakSettings, nowMs: number): { uid: string; xml: string } {
  const sender = senderOf(frame.origin, s);
  const room = BROADCAST.has(frame.to.toLowerCase()) || frame.to === s.chat_room ? s.chat_room : frame.to;
  const messageId = frame.deliveryId;
  const xml = encodeChat({
    senderUid: sender.uid, senderCallsign: sender.callsign, roomId: room, roomName: room, messageId,
    timeMs: nowMs, staleMs: nowMs + 86_400_000, text: frame.text ?? new TextDecoder().decode(frame.payload),
  });
  return { uid: `GeoChat.${sender.uid}.${room}.${messageId}`, xml };
}
