import { z } from 'zod';
import { DRIVERS, driverFor } from '../../bearers/drivers.ts';
import { badRequest } from '../../lib/errors.ts';
import { PrecedenceSchema } from '../engine/precedence.ts';
import type { InterfaceService } from '../interfaces/service.ts';
import type { IngressMessage } from '../engine/pipeline.ts';

// The bodies of send and simulate-mesh-rx and the messages they put into the pipeline
// (docs/api.md 4.6). POST /api/messages/preview takes the same bodies and turns them into the
// same IngressMessage, so a preview asks exactly what the real call would.

export const Address = z.string().trim().min(1).max(128);
export const Channel = z.number().int().min(0).max(255).nullable().default(null);
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64').refine((s) => s.length % 4 === 0, 'must be base64 (length a multiple of 4)');

// What every send may say about how its deliveries are treated (docs/routing.md).
export const DeliveryOptions = {
  precedence: PrecedenceSchema.optional().describe('Default: the deciding rule\'s, else routine'),
  ttl_s: z.number({ error: 'ttl_s must be a whole number of seconds or null' }).int({ error: 'ttl_s must be a whole number of seconds or null' })
    .min(1, { error: 'ttl_s must be 1 to 2592000, or null' }).max(30 * 86_400, { error: 'ttl_s must be 1 to 2592000, or null' }).nullable().optional()
    .describe('How long its deliveries may wait; default each interface\'s ttl_s. null: never expire, only with precedence override (an SOS: it keeps trying until acknowledged or cancelled)'),
};
export const refineTtl = (b: { precedence?: string; ttl_s?: number | null }, ctx: z.RefinementCtx) => {
  if (b.ttl_s === null && b.precedence !== 'override') ctx.addIssue({ code: 'custom', path: ['ttl_s'], message: 'ttl_s null (never expire) is only for precedence override (an SOS)' });
};
export const ttlMsOf = (b: { ttl_s?: number | null }) => (b.ttl_s === undefined ? undefined : b.ttl_s === null ? null : b.ttl_s * 1000);

export const SEND_FIELDS = { to: Address, text: z.string().min(1).max(65536).optional(), payload_b64: base64.optional(), channel: Channel, ...DeliveryOptions };
export const refineSend = (b: { text?: string; payload_b64?: string }, ctx: z.RefinementCtx) => {
  if ((b.text === undefined) === (b.payload_b64 === undefined)) ctx.addIssue({ code: 'custom', path: ['text'], message: 'give exactly one of text or payload_b64' });
};
export const SendBody = z.strictObject(SEND_FIELDS).superRefine(refineSend).superRefine(refineTtl);
export type SendBody = z.infer<typeof SendBody>;

export const SIMULATE_FIELDS = { from: Address, to: Address.default('broadcast'), channel: Channel, text: z.string().min(1).max(65536), interface: z.string().min(1).optional() };
export const SimulateBody = z.strictObject(SIMULATE_FIELDS);
export type SimulateBody = z.infer<typeof SimulateBody>;

/** POST /api/messages/send: an outbound message from the API. */
export function sendInput(body: Omit<SendBody, 'ttl_s'> & { ttl_s?: number | null }): IngressMessage {
  return {
    direction: 'outbound', interfaceId: null, from: 'local', to: body.to, channel: body.channel,
    kind: body.text !== undefined ? 'text' : 'data', text: body.text ?? null,
    payload: body.payload_b64 !== undefined ? Buffer.from(body.payload_b64, 'base64') : null,
    precedence: body.precedence, ttlMs: ttlMsOf(body),
  };
}

/** POST /api/messages/simulate-mesh-rx: a text as if heard on a mesh interface (the named one,
 *  else the first that carries mesh traffic); 400 for an unknown, non-mesh or disabled one. */
export function meshRxInput(body: SimulateBody, interfaces: Pick<InterfaceService, 'find' | 'list'>): IngressMessage {
  const meshy = (k: string) => driverFor(k)?.meshTraffic === true;
  const kinds = DRIVERS.filter((d) => meshy(d.kind)).map((d) => d.kind).join(', ');
  // Without `interface` the one mesh interface there is receives; with several, picking one
  // silently would route the message by whichever was created first.
  const candidates = body.interface ? [] : interfaces.list().filter((i) => meshy(i.kind));
  if (candidates.length > 1) {
    const names = candidates.map((i) => i.name).join(', ');
    throw badRequest(`there are ${candidates.length} mesh interfaces (${names}): name the one to receive on in interface`, [{ path: 'body.interface', message: `required while several mesh interfaces exist: ${names}` }]);
  }
  const iface = body.interface ? interfaces.find(body.interface) : candidates[0];
  if (body.interface && !iface) throw badRequest(`no interface '${body.interface}'`, [{ path: 'body.interface', message: 'no such interface' }]);
  if (!iface) throw badRequest(`there is no mesh interface (${kinds}) to receive on; create one first`, [{ path: 'body.interface', message: 'no mesh interface exists' }]);
  if (!meshy(iface.kind)) throw badRequest(`interface '${iface.name}' is a ${iface.kind} interface; simulate-mesh-rx takes a mesh interface (${kinds})`, [{ path: 'body.interface', message: 'not a mesh interface' }]);
  if (!iface.enabled) throw badRequest(`interface '${iface.name}' is disabled: it accepts no inbound traffic`, [{ path: 'body.interface', message: 'interface disabled' }]);
  return { direction: 'inbound', interfaceId: iface.id, from: body.from, to: body.to, channel: body.channel, kind: 'text', text: body.text, payload: null, meta: { simulated: true } };
}
