import type { BearerContext, NodeReport } from '../bearer.ts';
import type { Tnc2Packet } from './codec/ax25.ts';
import { decodeInfo } from './codec/info.ts';
import type { AprsPosition } from './codec/position.ts';
import { gateToIs, gateToRf, type HeardList } from './igate.ts';
import type { AckTracker } from './messaging.ts';
import type { AprsSettings } from './settings.ts';

// What the bearer does with a packet heard on RF or read from APRS-IS (docs/aprs.md, "What is
// received"): a message to our callsign is taken once and acknowledged (every copy) once the
// bridge has stored it; an ack or rej settles the message it names; positions, objects and
// items become nodes of network `aprs`; as an iGate, RF packets go to APRS-IS and APRS-IS
// messages to RF by the rules in igate.ts.

export const ZERO_COUNTERS = {
  rf_frames_in: 0, rf_frames_out: 0, rf_frames_bad: 0, rf_queue_full: 0, is_lines_in: 0, is_lines_out: 0,
  messages_sent: 0, messages_received: 0, acks_received: 0, rejs_received: 0, acks_sent: 0,
  positions_heard: 0, gated_to_is: 0, gated_to_rf: 0, not_gated_to_rf: 0, beacons_sent: 0, refused: 0,
};
export type Counters = typeof ZERO_COUNTERS;

export interface InboundParts {
  ctx: BearerContext;
  settings: AprsSettings;
  counters: Counters;
  heard: HeardList;
  acks: AckTracker;
  isVerified: boolean;
  rfOnline: boolean;
  sendIs(line: string): boolean;
  transmit(medium: 'rf' | 'is', info: string, urgent?: boolean): void;
  ack(medium: 'rf' | 'is', to: string, id: string): void;
}

export function handlePacket(p: InboundParts, packet: Tnc2Packet, medium: 'rf' | 'is', nested = false): void {
  const call = p.settings.callsign;
  const now = p.ctx.clock.now();
  if (call !== null && packet.source.toUpperCase() === call.toUpperCase()) return;
  if (!nested && p.settings.igate && call !== null) gate(p, packet, medium, call, now);
  const info = decodeInfo(packet.destination.split('-')[0], packet.info);
  switch (info.type) {
    case 'third-party':
      // A packet an iGate brought from the internet: taken as from its own source.
      if (!nested) handlePacket(p, info.packet, medium, true);
      return;
    case 'ack':
    case 'rej':
      if (call === null || info.addressee.toUpperCase() !== call.toUpperCase()) return;
      if (p.acks.answer(info.type, packet.source, info.id)) p.counters[info.type === 'ack' ? 'acks_received' : 'rejs_received']++;
      return;
    case 'message': {
      if (call === null || info.addressee.toUpperCase() !== call.toUpperCase()) return;
      if (info.replyAck !== null && p.acks.answer('ack', packet.source, info.replyAck)) p.counters.acks_received++;
      p.counters.messages_received++;
      const id = info.id;
      const stored = p.ctx.events.receive({
        from: packet.source.toUpperCase(), to: call, channel: null, kind: 'text', text: info.text, payload: new TextEncoder().encode(info.text),
        meta: { aprs_medium: medium, aprs_path: packet.path.join(','), ...(id !== null ? { aprs_msg_id: id } : {}) },
        ...(id !== null ? { dedupeKey: `aprs:${packet.source.toUpperCase()}:${id}` } : {}),
      });
      // Acknowledged once stored (or known: a copy the sender repeated because it missed our
      // ack); one the bridge could not store is not acknowledged, so the sender tries again.
      if (id !== null) {
        void Promise.resolve(stored).then((ok) => {
          if (ok === false) return;
          p.ack(medium, packet.source, id);
          p.counters.acks_sent++;
        });
      }
      return;
    }
    case 'position':
    case 'mic-e':
      node(p, packet.source, info.position, now, medium);
      return;
    case 'object':
    case 'item':
      if (info.live) node(p, info.name, info.position, now, medium);
      return;
    default:
      return;
  }
}

function node(p: InboundParts, id: string, pos: AprsPosition, now: number, medium: 'rf' | 'is'): void {
  p.counters.positions_heard++;
  const at = new Date(now).toISOString();
  const report: NodeReport = {
    id: id.toUpperCase(), network: 'aprs', long_name: id, last_heard_at: at,
    position: { latitude: pos.latitude, longitude: pos.longitude, ...(pos.altitude_m !== undefined ? { altitude_m: pos.altitude_m } : {}), time: at },
  };
  p.ctx.events.nodes([report]);
}

function gate(p: InboundParts, packet: Tnc2Packet, medium: 'rf' | 'is', call: string, now: number): void {
  if (medium === 'rf') {
    if (!p.isVerified) return;
    const g = gateToIs(packet, call);
    if ('line' in g && p.sendIs(g.line)) p.counters.gated_to_is++;
    return;
  }
  if (!p.rfOnline) return;
  const g = gateToRf(packet, call, p.heard, now);
  if ('info' in g) {
    p.transmit('rf', g.info);
    p.counters.gated_to_rf++;
  } else if (!/^not a message/.test(g.skip)) {
    p.counters.not_gated_to_rf++;
    p.ctx.log.debug('aprs_not_gated_to_rf', { source: packet.source, why: g.skip });
  }
}
