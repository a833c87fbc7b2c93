import { z } from 'zod';
import type { MessageRow } from '../engine/rows.ts';

// A message as the outside world sees it: the API answers with it and the uplink publishes it
// (docs/hub.md), so both say the same thing. Raw payloads travel as base64.

export const MessageKind = z.enum(['text', 'position', 'telemetry', 'data']);

export const MessageView = z.object({
  id: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  interface_id: z.string().nullable(),
  from: z.string(),
  to: z.string(),
  channel: z.number().int().nullable(),
  kind: MessageKind,
  text: z.string().nullable(),
  payload_b64: z.string().nullable().describe('Raw payload (base64) of non-text messages'),
  size: z.number().int().describe('Bytes'),
  rule_id: z.string().nullable(),
  action: z.string().nullable(),
  decision: z.object({ rule_id: z.string().nullable(), action: z.string(), reason: z.string() }).nullable().describe('Which rule decided and why'),
  meta: z.record(z.string(), z.unknown()).describe('Link facts such as rssi_dbm and snr_db of a received frame'),
  created_at: z.iso.datetime(),
});

export function messageView(m: MessageRow) {
  const { payload, ...rest } = m;
  return { ...rest, payload_b64: payload ? Buffer.from(payload).toString('base64') : null };
}
