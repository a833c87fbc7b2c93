import type { OutboundFrame } from '../bearer.ts';
import { jsonObjectOf } from '../shared/codec/position-json.ts';
import {
  BITFIELD, DATA_PAYLOAD_LEN, encodePosition, encodeTelemetry, isBroadcast, nameOf, parseNodeAddress, PORT_NUM, ROUTING_ERROR,
  type MeshPacket,
} from './codec/messages.ts';

// What an outbound frame becomes (docs/meshtastic.md, "Sending"): a MeshPacket with want_ack,
// or the reason it cannot be one. And what an acknowledgement's error means for the delivery.
// Pure.

export type OutboundPacket = { ok: true; packet: MeshPacket; broadcast: boolean } | { ok: false; error: string };

export interface PacketOptions {
  /** Non-zero, fresh for every packet (the firmware drops repeated ids). */
  id: number;
  channel: number;
  hopLimit: number;
}

export function outboundPacket(frame: OutboundFrame, o: PacketOptions): OutboundPacket {
  const to = parseNodeAddress(frame.to);
  if (to === null) {
    return { ok: false, error: `ERR_MESHTASTIC_ADDRESS: ${JSON.stringify(frame.to)} is not a node address (!a1b2c3d4, 0xa1b2c3d4, a node number, ^all or broadcast)` };
  }
  const body = portAndPayload(frame);
  if (body.payload.length > DATA_PAYLOAD_LEN) {
    return { ok: false, error: `ERR_MESHTASTIC_TOO_LARGE: ${body.payload.length} bytes is more than the ${DATA_PAYLOAD_LEN} bytes one Meshtastic packet carries (add a split or truncate transform)` };
  }
  const packet: MeshPacket = {
    to,
    channel: frame.channel ?? o.channel,
    // Everything the bridge sends is an automated sender's: marked so (BITFIELD.IS_AUTOMATION).
    decoded: { portnum: body.port, payload: body.payload, bitfield: BITFIELD.IS_AUTOMATION },
    id: o.id,
    hop_limit: o.hopLimit,
    want_ack: true,
  };
  return { ok: true, packet, broadcast: isBroadcast(to) };
}

/** Text as TEXT_MESSAGE_APP; positions and telemetry stored from a mesh (JSON) go back out
 *  in their own protobufs; anything else as PRIVATE_APP bytes. */
function portAndPayload(frame: OutboundFrame): { port: number; payload: Uint8Array } {
  if (frame.kind === 'text') return { port: PORT_NUM.TEXT_MESSAGE_APP, payload: frame.payload };
  const parsed = jsonObjectOf(frame.payload);
  if (frame.kind === 'position' && parsed && typeof parsed.latitude === 'number' && typeof parsed.longitude === 'number') {
    return {
      port: PORT_NUM.POSITION_APP,
      payload: encodePosition({
        latitude_i: Math.round(parsed.latitude * 1e7), longitude_i: Math.round(parsed.longitude * 1e7),
        ...(typeof parsed.altitude_m === 'number' ? { altitude: Math.round(parsed.altitude_m) } : {}),
        ...(typeof parsed.time === 'string' && Number.isFinite(Date.parse(parsed.time)) ? { time: Math.floor(Date.parse(parsed.time) / 1000) } : {}),
      }),
    };
  }
  if (frame.kind === 'telemetry' && parsed) {
    const n = (k: string) => (typeof parsed[k] === 'number' ? (parsed[k] as number) : undefined);
    const metrics = { battery_level: n('battery_level_pct'), voltage: n('voltage_v'), channel_utilization: n('channel_utilization_pct'), air_util_tx: n('air_util_tx_pct'), uptime_seconds: n('uptime_s') };
    return { port: PORT_NUM.TELEMETRY_APP, payload: encodeTelemetry({ device_metrics: Object.fromEntries(Object.entries(metrics).filter(([, v]) => v !== undefined)) }) };
  }
  return { port: PORT_NUM.PRIVATE_APP, payload: frame.payload };
}

// Errors a later attempt may cure (a route, a busy channel, a node out of reach) against those
// it cannot (the packet itself or the keys are wrong).
const PERMANENT = new Set<number>([
  ROUTING_ERROR.NO_CHANNEL, ROUTING_ERROR.TOO_LARGE, ROUTING_ERROR.BAD_REQUEST, ROUTING_ERROR.NOT_AUTHORIZED,
  ROUTING_ERROR.PKI_FAILED, ROUTING_ERROR.PKI_UNKNOWN_PUBKEY, ROUTING_ERROR.ADMIN_BAD_SESSION_KEY,
  ROUTING_ERROR.ADMIN_PUBLIC_KEY_UNAUTHORIZED, ROUTING_ERROR.PKI_SEND_FAIL_PUBLIC_KEY,
]);

export function routingErrorName(code: number): string {
  return nameOf(ROUTING_ERROR, code);
}

export function isRetryableRoutingError(code: number): boolean {
  return !PERMANENT.has(code);
}
