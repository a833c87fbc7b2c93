import { z } from 'zod';
import { PrecedenceSchema, precedenceName } from '../engine/precedence.ts';
import { DELIVERY_STATES, NEVER_MS, type DeliveryRow } from '../engine/rows.ts';

// A delivery as the outside world sees it: the API answers with it and the uplink publishes it
// (docs/hub.md), so both say the same thing. The queue's internals (due times in ms, the
// retry-now mark) become one next_attempt_at.

export const DeliveryView = z.object({
  id: z.string(),
  message_id: z.string(),
  interface_id: z.string(),
  to: z.string(),
  state: z.enum(DELIVERY_STATES).describe('pending, held (its interface is down, or it waits until a node is heard; its TTL paused), sending, retrying, delivered, dead (retries exhausted or evicted from a full queue: a dead letter), cancelled, expired (message TTL passed)'),
  precedence: PrecedenceSchema,
  attempts: z.number().int(),
  max_attempts: z.number().int(),
  next_attempt_at: z.iso.datetime().nullable().describe('When the next attempt is due; null once finished'),
  last_error: z.string().nullable(),
  expires_at: z.iso.datetime().nullable().describe('When it expires if not delivered; null: never (an SOS), or its TTL is paused while held'),
  until_heard: z.string().nullable().describe('Held until this node is heard again'),
  fallback: z.object({ id: z.string(), position: z.number().int() }).nullable().describe('The fallback list it belongs to and its place in it'),
  result: z.record(z.string(), z.unknown()).nullable().describe('What the bearer said of a delivered send: e.g. the Meshtastic node that acknowledged it (acked_by), or that only a rebroadcast was heard'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  finished_at: z.iso.datetime().nullable(),
});

/** The API's delivery: the shared view and what it waits for. */
export const DeliveryApiView = DeliveryView.extend({
  interface: z.string().nullable().describe('The name of its interface, beside interface_id (null once the interface was deleted)'),
  waiting_for: z.string().nullable().describe('Why a waiting delivery (pending, held, retrying) cannot go out now, read from its interface when this answer was made: '
    + 'disabled, unbound, offline with the reason, out of budget, no driver, deleted; or the node it waits to hear (until_heard). null when nothing stops it, and once finished'),
});

/** Why an interface cannot send now, or null (InterfaceService.waitingFor). */
export type WaitingReason = (interfaceId: string) => string | null;
/** An interface's name, or undefined once it was deleted. */
export type InterfaceName = (interfaceId: string) => string | undefined;

/**
 * The delivery as the API answers it: the shared view plus waiting_for, worked out from its
 * interface's state now. It is never stored, so the uplink, which publishes stored events,
 * carries the plain view.
 */
export function deliveryApiView(d: DeliveryRow, reason: WaitingReason, name: InterfaceName) {
  const { id, message_id, interface_id, ...rest } = deliveryView(d);
  return { id, message_id, interface_id, interface: name(interface_id) ?? null, ...rest, waiting_for: waitingFor(d, reason) };
}

function waitingFor(d: DeliveryRow, reason: WaitingReason): string | null {
  if (d.state !== 'pending' && d.state !== 'held' && d.state !== 'retrying') return null;
  const why = [reason(d.interface_id), d.until_heard ? `node ${d.until_heard} to be heard again` : null].filter((w) => w !== null);
  return why.length > 0 ? why.join('; ') : null;
}

export function deliveryView(d: DeliveryRow) {
  const waiting = d.state === 'pending' || d.state === 'retrying';
  return {
    id: d.id,
    message_id: d.message_id,
    interface_id: d.interface_id,
    to: d.to,
    state: d.state,
    precedence: precedenceName(d.precedence),
    attempts: d.attempts,
    max_attempts: d.max_attempts,
    next_attempt_at: waiting ? new Date(d.front_ms ?? d.next_attempt_ms).toISOString() : null,
    last_error: d.last_error,
    expires_at: d.expires_ms >= NEVER_MS ? null : new Date(d.expires_ms).toISOString(),
    until_heard: d.until_heard ?? null,
    fallback: d.fallback_id ? { id: d.fallback_id, position: d.fallback_pos ?? 0 } : null,
    result: d.result ?? null,
    created_at: d.created_at,
    updated_at: d.updated_at,
    finished_at: d.finished_at,
  };
}
