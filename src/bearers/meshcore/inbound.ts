import { createHash } from 'node:crypto';
import type { InboundFrame, NodeReport } from '../bearer.ts';
import { type Contact, hex, OUT_PATH_UNKNOWN, PUB_KEY_PREFIX_SIZE, type RadioMessage, utf8 } from './codec/index.ts';

// What the bridge stores of a received MeshCore message and of a contact
// (docs/protocols/meshcore.md 6.6). A contact's address is the hex of the first six
// bytes of its public key: the prefix messages name their sender by.

/** The address of a node: 12 lower-case hex digits. */
export const addressOf = (publicKeyOrPrefix: Uint8Array): string => hex(publicKeyOrPrefix.subarray(0, PUB_KEY_PREFIX_SIZE));

export const isAddress = (to: string): boolean => /^[0-9a-f]{12}([0-9a-f]{2}){0,26}$/i.test(to);

/** The same sender, clock time and text is the same message (a radio may hand a message over
 *  twice, e.g. a retry whose first ack was lost): stored and forwarded once. */
function dedupeKey(from: string, timestamp: number, text: string): string {
  return `meshcore:${from}:${timestamp}:${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

/** A received message as an InboundFrame, or null for a frame that is not one. */
export function inboundMessage(m: RadioMessage): InboundFrame | null {
  switch (m.type) {
    case 'CONTACT_MSG_RECV':
    case 'CONTACT_MSG_RECV_V3': {
      const from = addressOf(m.pubKeyPrefix);
      return {
        from, to: null, channel: null, kind: 'text', text: m.text, payload: utf8(m.text), dedupeKey: dedupeKey(from, m.timestamp, m.text),
        meta: {
          ...(m.type === 'CONTACT_MSG_RECV_V3' ? { snr_db: m.snr } : {}),
          // FF: it came along a known route; otherwise the hops it flooded over.
          ...(m.pathLen === OUT_PATH_UNKNOWN ? { route: 'direct' } : { route: 'flood', path_len: m.pathLen & 63 }),
          txt_type: m.txtType, sender_timestamp: m.timestamp,
        },
      };
    }
    case 'CHANNEL_MSG_RECV':
    case 'CHANNEL_MSG_RECV_V3': {
      // Channel messages carry no sender key, only "<name>: " in front of the text (the
      // firmware's sendGroupMessage): the name is the sender we can give.
      const cut = /^([^:\n]{1,32}): ([\s\S]*)$/.exec(m.text);
      const sender = cut ? cut[1] : '';
      const text = cut ? cut[2] : m.text;
      const from = sender === '' ? `channel:${m.channelIndex}` : sender;
      return {
        from, to: 'broadcast', channel: m.channelIndex, kind: 'text', text, payload: utf8(text),
        dedupeKey: dedupeKey(`${m.channelIndex}:${from}`, m.timestamp, text),
        meta: {
          ...(m.type === 'CHANNEL_MSG_RECV_V3' ? { snr_db: m.snr } : {}),
          ...(m.pathLen === OUT_PATH_UNKNOWN ? { route: 'direct' } : { route: 'flood', path_len: m.pathLen & 63 }),
          sender_name: sender || null, sender_timestamp: m.timestamp,
        },
      };
    }
    case 'CHANNEL_DATA_RECV':
      // A datagram names no sender and has no timestamp: it comes from its channel.
      return {
        from: `channel:${m.channelIndex}`, to: 'broadcast', channel: m.channelIndex, kind: 'data', text: null, payload: m.payload,
        meta: {
          snr_db: m.snr, data_type: m.dataType,
          // Inverted from the send side (6.6): FF here means it came by a direct route.
          ...(m.pathLen === OUT_PATH_UNKNOWN ? { route: 'direct' } : { route: 'flood', path_len: m.pathLen & 63 }),
        },
      };
    default:
      return null;
  }
}

/** A contact for the node database. */
export function contactReport(c: Contact): NodeReport {
  const report: NodeReport = { id: addressOf(c.publicKey), network: 'meshcore', long_name: c.name };
  if (c.outPathLen !== OUT_PATH_UNKNOWN) report.hops_away = c.outPathLen & 63;
  if (c.lastmod > 0) report.last_heard_at = new Date(c.lastmod * 1000).toISOString();
  if (c.latitude !== 0 || c.longitude !== 0) report.position = { latitude: c.latitude / 1e6, longitude: c.longitude / 1e6 };
  return report;
}
