import { z } from 'zod';
import { decodeCursor, PageQuery, pageReply, pageSchema } from '../../http/paging.ts';
import { ADMIN, ANY_KEY, Reply, route, type Route } from '../../http/route.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import type { BookService } from '../contacts/service.ts';
import { DeliveryView, deliveryView } from '../deliveries/view.ts';
import { driverFor } from '../../bearers/drivers.ts';
import type { InterfaceService } from '../interfaces/service.ts';
import type { IngestResult, Pipeline } from '../router/pipeline.ts';
import type { SendRateLimiter } from './rate-limit.ts';
import type { MessageStore } from './store.ts';
import { MessageKind, MessageView, messageView } from './view.ts';

// Messages (docs/api.md 4.6). send, send-to-contact and simulate-mesh-rx all enter the one pipeline:
// there is no dry run, and a matching forward rule to a paid bearer really sends.


const Accepted = z.object({ message: MessageView, deliveries: z.array(DeliveryView) });

const Address = z.string().trim().min(1).max(128);
const Channel = z.number().int().min(0).max(255).nullable().default(null);
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64').refine((s) => s.length % 4 === 0, 'must be base64 (length a multiple of 4)');

const SendBody = z
  .strictObject({ to: Address, text: z.string().min(1).max(65536).optional(), payload_b64: base64.optional(), channel: Channel })
  .refine((b) => (b.text === undefined) !== (b.payload_b64 === undefined), { message: 'give exactly one of text or payload_b64', path: ['text'] });

const accepted = (r: IngestResult) => ({ message: messageView(r.message), deliveries: r.deliveries.map(deliveryView) });

export function messageRoutes(deps: { store: MessageStore; pipeline: Pipeline; interfaces: InterfaceService; contacts: BookService<Record<string, string>>; limiter: SendRateLimiter }): Route[] {
  const { store, pipeline, interfaces, contacts, limiter } = deps;
  const tags = ['messages'];
  const answer = (results: IngestResult[]) => (results.length === 1 ? new Reply(202, accepted(results[0])) : new Reply(202, { items: results.map(accepted) }));
  return [
    route({
      method: 'GET', path: '/api/messages', summary: 'Message history, newest first', tags, roles: ANY_KEY,
      query: z.strictObject({
        ...PageQuery,
        direction: z.enum(['inbound', 'outbound']).optional(),
        interface: z.string().min(1).optional().describe('Interface id or name'),
        kind: MessageKind.optional(),
        since: z.iso.datetime().optional(),
        until: z.iso.datetime().optional(),
        q: z.string().min(1).max(200).optional().describe('Text contains (case-insensitive for ASCII)'),
      }),
      response: pageSchema(MessageView), responseName: 'MessagePage',
      handler: (ctx) => {
        const q = ctx.query;
        const interface_id = interfaces.idForFilter(q.interface, 'query.interface');
        const rows = store.list({ direction: q.direction, interface_id, kind: q.kind, since: q.since, until: q.until, q: q.q, before_id: decodeCursor(q.cursor) }, q.limit + 1);
        return pageReply(ctx, rows.map(messageView), q.limit);
      },
    }),
    route({
      method: 'DELETE', path: '/api/messages', summary: 'Clear local history only: nothing is unsent, deliveries in flight go on, the hub keeps its copy', tags, roles: ADMIN,
      response: z.object({ deleted: z.number().int() }), responseName: 'MessagesCleared',
      handler: () => ({ deleted: store.deleteAll() }),
    }),
    route({
      method: 'GET', path: '/api/messages/stats', summary: 'Message counts by direction, kind and interface', tags, roles: ANY_KEY,
      response: z.object({ total: z.number().int(), by_direction: z.record(z.string(), z.number()), by_kind: z.record(z.string(), z.number()), by_interface: z.record(z.string(), z.number()) }),
      responseName: 'MessageStats',
      handler: () => store.stats(),
    }),
    route({
      method: 'POST', path: '/api/messages/send', summary: 'Put a message into the router: the access rules choose the bearer (no dry run)', tags, roles: ADMIN, status: 202,
      body: SendBody, bodyName: 'SendMessage', response: Accepted, responseName: 'MessageAccepted', errors: [429],
      handler: ({ body }) => {
        limiter.take();
        return answer(
          pipeline.ingest({
            direction: 'outbound', interfaceId: null, from: 'local', to: body.to, channel: body.channel,
            kind: body.text !== undefined ? 'text' : 'data', text: body.text ?? null,
            payload: body.payload_b64 !== undefined ? Buffer.from(body.payload_b64, 'base64') : null,
          }),
        );
      },
    }),
    route({
      method: 'POST', path: '/api/messages/send-to-contact', summary: 'Send text to a named contact; rules see the destination as @contact', tags, roles: ADMIN, status: 202,
      body: z.strictObject({ contact: z.string().min(1), text: z.string().min(1).max(65536), channel: Channel }), bodyName: 'SendToContact',
      response: Accepted, responseName: 'MessageAccepted', errors: [429],
      handler: ({ body }) => {
        limiter.take();
        const contact = contacts.store.find(body.contact.replace(/^@/, ''));
        if (!contact) throw badRequest(`no contact '${body.contact}'`, [{ path: 'body.contact', message: `no contact '${body.contact}'` }]);
        return answer(pipeline.ingest({ direction: 'outbound', interfaceId: null, from: 'local', to: `@${contact.name}`, channel: body.channel, kind: 'text', text: body.text, payload: null }));
      },
    }),
    route({
      method: 'POST', path: '/api/messages/simulate-mesh-rx',
      summary: 'Inject a message as if heard on a mesh interface; it takes the real path, so a matching forward rule to a paid bearer really sends', tags, roles: ADMIN, status: 202,
      body: z.strictObject({ from: Address, to: Address.default('broadcast'), channel: Channel, text: z.string().min(1).max(65536), interface: z.string().min(1).optional() }),
      bodyName: 'SimulateMeshRx', response: Accepted, responseName: 'MessageAccepted', errors: [429],
      handler: ({ body }) => {
        // It can really send to a paid bearer, so it spends the same budget as send.
        limiter.take();
        const meshy = (k: string) => driverFor(k)?.meshTraffic === true;
        let iface = body.interface ? interfaces.find(body.interface) : interfaces.list().find((i) => meshy(i.kind));
        if (body.interface && !iface) throw badRequest(`no interface '${body.interface}'`, [{ path: 'body.interface', message: 'no such interface' }]);
        if (!iface) throw badRequest('there is no meshtastic or sim interface to receive on; create one first', [{ path: 'body.interface', message: 'no mesh interface exists' }]);
        if (!meshy(iface.kind)) throw badRequest(`interface '${iface.name}' is a ${iface.kind} interface; simulate-mesh-rx takes a meshtastic or sim interface`, [{ path: 'body.interface', message: 'not a mesh interface' }]);
        if (!iface.enabled) throw badRequest(`interface '${iface.name}' is disabled: it accepts no inbound traffic`, [{ path: 'body.interface', message: 'interface disabled' }]);
        return answer(pipeline.ingest({ direction: 'inbound', interfaceId: iface.id, from: body.from, to: body.to, channel: body.channel, kind: 'text', text: body.text, payload: null, meta: { simulated: true } }));
      },
    }),
    route({
      method: 'GET', path: '/api/messages/{id}', summary: 'One message', tags, roles: ANY_KEY, params: z.object({ id: z.string().min(1) }),
      response: MessageView, responseName: 'Message',
      handler: ({ params }) => {
        const m = store.get(params.id);
        if (!m) throw notFound('message', params.id);
        return messageView(m);
      },
    }),
  ];
}

