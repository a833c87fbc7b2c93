import { z } from 'zod';
import { decodeCursor, PageQuery, pageReply, pageSchema } from '../../http/paging.ts';
import { ADMIN, ANY_KEY, Reply, route, type Route } from '../../http/route.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import type { BookService } from '../contacts/service.ts';
import type { FallbackService } from '../engine/fallback.ts';
import { PrecedenceSchema } from '../engine/precedence.ts';
import { DEFAULT_ACK_WITHIN_S, FallbackMember, FallbackStrategy } from '../rules/match.ts';
import { DeliveryApiView, deliveryApiView } from '../deliveries/view.ts';
import { isoTimeQuery, strictQuery } from '../../http/query.ts';
import { driverFor } from '../../bearers/drivers.ts';
import type { InterfaceService } from '../interfaces/service.ts';
import type { IngestResult, Pipeline } from '../engine/pipeline.ts';
import { Channel, DeliveryOptions, meshRxInput, refineTtl, SendBody, sendInput, SimulateBody, ttlMsOf } from './ingress.ts';
import type { SendRateLimiter } from './rate-limit.ts';
import type { MessageStore } from '../engine/message-store.ts';
import type { UsageStore } from './usage.ts';
import type { PreviewService } from '../preview/service.ts';
import { MessageKind, MessageView, messageView } from './view.ts';
import type { DeliveryRow } from '../engine/rows.ts';

// Messages (docs/api.md 4.6). send, send-to-contact and simulate-mesh-rx all enter the one pipeline,
// and a matching forward rule to a paid bearer really sends; POST /api/messages/preview
// (bridge/preview/) asks the same decision code without sending.


const OneAccepted = z.object({
  message: MessageView, deliveries: z.array(DeliveryApiView),
  warnings: z.array(z.string()).optional().describe('Deliveries that cannot go out as their interfaces are set now (a text longer than the interface takes, an address its kind cannot use), in the words of the preview: each fails unless a setting changes before it is sent'),
});
// An inbound transform that splits a message (split) gives several messages: then {items}.
const Accepted = z.union([OneAccepted, z.object({ items: z.array(OneAccepted).describe('One per part, when an inbound transform split the message') })]);

// The history filters: GET /api/messages lists what they select, DELETE deletes it.
const HistoryFilters = {
  direction: z.enum(['inbound', 'outbound']).optional(),
  interface: z.string().min(1).optional().describe('Interface id or name'),
  kind: MessageKind.optional(),
  since: isoTimeQuery('since').optional().describe('Created at or after (a date is midnight UTC)'),
  until: isoTimeQuery('until').optional().describe('Created before (exclusive; a date is midnight UTC)'),
  q: z.string().min(1).max(200).optional().describe('Text contains (case-insensitive for ASCII)'),
};

/** A contact's addresses, in its preferred order, on every enabled interface that takes each
 *  address family (by interface name): the members of a fallback list (docs/routing.md). */
function contactRoute(name: string, addresses: Record<string, string>, strategy: z.infer<typeof FallbackStrategy>, ackWithinS: number | undefined, keepTrying: boolean, interfaces: InterfaceService) {
  const rows = interfaces.list().filter((i) => i.enabled).sort((a, b) => (a.name < b.name ? -1 : 1));
  const members = Object.entries(addresses).flatMap(([field, to]) =>
    rows.filter((i) => driverFor(i.kind)?.contact.field === field).map((i) => ({ interface: i.id, to, ...(ackWithinS ? { ack_within_s: ackWithinS } : {}) })),
  );
  if (members.length === 0) {
    throw badRequest(`no enabled interface takes any address of contact '${name}' (${Object.keys(addresses).join(', ')})`, [{ path: 'body.contact', message: 'no interface for its addresses' }]);
  }
  const fields = Object.keys(addresses).join(', then ');
  return { destinations: [{ fallback: members.slice(0, 8), strategy, keep_trying: keepTrying }], reason: `send-to-contact '${name}' with strategy ${strategy}: ${fields}` };
}


export function messageRoutes(deps: {
  store: MessageStore; usage: Pick<UsageStore, 'list'>; pipeline: Pipeline; interfaces: InterfaceService; contacts: BookService<Record<string, string>>; limiter: SendRateLimiter;
  fallbacks: Pick<FallbackService, 'cancelMessage'>; preview: Pick<PreviewService, 'deliveryProblems'>;
}): Route[] {
  const { store, usage, pipeline, interfaces, contacts, limiter, fallbacks, preview } = deps;
  const tags = ['messages'];
  // Deliveries answer what they wait for, from their interface now (docs/api.md 2.5).
  const delivery = (d: DeliveryRow) => deliveryApiView(d, (id) => interfaces.waitingFor(id), (id) => interfaces.find(id)?.name);
  const accepted = (r: IngestResult) => {
    const warnings = r.deliveries.flatMap((d) => preview.deliveryProblems(d).map((problem) => `delivery ${d.id} to ${d.to} on interface ${interfaces.find(d.interface_id)?.name ?? d.interface_id} (${d.interface_id}) will fail: ${problem}`));
    return { message: messageView(r.message), deliveries: r.deliveries.map(delivery), ...(warnings.length > 0 ? { warnings } : {}) };
  };
  const answer = (results: IngestResult[]) => (results.length === 1 ? new Reply(202, accepted(results[0])) : new Reply(202, { items: results.map(accepted) }));
  return [
    route({
      method: 'GET', path: '/api/messages', summary: 'Message history, newest first', tags, roles: ANY_KEY,
      query: strictQuery({ ...PageQuery, ...HistoryFilters }),
      response: pageSchema(MessageView), responseName: 'MessagePage',
      handler: (ctx) => {
        const q = ctx.query;
        const interface_id = interfaces.idForFilter(q.interface, 'query.interface');
        const rows = store.list({ direction: q.direction, interface_id, kind: q.kind, since: q.since, until: q.until, q: q.q, before_id: decodeCursor(q.cursor) }, q.limit + 1);
        return pageReply(ctx, rows.map(messageView), q.limit);
      },
    }),
    route({
      method: 'DELETE', path: '/api/messages',
      summary: 'Clear local history, all of it or what the filters select (before, and the filters of GET): nothing is unsent, deliveries in flight go on, the hub keeps its copy', tags, roles: ADMIN,
      // Filters the handler does not read would delete everything: the query is strict.
      query: strictQuery({ before: isoTimeQuery('before').optional().describe('Only messages created before this time (exclusive); the same as until'), ...HistoryFilters }),
      response: z.object({ deleted: z.number().int() }), responseName: 'MessagesCleared',
      handler: ({ query: q }) => {
        const interface_id = interfaces.idForFilter(q.interface, 'query.interface');
        // before and until mean the same; both given, the earlier counts.
        const until = [q.before, q.until].filter((t) => t !== undefined).sort()[0];
        return { deleted: store.deleteWhere({ direction: q.direction, interface_id, kind: q.kind, since: q.since, until, q: q.q }) };
      },
    }),
    route({
      method: 'GET', path: '/api/messages/stats', summary: 'Message counts by direction, kind and interface; what was sent per interface and day (frames, bytes, SMS parts, Iridium credits)', tags, roles: ANY_KEY,
      response: z.object({
        total: z.number().int(), by_direction: z.record(z.string(), z.number()), by_kind: z.record(z.string(), z.number()),
        by_interface: z.record(z.string(), z.number()).describe('By interface name (the id for an interface deleted since); "(none)": sent through the API'),
        by_interface_id: z.record(z.string(), z.number()).describe('The same counts by interface id'),
        usage: z.array(z.object({
          day: z.string().describe('UTC date, YYYY-MM-DD'),
          interface_id: z.string(), interface: z.string().describe('Its name (the id for an interface deleted since)'), kind: z.string().nullable(),
          deliveries: z.number().int().describe('Deliveries delivered'),
          frames: z.number().int().describe('Frames handed to the bearer (after the outbound transforms)'),
          bytes: z.number().int().describe('Bytes of those frames (an Iridium frame with its RockBLOCK prefix)'),
          sms_parts: z.number().int().describe('SMS parts (sms interfaces)'),
          iridium_credits: z.number().int().describe('Iridium credits (iridium interfaces)'),
          money: z.null().describe('Always null: interface settings carry no prices yet'),
        })).describe('What was sent, per interface and UTC day, newest day first (docs/api.md 4.6)'),
      }),
      responseName: 'MessageStats',
      handler: () => ({
        ...store.stats(),
        // The answer names the billing units of this API version as fields (0 for an interface
        // that spent none); the store keeps every unit a kind declares.
        usage: usage.list().map((u) => {
          const row = interfaces.find(u.interface_id);
          return { day: u.day, interface_id: u.interface_id, interface: row?.name ?? u.interface_id, kind: row?.kind ?? null, deliveries: u.deliveries, frames: u.frames, bytes: u.bytes, sms_parts: u.units.sms_parts ?? 0, iridium_credits: u.units.iridium_credits ?? 0, money: null };
        }),
      }),
    }),
    route({
      method: 'POST', path: '/api/messages/send', summary: 'Put a message into the router: the access rules choose the bearer (POST /api/messages/preview shows what would happen)', tags, roles: ADMIN, status: 202,
      body: SendBody, bodyName: 'SendMessage', response: Accepted, responseName: 'MessageAccepted', errors: [429],
      handler: ({ body }) => {
        limiter.take();
        return answer(pipeline.ingest(sendInput(body)));
      },
    }),
    route({
      method: 'POST', path: '/api/messages/send-to-contact',
      summary: 'Send text to a named contact: without strategy the rules see the destination as @contact; with one, the contact\'s addresses in its preferred order become a fallback list', tags, roles: ADMIN, status: 202,
      body: z.strictObject({
        contact: z.string().min(1), text: z.string().min(1).max(65536), channel: Channel,
        strategy: FallbackStrategy.optional().describe('Try the contact\'s addresses in its preferred order (prefer) on every enabled interface of their kind, instead of asking the rules'),
        ack_within_s: FallbackMember.shape.ack_within_s.describe(`With strategy ordered: seconds each member has to be delivered (default ${DEFAULT_ACK_WITHIN_S})`),
        keep_trying: z.boolean().optional(),
        ...DeliveryOptions,
      }).superRefine(refineTtl),
      bodyName: 'SendToContact', response: Accepted, responseName: 'MessageAccepted', errors: [429],
      handler: ({ body }) => {
        limiter.take();
        const contact = contacts.store.find(body.contact.replace(/^@/, ''));
        if (!contact) throw badRequest(`no contact '${body.contact}'`, [{ path: 'body.contact', message: `no contact '${body.contact}'` }]);
        const route = body.strategy ? contactRoute(contact.name, contact.value, body.strategy, body.ack_within_s, body.keep_trying ?? false, interfaces) : undefined;
        return answer(pipeline.ingest({
          direction: 'outbound', interfaceId: null, from: 'local', to: `@${contact.name}`, channel: body.channel, kind: 'text', text: body.text, payload: null,
          precedence: body.precedence, ttlMs: ttlMsOf(body), route,
        }));
      },
    }),
    route({
      method: 'POST', path: '/api/messages/simulate-mesh-rx',
      summary: 'Inject a message as if heard on a mesh interface; it takes the real path, so a matching forward rule to a paid bearer really sends', tags, roles: ADMIN, status: 202,
      body: SimulateBody,
      bodyName: 'SimulateMeshRx', response: Accepted, responseName: 'MessageAccepted', errors: [429],
      handler: ({ body }) => {
        // It can really send to a paid bearer, so it spends the same budget as send.
        limiter.take();
        return answer(pipeline.ingest(meshRxInput(body, interfaces)));
      },
    }),
    route({
      method: 'POST', path: '/api/messages/{id}/cancel', summary: 'Stop every leg of a message: waiting or on the air, and its fallback lists (an SOS is stopped this way)', tags, roles: ADMIN,
      params: z.object({ id: z.string().min(1) }), body: z.strictObject({ reason: z.string().trim().min(1).max(500).optional() }).optional(), bodyName: 'CancelMessage',
      response: z.object({ message_id: z.string(), cancelled: z.array(DeliveryApiView) }), responseName: 'MessageCancelled',
      handler: ({ params, body }) => {
        const m = store.get(params.id);
        if (!m) throw notFound('message', params.id);
        const reason = `cancelled through the API${body?.reason ? `: ${body.reason}` : ''}`;
        return { message_id: m.id, cancelled: fallbacks.cancelMessage(m.id, reason).map(delivery) };
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

