import type { NodeReport } from '../bearer.ts';
import {
  decodeMessage, decodePosition, decodeTelemetry, defineMessage, field, formatNodeId, isBroadcast, PORT_NUM, PRIORITY, type MeshPacket,
} from './codec/messages.ts';
import { positionOf, telemetryOf } from './inbound.ts';

// A 2.8 board's node-database replay (docs/protocols/meshtastic.md 2.9): after
// config_complete_id, and again from time to time, the firmware hands the host each node's
// stored position, device and environment telemetry and status as ordinary MeshPackets. They
// are history, not traffic: the bridge takes them into the node table and never routes them.
// Nothing in 2.8's packet says "replay"; what gives it away is the id the firmware derives
// from (node, record time, record kind) together with the replay's shape. Pure.

/** The `kind` the firmware mixes into a replayed record's id (PhoneAPI makeReplay*Packet): the
 *  payload's own port or Telemetry variant number, so records of one node and time differ. */
export const REPLAY_KIND = {
  position: PORT_NUM.POSITION_APP, // 3
  device_metrics: 2, // telemetry.proto Telemetry.device_metrics = 2
  environment_metrics: 3, // telemetry.proto Telemetry.environment_metrics = 3
  status: PORT_NUM.NODE_STATUS_APP, // 36
} as const;

export type ReplayRecord = keyof typeof REPLAY_KIND;

/** Knuth's multiplicative constant the firmware uses (PhoneAPI makeReplayPacketId). */
const GOLDEN = 2654435761;

/** The id a 2.8 board gives a replayed record: h = num; h = h*K + time; h = h*K + kind, all
 *  modulo 2^32; 0 becomes 1 (PhoneAPI makeReplayPacketId). Stable across reconnects. */
export function replayPacketId(num: number, time: number, kind: number): number {
  let h = num >>> 0;
  h = (Math.imul(h, GOLDEN) + (time >>> 0)) >>> 0;
  h = (Math.imul(h, GOLDEN) + (kind >>> 0)) >>> 0;
  return h === 0 ? 1 : h;
}

/** An explicit replay mark a later firmware may add (firmware issue #11766 asks for one; no
 *  field exists in the protobufs checked, docs/protocols/meshtastic.md 2.9). Assumed: a bool
 *  in MeshPacket, the next free number after xeddsa_signed 22. Read from the codec's unknown
 *  fields, so nothing else changes when it lands; if it lands under another number, this is
 *  the one line to change. */
export const EXPLICIT_REPLAY_FIELD = 23;

/** Which stored record a packet replays, or null when it is live traffic. */
export function replayedRecord(p: MeshPacket): ReplayRecord | null {
  const record = recordOf(p);
  if (record === null) return null;
  // The replay's shape (PhoneAPI makeReplay*Packet): broadcast, channel 0, priority
  // BACKGROUND, no RSSI (never heard just now), no signature check passed.
  const shaped = p.to !== undefined && isBroadcast(p.to) && (p.channel ?? 0) === 0 && p.priority === PRIORITY.BACKGROUND
    && (p.rx_rssi === undefined || p.rx_rssi === 0) && p.xeddsa_signed !== true && p.via_mqtt !== true;
  if (!shaped) return null;
  if (explicitlyMarked(p)) return record;
  return p.id !== undefined && p.id === replayPacketId(p.from ?? 0, p.rx_time ?? 0, REPLAY_KIND[record]) ? record : null;
}

function recordOf(p: MeshPacket): ReplayRecord | null {
  switch (p.decoded?.portnum) {
    case PORT_NUM.POSITION_APP:
      return 'position';
    case PORT_NUM.NODE_STATUS_APP:
      return 'status';
    case PORT_NUM.TELEMETRY_APP: {
      const t = decodeTelemetry(p.decoded.payload ?? new Uint8Array(0));
      if (!t.ok) return null;
      if (t.value.device_metrics) return 'device_metrics';
      if (t.value.environment_metrics) return 'environment_metrics';
      return null;
    }
    default:
      return null;
  }
}

const REPLAY_MARK = defineMessage('ReplayMark', { replayed: field.bool(EXPLICIT_REPLAY_FIELD) });

function explicitlyMarked(p: MeshPacket): boolean {
  if (!p.$unknown) return false;
  const mark = decodeMessage(REPLAY_MARK, p.$unknown);
  return mark.ok && mark.value.replayed === true;
}

/** What a replayed record tells the node table: the position or telemetry with its own time,
 *  and nothing about when the node was last heard (the record's time is not a hearing). */
export function replayReport(p: MeshPacket, record: ReplayRecord): NodeReport | null {
  const num = p.from ?? 0;
  if (!num) return null;
  const base: NodeReport = { id: formatNodeId(num), num };
  const payload = p.decoded?.payload ?? new Uint8Array(0);
  if (record === 'position') {
    const decoded = decodePosition(payload);
    const position = decoded.ok ? positionOf(decoded.value) : null;
    return position ? { ...base, position } : null;
  }
  if (record === 'device_metrics') {
    const decoded = decodeTelemetry(payload);
    if (!decoded.ok || !decoded.value.device_metrics) return null;
    return { ...base, device_metrics: telemetryOf(decoded.value) };
  }
  return null; // environment metrics and status: not kept in the node table
}
