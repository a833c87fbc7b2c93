import type { InboundFrame, NodeReport } from '../bearer.ts';
import { HARDWARE_MODEL } from './codec/hardware-model.ts';
import {
  BITFIELD, decodePosition, decodeTelemetry, decodeUser, formatNodeId, isBroadcast, isKnownPort, nameOf, portName, DEVICE_ROLE, PORT_NUM,
  type DeviceMetrics, type MeshPacket, type NodeInfo, type Position, type Telemetry, type User,
} from './codec/messages.ts';

// What a received MeshPacket becomes (docs/meshtastic.md, "Receiving"): one InboundFrame for
// the pipeline, node reports for the node database, or a reason it is not stored. Pure.

/** Broadcast as the API writes it. */
export const BROADCAST_ADDRESS = '^all';

export type InboundResult =
  | { type: 'frame'; frame: InboundFrame; nodes: NodeReport[]; unknownPort: boolean }
  /** An acknowledgement or an admin answer: for the driver, never stored. */
  | { type: 'routing'; packet: MeshPacket }
  | { type: 'admin'; packet: MeshPacket }
  | { type: 'skip'; reason: 'encrypted' | 'empty' };

const text = new TextDecoder('utf-8', { fatal: false });
const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

export function inboundPacket(p: MeshPacket): InboundResult {
  if (!p.decoded) return { type: 'skip', reason: p.encrypted ? 'encrypted' : 'empty' };
  const port = p.decoded.portnum ?? 0;
  if (port === PORT_NUM.ROUTING_APP) return { type: 'routing', packet: p };
  if (port === PORT_NUM.ADMIN_APP) return { type: 'admin', packet: p };
  const from = formatNodeId(p.from ?? 0);
  const payload = p.decoded.payload ?? new Uint8Array(0);
  const meta: Record<string, unknown> = { packet_id: p.id ?? 0, portnum: port, port: portName(port) };
  if (p.rx_snr !== undefined) meta.rx_snr_db = p.rx_snr;
  if (p.rx_rssi !== undefined) meta.rx_rssi_dbm = p.rx_rssi;
  if (p.hop_start !== undefined && p.hop_limit !== undefined) meta.hops_taken = Math.max(0, p.hop_start - p.hop_limit);
  meta.via_mqtt = p.via_mqtt === true;
  // A bot's packet (BITFIELD.IS_AUTOMATION): rules can tell it apart and {from} never answers it.
  if (((p.decoded.bitfield ?? 0) & BITFIELD.IS_AUTOMATION) !== 0) meta.is_automation = true;
  const base = {
    from,
    to: p.to === undefined || isBroadcast(p.to) ? BROADCAST_ADDRESS : formatNodeId(p.to),
    channel: p.channel ?? 0,
    meta,
    // Radios repeat packets; id 0 means "no id" and cannot be told apart.
    dedupeKey: p.id ? `meshtastic:${from}:${p.id}` : undefined,
  };
  const heard: NodeReport = { id: from, num: p.from ?? 0, ...(p.rx_snr !== undefined ? { snr_db: p.rx_snr } : {}), ...(meta.hops_taken !== undefined ? { hops_away: meta.hops_taken as number } : {}), via_mqtt: p.via_mqtt === true };
  if (p.rx_time) heard.last_heard_at = new Date(p.rx_time * 1000).toISOString();
  const frame = (kind: InboundFrame['kind'], body: { text: string | null; payload: Uint8Array | null }, extra: Partial<NodeReport> = {}): InboundResult => ({
    type: 'frame',
    frame: { ...base, kind, ...body },
    nodes: [{ ...heard, ...extra }],
    unknownPort: !isKnownPort(port),
  });

  switch (port) {
    case PORT_NUM.TEXT_MESSAGE_APP:
      return frame('text', { text: text.decode(payload), payload });
    case PORT_NUM.POSITION_APP: {
      const decoded = decodePosition(payload);
      const position = decoded.ok ? positionOf(decoded.value) : null;
      if (!position) return frame('data', { text: null, payload });
      Object.assign(meta, position);
      return frame('position', { text: null, payload: json(position) }, { position });
    }
    case PORT_NUM.TELEMETRY_APP: {
      const decoded = decodeTelemetry(payload);
      if (!decoded.ok || !decoded.value.device_metrics) return frame('data', { text: null, payload });
      const metrics = telemetryOf(decoded.value);
      return frame('telemetry', { text: null, payload: json(metrics) }, { device_metrics: metrics });
    }
    case PORT_NUM.NODEINFO_APP: {
      const user = decodeUser(payload);
      return frame('data', { text: null, payload }, user.ok ? userOf(user.value) : {});
    }
    default:
      return frame('data', { text: null, payload });
  }
}

/** Degrees, metres and an ISO time; null when the packet carries no fix. */
/** The board's own time, from a packet it has just heard over the air: rx_time is stamped by
 *  the receiving board with its clock on arrival, and is 0 while the board has no time from
 *  GPS, NTP, a phone or the mesh (firmware Router::handleReceived, getValidTime with
 *  RTCQualityFromNet; docs/protocols/meshtastic.md). Only a packet with radio figures
 *  (rx_rssi) was heard just now: a 2.8 board's replayed node records, the board's own packets
 *  and the host's echoes carry none, and their rx_time is a record's time or our own. A packet
 *  via MQTT is skipped too (it came over the internet, not the air). Null when none of this
 *  holds; else milliseconds since the epoch. Pure. */
export function liveBoardTime(p: MeshPacket): number | null {
  if (!p.rx_time || p.rx_time <= 0) return null;
  if (p.rx_rssi === undefined || p.rx_rssi === 0 || p.via_mqtt === true) return null;
  return p.rx_time * 1000;
}

export function positionOf(p: Position): NonNullable<NodeReport['position']> | null {
  if (p.latitude_i === undefined || p.longitude_i === undefined) return null;
  const out: NonNullable<NodeReport['position']> = { latitude: p.latitude_i / 1e7, longitude: p.longitude_i / 1e7 };
  if (p.altitude !== undefined) out.altitude_m = p.altitude;
  if (p.time) out.time = new Date(p.time * 1000).toISOString();
  return out;
}

/** A Telemetry's device metrics with the telemetry's own time (absent when 0: unknown). */
export function telemetryOf(t: Telemetry): NonNullable<NodeReport['device_metrics']> {
  const metrics = deviceMetricsOf(t.device_metrics ?? {});
  if (t.time) metrics.time = new Date(t.time * 1000).toISOString();
  return metrics;
}

export function deviceMetricsOf(m: DeviceMetrics): NonNullable<NodeReport['device_metrics']> {
  const out: NonNullable<NodeReport['device_metrics']> = {};
  if (m.battery_level !== undefined) out.battery_level_pct = m.battery_level;
  if (m.voltage !== undefined) out.voltage_v = round(m.voltage, 3);
  if (m.channel_utilization !== undefined) out.channel_utilization_pct = round(m.channel_utilization, 2);
  if (m.air_util_tx !== undefined) out.air_util_tx_pct = round(m.air_util_tx, 2);
  if (m.uptime_seconds !== undefined) out.uptime_s = m.uptime_seconds;
  return out;
}

export function userOf(u: User): Partial<NodeReport> {
  const out: Partial<NodeReport> = {};
  if (u.long_name) out.long_name = u.long_name;
  if (u.short_name) out.short_name = u.short_name;
  if (u.hw_model !== undefined) out.hw_model = nameOf(HARDWARE_MODEL, u.hw_model);
  out.role = nameOf(DEVICE_ROLE, u.role ?? 0);
  // mesh.proto User.public_key (8): the node's X25519 key, 32 bytes; the bridge follows a node
  // whose number changes by it (docs/protocols/meshtastic.md 2.10).
  if (u.public_key?.length === 32) out.public_key = Buffer.from(u.public_key).toString('base64');
  return out;
}

/** A NodeInfo from the device's node database as a report. */
export function nodeInfoReport(n: NodeInfo): NodeReport | null {
  if (!n.num) return null;
  const report: NodeReport = { id: formatNodeId(n.num), num: n.num, ...(n.user ? userOf(n.user) : {}) };
  const position = n.position ? positionOf(n.position) : null;
  if (position) report.position = position;
  if (n.device_metrics) report.device_metrics = deviceMetricsOf(n.device_metrics);
  if (n.snr !== undefined) report.snr_db = n.snr;
  if (n.hops_away !== undefined) report.hops_away = n.hops_away;
  if (n.via_mqtt !== undefined) report.via_mqtt = n.via_mqtt;
  if (n.last_heard) report.last_heard_at = new Date(n.last_heard * 1000).toISOString();
  return report;
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
