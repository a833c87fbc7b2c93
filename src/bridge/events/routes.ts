import { z } from 'zod';
import { ANY_KEY, HANDLED, route, type Route } from '../../http/route.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { EVENT_TYPES, type EventFeed } from './feed.ts';
import { serveStream } from './stream.ts';

// GET /api/events (docs/events.md): the bridge's events as Server-Sent Events, for `curl -N`
// and a browser's EventSource. Filters in the query; resume with the Last-Event-ID header (or
// `last_event_id`, for clients that cannot set headers).

const Query = z.strictObject({
  types: z.string().regex(new RegExp(`^(${EVENT_TYPES.join('|')})(,(${EVENT_TYPES.join('|')}))*$`), `must be a comma-separated list of ${EVENT_TYPES.join(', ')}`).optional()
    .describe(`Only these event types (comma-separated: ${EVENT_TYPES.join(', ')}); default all`),
  interface: z.string().min(1).max(200).optional().describe('Only events of this interface (id or name)'),
  kind: z.enum(['text', 'position', 'telemetry', 'data']).optional().describe('Only message and delivery events of messages of this kind'),
  access_token: z.string().max(200).optional().describe('The API key, for clients that cannot send the Authorization header (a browser\'s EventSource); prefer the header: a URL may end up in a proxy\'s log'),
  last_event_id: z.string().regex(/^\d{1,15}$/, 'must be an event id').optional().describe('Resume after this event (the Last-Event-ID header wins)'),
});

export function eventRoutes(deps: { feed: EventFeed; clock: Clock; interfaceId: (ref: string) => string }): Route[] {
  return [
    route({
      method: 'GET', path: '/api/events', tags: ['events'], roles: ANY_KEY, keyInQuery: 'access_token', query: Query, produces: 'text/event-stream', errors: [503],
      summary: 'The bridge\'s events as they happen (Server-Sent Events: messages, deliveries, interfaces, configuration), with resume',
      handler: (ctx) => {
        const header = ctx.req.headers['last-event-id'];
        const resume = (typeof header === 'string' && /^\d{1,15}$/.test(header.trim()) ? header.trim() : undefined) ?? ctx.query.last_event_id;
        const filter = {
          types: ctx.query.types ? new Set(ctx.query.types.split(',')) : null,
          interfaceId: ctx.query.interface !== undefined ? deps.interfaceId(ctx.query.interface) : null,
          kind: ctx.query.kind ?? null,
        };
        let close: ((reason: string) => void) | null = null;
        const slot = deps.feed.openStream((reason) => close?.(reason));
        if (!slot) {
          throw new AppError('ERR_TOO_MANY_STREAMS', 503, `${deps.feed.streams} clients follow /api/events already (bridge.events.max_streams); try again later`, { headers: { 'Retry-After': '10' } });
        }
        close = serveStream(ctx.res, {
          feed: deps.feed, clock: deps.clock, filter, lastEventId: resume === undefined ? null : Number(resume),
          onEnd: (reason) => {
            slot.release();
            ctx.log.debug('event_stream_closed', { reason });
          },
        });
        return HANDLED;
      },
    }),
  ];
}
