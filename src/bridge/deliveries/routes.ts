import { z } from 'zod';
import { decodeCursor, PageQuery, pageReply, pageSchema } from '../../http/paging.ts';
import { strictQuery } from '../../http/query.ts';
import { ADMIN, ANY_KEY, route, type Route } from '../../http/route.ts';
import { AppError, badRequest, notFound } from '../../lib/errors.ts';
import type { InterfaceService } from '../interfaces/service.ts';
import { retryPolicyOf } from '../engine/backoff.ts';
import type { Dispatcher } from '../engine/dispatcher.ts';
import type { FallbackService } from '../engine/fallback.ts';
import type { DeliveryStore } from '../engine/delivery-store.ts';
import type { DeadLetterFilter } from '../engine/delivery-sql.ts';
import { DeliveryApiView, deliveryApiView } from './view.ts';
import type { Clock } from '../../lib/clock.ts';
import { DELIVERY_STATES, type FallbackRow, type DeliveryRow } from '../engine/rows.ts';

const Ref = z.object({ id: z.string().min(1) });

// A fallback list as the API shows it: its members, how far it got and what happened, and the
// outcome sentence ("delivered via sms-0 after mesh-0 timed out at 60 s").
const FallbackView = z.object({
  id: z.string(),
  strategy: z.enum(['ordered', 'first_available', 'all']),
  keep_trying: z.boolean(),
  state: z.enum(['active', 'delivered', 'exhausted', 'cancelled']),
  position: z.number().int().describe('The member started last'),
  deadline_at: z.iso.datetime().nullable().describe('When the current member must be delivered before the next starts'),
  members: z.array(z.object({ interface_id: z.string(), interface: z.string(), to: z.string().nullable(), ack_within_s: z.number().int(), unusable: z.string().optional() })),
  trace: z.array(z.object({ at: z.iso.datetime(), member: z.number().int(), interface: z.string(), event: z.string(), detail: z.string().optional() })),
  outcome: z.string().nullable(),
});
// A bulk action on the dead letter queue: which dead letters it takes. No filter: all.
const DeadLetterSelection = z.strictObject({
  interface: z.string({ error: 'interface must be an interface id or name' }).min(1, { error: 'interface must be an interface id or name' }).optional()
    .describe('Interface id or name; the id of a deleted interface is accepted, so that its dead letters can be cleared'),
  older_than_s: z.number({ error: 'older_than_s must be a whole number of seconds' }).int({ error: 'older_than_s must be a whole number of seconds' })
    .min(0, { error: 'older_than_s must be 0 or more' }).max(100 * 365 * 86_400, { error: 'older_than_s must be at most 100 years' }).optional()
    .describe('Only dead letters that died at least this many seconds ago (finished_at)'),
  error_contains: z.string({ error: 'error_contains must be text' }).min(1, { error: 'error_contains must not be empty (leave it out to take every error)' }).max(500).optional()
    .describe('Only dead letters whose last_error contains this text (ignoring ASCII case)'),
}, { error: (issue) => (issue.code === 'invalid_type' ? 'the body must be an object {interface?, older_than_s?, error_contains?}, or empty for every dead letter' : undefined) })
  .optional().describe('Which dead letters: every filter given must match; an empty body takes them all');

const fallbackView = (f: FallbackRow) => ({
  id: f.id, strategy: f.strategy, keep_trying: f.keep_trying, state: f.state, position: f.position,
  deadline_at: f.deadline_ms === null ? null : new Date(f.deadline_ms).toISOString(), members: f.members, trace: f.trace, outcome: f.outcome,
});

export function deliveryRoutes(deps: {
  store: DeliveryStore; dispatcher: Dispatcher; interfaces: InterfaceService; clock: Clock; fallbacks: Pick<FallbackService, 'byMessage'>;
  /** Messages: GET /api/deliveries/message/{ref} tells an unknown message (404) from one without deliveries. */
  messages: { get(id: string): unknown };
}): Route[] {
  const { store, dispatcher, interfaces, clock, fallbacks, messages } = deps;
  const tags = ['deliveries'];
  const get = (id: string) => {
    const d = store.get(id);
    if (!d) throw notFound('delivery', id);
    return d;
  };
  // waiting_for is read from each interface's state now (docs/api.md 2.5): once per answer.
  const viewer = () => {
    const seen = new Map<string, string | null>();
    const reason = (id: string) => {
      if (!seen.has(id)) seen.set(id, interfaces.waitingFor(id));
      return seen.get(id)!;
    };
    return (d: DeliveryRow) => deliveryApiView(d, reason, (id) => interfaces.find(id)?.name);
  };
  // A delivery whose interface was deleted would wait forever: it is not retried.
  const gone = (interfaceId: string) => (interfaces.find(interfaceId) ? null : `its interface ${interfaceId} was deleted, so it would wait forever; cancel it instead`);
  const deadFilter = (body: z.infer<typeof DeadLetterSelection>): DeadLetterFilter => {
    let interface_id: string | undefined;
    if (body?.interface !== undefined) {
      interface_id = interfaces.find(body.interface)?.id;
      // The id of a deleted interface: its dead letters stay until cleared.
      if (!interface_id && /^ifc_[0-9A-Z]{26}$/.test(body.interface)) interface_id = body.interface;
      if (!interface_id) throw badRequest(`no interface '${body.interface}'`, [{ path: 'body.interface', message: `no interface '${body.interface}' (an id or name; the id of a deleted one is accepted)` }]);
    }
    return {
      interface_id,
      died_before: body?.older_than_s === undefined ? undefined : new Date(clock.now() - body.older_than_s * 1000).toISOString(),
      error_contains: body?.error_contains,
    };
  };
  return [
    route({
      method: 'GET', path: '/api/deliveries', summary: 'Deliveries, newest first; the dead letter queue is ?state=dead', tags, roles: ANY_KEY,
      query: strictQuery({ ...PageQuery, state: z.enum(DELIVERY_STATES).optional(), interface: z.string().min(1).optional(), message: z.string().min(1).optional() }),
      response: pageSchema(DeliveryApiView), responseName: 'DeliveryPage',
      handler: (ctx) => {
        const q = ctx.query;
        const interface_id = interfaces.idForFilter(q.interface, 'query.interface');
        const rows = store.list({ state: q.state, interface_id, message_id: q.message, before_id: decodeCursor(q.cursor) }, q.limit + 1);
        return pageReply(ctx, rows.map(viewer()), q.limit);
      },
    }),
    route({
      method: 'GET', path: '/api/deliveries/stats', summary: 'Delivery counts by state (every state, zero included)', tags, roles: ANY_KEY,
      response: z.object(Object.fromEntries(DELIVERY_STATES.map((s) => [s, z.number().int()]))), responseName: 'DeliveryStats',
      handler: () => {
        const counts = store.countByState();
        return Object.fromEntries(DELIVERY_STATES.map((s) => [s, counts[s] ?? 0]));
      },
    }),
    route({
      method: 'GET', path: '/api/deliveries/message/{ref}', summary: 'Every delivery of one message (one per destination, one per started member of a fallback list), and its fallback lists with their story', tags, roles: ANY_KEY,
      params: z.object({ ref: z.string().min(1).describe('Message id') }),
      response: z.object({ items: z.array(DeliveryApiView), fallbacks: z.array(FallbackView) }), responseName: 'DeliveryList',
      handler: ({ params }) => {
        const items = store.byMessage(params.ref);
        const lists = fallbacks.byMessage(params.ref);
        // The deliveries of a message cleared from history stay listed (DELETE /api/messages).
        if (items.length === 0 && lists.length === 0 && !messages.get(params.ref)) throw notFound('message', params.ref);
        return { items: items.map(viewer()), fallbacks: lists.map(fallbackView) };
      },
    }),
    route({
      method: 'POST', path: '/api/deliveries/dead/cancel', summary: 'Cancel dead letters by filter (interface, age, error text); answers how many', tags, roles: ADMIN,
      body: DeadLetterSelection, bodyName: 'DeadLetterSelection', response: z.object({ cancelled: z.number().int() }), responseName: 'DeadLettersCancelled',
      handler: ({ body }) => ({ cancelled: store.cancelDead(deadFilter(body), 'cancelled through the API (dead letter queue)', clock.now()) }),
    }),
    route({
      method: 'POST', path: '/api/deliveries/dead/retry',
      summary: 'Retry dead letters by filter (interface, age, error text): one more attempt each, at the front of its queue; those whose interface was deleted are refused, counted with the reason', tags, roles: ADMIN,
      body: DeadLetterSelection, bodyName: 'DeadLetterSelection',
      response: z.object({
        retried: z.number().int(),
        refused: z.number().int(),
        reasons: z.array(z.object({ interface_id: z.string(), count: z.number().int(), reason: z.string() })).describe('Why dead letters were not retried, per interface'),
      }), responseName: 'DeadLettersRetried',
      handler: ({ body }) => {
        const byInterface = new Map<string, string[]>();
        for (const d of store.deadLetters(deadFilter(body))) {
          const ids = byInterface.get(d.interface_id) ?? [];
          ids.push(d.id);
          byInterface.set(d.interface_id, ids);
        }
        let retried = 0;
        const reasons: Array<{ interface_id: string; count: number; reason: string }> = [];
        for (const [interfaceId, ids] of byInterface) {
          const why = gone(interfaceId);
          if (why) {
            reasons.push({ interface_id: interfaceId, count: ids.length, reason: `not retried: ${why}` });
            continue;
          }
          const ttlS = retryPolicyOf(interfaces.find(interfaceId)?.retry).ttl_s;
          retried += store.retryMany(ids, clock.now(), ttlS * 1000).length;
          dispatcher.changed(interfaceId);
        }
        return { retried, refused: reasons.reduce((n, r) => n + r.count, 0), reasons };
      },
    }),
    route({
      method: 'GET', path: '/api/deliveries/{id}', summary: 'One delivery', tags, roles: ANY_KEY, params: Ref,
      response: DeliveryApiView, responseName: 'Delivery',
      handler: ({ params }) => viewer()(get(params.id)),
    }),
    route({
      method: 'POST', path: '/api/deliveries/{id}/retry', summary: 'Try again now, at the front of its interface\'s queue (pending, held, retrying or dead; a held one goes first once its interface returns); a dead one gets one more attempt, and one past its TTL a new TTL', tags, roles: ADMIN,
      params: Ref, errors: [409], response: DeliveryApiView, responseName: 'Delivery',
      handler: ({ params }) => {
        const d = get(params.id);
        if (!['pending', 'held', 'retrying', 'dead'].includes(d.state)) throw new AppError('ERR_DELIVERY_STATE', 409, `delivery ${d.id} is ${d.state}; only pending, held, retrying or dead deliveries can be retried`);
        const why = gone(d.interface_id);
        if (why) throw new AppError('ERR_INTERFACE_GONE', 409, `delivery ${d.id} cannot be retried: ${why}`);
        const ttlS = retryPolicyOf(interfaces.find(d.interface_id)?.retry).ttl_s;
        const updated = store.retryNow(d.id, clock.now(), ttlS * 1000);
        if (!updated) throw new AppError('ERR_DELIVERY_STATE', 409, `delivery ${d.id} changed state meanwhile; only pending, held, retrying or dead deliveries can be retried`);
        dispatcher.changed(d.interface_id);
        return viewer()(updated);
      },
    }),
    route({
      method: 'POST', path: '/api/deliveries/{id}/cancel', summary: 'Stop trying (pending, held or retrying), or clear a dead letter (its last error is kept in the reason); no further attempts', tags, roles: ADMIN,
      params: Ref, errors: [409], response: DeliveryApiView, responseName: 'Delivery',
      handler: ({ params }) => {
        const d = get(params.id);
        const cancellable = ['pending', 'held', 'retrying', 'dead'];
        if (!cancellable.includes(d.state)) throw new AppError('ERR_DELIVERY_STATE', 409, `delivery ${d.id} is ${d.state}; only pending, held, retrying or dead deliveries can be cancelled`);
        const cancelled = store.cancel(d.id, 'cancelled through the API', clock.now());
        if (!cancelled) throw new AppError('ERR_DELIVERY_STATE', 409, `delivery ${d.id} is being sent; only pending, held, retrying or dead deliveries can be cancelled`);
        return viewer()(cancelled);
      },
    }),
  ];
}
