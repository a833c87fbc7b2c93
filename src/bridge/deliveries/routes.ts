import { z } from 'zod';
import { decodeCursor, PageQuery, pageReply, pageSchema } from '../../http/paging.ts';
import { ADMIN, ANY_KEY, route, type Route } from '../../http/route.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import type { InterfaceService } from '../interfaces/service.ts';
import { retryPolicyOf } from './backoff.ts';
import type { Dispatcher } from './dispatcher.ts';
import { DELIVERY_STATES, type DeliveryStore } from './store.ts';
import { DeliveryView, deliveryView } from './view.ts';
import type { Clock } from '../../lib/clock.ts';

const Ref = z.object({ id: z.string().min(1) });

export function deliveryRoutes(deps: { store: DeliveryStore; dispatcher: Dispatcher; interfaces: InterfaceService; clock: Clock }): Route[] {
  const { store, dispatcher, interfaces, clock } = deps;
  const tags = ['deliveries'];
  const get = (id: string) => {
    const d = store.get(id);
    if (!d) throw notFound('delivery', id);
    return d;
  };
  return [
    route({
      method: 'GET', path: '/api/deliveries', summary: 'Deliveries, newest first; the dead letter queue is ?state=dead', tags, roles: ANY_KEY,
      query: z.strictObject({ ...PageQuery, state: z.enum(DELIVERY_STATES).optional(), interface: z.string().min(1).optional(), message: z.string().min(1).optional() }),
      response: pageSchema(DeliveryView), responseName: 'DeliveryPage',
      handler: (ctx) => {
        const q = ctx.query;
        const interface_id = interfaces.idForFilter(q.interface, 'query.interface');
        const rows = store.list({ state: q.state, interface_id, message_id: q.message, before_id: decodeCursor(q.cursor) }, q.limit + 1);
        return pageReply(ctx, rows.map(deliveryView), q.limit);
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
      method: 'GET', path: '/api/deliveries/message/{ref}', summary: 'Every delivery of one message, one per destination', tags, roles: ANY_KEY,
      params: z.object({ ref: z.string().min(1).describe('Message id') }),
      response: z.object({ items: z.array(DeliveryView) }), responseName: 'DeliveryList',
      handler: ({ params }) => ({ items: store.byMessage(params.ref).map(deliveryView) }),
    }),
    route({
      method: 'GET', path: '/api/deliveries/{id}', summary: 'One delivery', tags, roles: ANY_KEY, params: Ref,
      response: DeliveryView, responseName: 'Delivery',
      handler: ({ params }) => deliveryView(get(params.id)),
    }),
    route({
      method: 'POST', path: '/api/deliveries/{id}/retry', summary: 'Try again now, at the front of its interface\'s queue (pending, retrying or dead); a dead one gets one more attempt, and one past its TTL a new TTL', tags, roles: ADMIN,
      params: Ref, errors: [409], response: DeliveryView, responseName: 'Delivery',
      handler: ({ params }) => {
        const d = get(params.id);
        if (!['pending', 'retrying', 'dead'].includes(d.state)) throw new AppError('ERR_DELIVERY_STATE', 409, `delivery ${d.id} is ${d.state}; only pending, retrying or dead deliveries can be retried`);
        const ttlS = retryPolicyOf(interfaces.find(d.interface_id)?.retry).ttl_s;
        const updated = store.retryNow(d.id, clock.now(), ttlS * 1000);
        if (!updated) throw new AppError('ERR_DELIVERY_STATE', 409, `delivery ${d.id} changed state meanwhile; only pending, retrying or dead deliveries can be retried`);
        dispatcher.changed(d.interface_id);
        return deliveryView(updated);
      },
    }),
    route({
      method: 'POST', path: '/api/deliveries/{id}/cancel', summary: 'Stop trying (pending or retrying); no further attempts', tags, roles: ADMIN,
      params: Ref, errors: [409], response: DeliveryView, responseName: 'Delivery',
      handler: ({ params }) => {
        const d = get(params.id);
        if (d.state !== 'pending' && d.state !== 'retrying') throw new AppError('ERR_DELIVERY_STATE', 409, `delivery ${d.id} is ${d.state}; only pending or retrying deliveries can be cancelled`);
        const cancelled = store.cancel(d.id, 'cancelled through the API', clock.now());
        if (!cancelled) throw new AppError('ERR_DELIVERY_STATE', 409, `delivery ${d.id} is being sent; only pending or retrying deliveries can be cancelled`);
        return deliveryView(cancelled);
      },
    }),
  ];
}
