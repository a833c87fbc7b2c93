import {
  BROADCAST, decodePosition, decodeTelemetry, type DeviceMetrics, encodeTelemetry, type MeshPacket, type NodeInfo, PORT_NUM, type Position,
  PRIORITY, TRANSPORT_MECHANISM, type User, encodePosition,
} from '../codec/messages.ts';
import { REPLAY_KIND, replayPacketId } from '../replay.ts';

// What a simulated board keeps about other nodes (firmware NodeDB and its 2.8 "satellite"
// databases of positions, telemetry, environment and status), and the packets a 2.8 board
// replays from it after config_complete_id (PhoneAPI makeReplay*Packet;
// docs/protocols/meshtastic.md 2.9). Filled from what the board hears; tests may seed history.

export interface NodeRecord {
  user?: User;
  /** Seconds since 1970: when the board last heard the node (NodeInfo.last_heard). */
  lastHeard: number;
  snr?: number;
  hopsAway?: number;
  /** The node's last position, with its own time (Position.time). */
  position?: Position;
  deviceMetrics?: DeviceMetrics;
  /** EnvironmentMetrics, kept encoded. */
  environment?: Uint8Array;
  /** StatusMessage, kept encoded. */
  status?: Uint8Array;
}

export class SimNodeDb {
  readonly #records = new Map<number, NodeRecord>();

  /** A packet the board heard: the node's last-heard time, and the record its port carries. */
  heard(p: MeshPacket): void {
    const num = p.from ?? 0;
    if (!num || !p.decoded) return;
    const r = this.#records.get(num) ?? { lastHeard: 0 };
    this.#records.set(num, r);
    r.lastHeard = p.rx_time ?? r.lastHeard;
    if (p.rx_snr !== undefined) r.snr = p.rx_snr;
    if (p.hop_start !== undefined && p.hop_limit !== undefined) r.hopsAway = Math.max(0, p.hop_start - p.hop_limit);
    const payload = p.decoded.payload ?? new Uint8Array(0);
    if (p.decoded.portnum === PORT_NUM.POSITION_APP) {
      const pos = decodePosition(payload);
      if (pos.ok && pos.value.latitude_i !== undefined) r.position = { ...pos.value, time: pos.value.time || p.rx_time || 0 };
    } else if (p.decoded.portnum === PORT_NUM.TELEMETRY_APP) {
      const t = decodeTelemetry(payload);
      if (t.ok && t.value.device_metrics) r.deviceMetrics = t.value.device_metrics;
      if (t.ok && t.value.environment_metrics) r.environment = t.value.environment_metrics;
    } else if (p.decoded.portnum === PORT_NUM.NODE_STATUS_APP) {
      r.status = payload;
    }
  }

  /** History as if heard before (tests). */
  seed(num: number, record: NodeRecord): void {
    this.#records.set(num, { ...record });
  }

  get(num: number): NodeRecord | undefined {
    return this.#records.get(num);
  }

  /** The other nodes' NodeInfo as a 2.8 board sends them: thin (no position, no metrics), with
   *  last_heard from the database; `onAir` are the nodes the mesh offers (names, numbers). */
  thinNodeInfos(onAir: NodeInfo[], own: number): NodeInfo[] {
    const out = new Map<number, NodeInfo>();
    for (const n of onAir) {
      const r = this.#records.get(n.num ?? 0);
      out.set(n.num ?? 0, { ...n, position: undefined, device_metrics: undefined, ...(r ? { last_heard: r.lastHeard } : {}) });
    }
    for (const [num, r] of this.#records) {
      if (num === own || out.has(num)) continue;
      out.set(num, { num, ...(r.user ? { user: r.user } : {}), last_heard: r.lastHeard, ...(r.snr !== undefined ? { snr: r.snr } : {}), hops_away: r.hopsAway ?? 0 });
    }
    return [...out.values()];
  }

  /** The replay: every position, then device telemetry, environment, status (PhoneAPI's
   *  phases), each shaped like a live broadcast with the derived id; the own node left out. */
  replay(own: number, hopLimit: number): MeshPacket[] {
    const nodes = [...this.#records].filter(([num]) => num !== own);
    const packets: MeshPacket[] = [];
    const shape = (num: number, r: NodeRecord, rxTime: number, kind: number, portnum: number, payload: Uint8Array): MeshPacket => ({
      from: num,
      to: BROADCAST,
      rx_time: rxTime,
      id: replayPacketId(num, rxTime, kind),
      channel: 0,
      rx_snr: r.snr ?? 0,
      // setReplayHopFields: hop_start the configured limit, hop_limit what the hops left.
      hop_start: hopLimit,
      hop_limit: Math.max(0, hopLimit - (r.hopsAway ?? 0)),
      priority: PRIORITY.BACKGROUND,
      transport_mechanism: TRANSPORT_MECHANISM.TRANSPORT_LORA,
      decoded: { portnum, payload },
    });
    for (const [num, r] of nodes) {
      if (r.position) packets.push(shape(num, r, r.position.time ?? 0, REPLAY_KIND.position, PORT_NUM.POSITION_APP, encodePosition(r.position)));
    }
    for (const [num, r] of nodes) {
      if (r.deviceMetrics) {
        packets.push(shape(num, r, r.lastHeard, REPLAY_KIND.device_metrics, PORT_NUM.TELEMETRY_APP, encodeTelemetry({ time: r.lastHeard, device_metrics: r.deviceMetrics })));
      }
    }
    for (const [num, r] of nodes) {
      if (r.environment) {
        packets.push(shape(num, r, r.lastHeard, REPLAY_KIND.environment_metrics, PORT_NUM.TELEMETRY_APP, encodeTelemetry({ time: r.lastHeard, environment_metrics: r.environment })));
      }
    }
    for (const [num, r] of nodes) {
      if (r.status) packets.push(shape(num, r, r.lastHeard, REPLAY_KIND.status, PORT_NUM.NODE_STATUS_APP, r.status));
    }
    return packets;
  }
}
