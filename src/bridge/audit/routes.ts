import { z } from 'zod';
import { ADMIN, Reply, route, type Route } from '../../http/route.ts';
import { badRequest } from '../../lib/errors.ts';
import type { AuditStore } from './store.ts';

const Entry = z.object({
  id: z.number().int(),
  at: z.iso.datetime(),
  key_id: z.string().nullable(),
  method: z.string(),
  path: z.string(),
  status: z.number().int(),
  request_id: z.string(),
});

export function auditRoutes(store: AuditStore): Route[] {
  return [
    route({
      method: 'GET', path: '/api/audit', summary: 'Audit log of every mutating API call, newest first', tags: ['audit'], roles: ADMIN,
      query: z.strictObject({
        limit: z.coerce.number().int().min(1).max(1000).default(100),
        cursor: z.string().regex(/^\d+$/, 'must be a cursor from next_cursor').optional(),
      }),
      response: z.object({ items: z.array(Entry), next_cursor: z.string().nullable() }), responseName: 'AuditPage',
      handler: (ctx) => {
        const { limit, cursor } = ctx.query;
        if (cursor !== undefined && Number(cursor) < 1) throw badRequest('query.cursor is not a cursor this API gave out');
        const rows = store.list(limit + 1, cursor === undefined ? undefined : Number(cursor));
        const items = rows.slice(0, limit);
        const next = rows.length > limit ? String(items[items.length - 1].id) : null;
        return new Reply(200, { items, next_cursor: next }, next ? { Link: `<${ctx.urlWith({ cursor: next })}>; rel="next"` } : {});
      },
    }),
  ];
}
