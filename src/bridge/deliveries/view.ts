import { z } from 'zod';
import { DELIVERY_STATES, type DeliveryRow } from './store.ts';

// A delivery as the outside world sees it: the API answers with it and the uplink publishes it
// (docs/hub.md), so both say the same thing. The queue's internals (due times in ms, the
// retry-now mark) become one next_attempt_at.

export const DeliveryView = z.object({
  id: z.string(),
  message_id: z.string(),
  interface_id: z.string(),
  to: z.string(),
  state: z.enum(DELIVERY_STATES).describe('pending, sending, retrying, delivered, dead (retries exhausted: a dead letter), cancelled, expired (message TTL passed)'),
  attempts: z.number().int(),
  max_attempts: z.number().int(),
  next_attempt_at: z.iso.datetime().nullable().describe('When the next attempt is due; null once finished'),
  last_error: z.string().nullable(),
  result: z.record(z.string(), z.unknown()).nullable().describe('What the bearer said of a delivered send: e.g. the Meshtastic node that acknowledged it (acked_by), or that only a rebroadcast was heard'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  finished_at: z.iso.datetime().nullable(),
});

export function deliveryView(d: DeliveryRow) {
  const waiting = d.state === 'pending' || d.state === 'retrying';
  return {
    id: d.id,
    message_id: d.message_id,
    interface_id: d.interface_id,
    to: d.to,
    state: d.state,
    attempts: d.attempts,
    max_attempts: d.max_attempts,
    next_attempt_at: waiting ? new Date(d.front_ms ?? d.next_attempt_ms).toISOString() : null,
    last_error: d.last_error,
    result: d.result ?? null,
    created_at: d.created_at,
    updated_at: d.updated_at,
    finished_at: d.finished_at,
  };
}
