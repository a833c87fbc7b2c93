import { z } from 'zod';
import { PageQuery, pageSchema } from '../../http/paging.ts';
import { ANY_KEY, Reply, route, type Route } from '../../http/route.ts';
import { badRequest } from '../../lib/errors.ts';
import { TOPIC_SEGMENT } from '../../hubwire/topics.ts';
import { tenantOf } from '../keys/routes.ts';
import type { BridgeRow, HubStore } from '../store/store.ts';

// GET /api/devices (docs/api.md 4.1: any valid key): the tenant's bridges as learned over MQTT
// (src/hub/ingest): online state from the retained status, version and interfaces from hello.
// Paged like the bridge's lists (src/http/paging.ts, docs/design.md section 5): ?limit= (default
// 100, at most 1000) and ?cursor=, answered as {items, next_cursor} with a Link rel="next".
// The order is bridge_id, the table's key, so the cursor is the last bridge id of the page.

const Device = z.object({
  bridge_id: z.string(),
  online: z.boolean(),
  state: z.enum(['online', 'offline', 'unknown']).describe('unknown: seen, but no status received yet'),
  session: z.number().int().describe('The bridge\'s boot counter from its last status'),
  last_seen: z.iso.datetime().describe('When the hub last received anything from the bridge'),
  first_seen: z.iso.datetime(),
  version: z.string().nullable(),
  interfaces: z.array(z.unknown()).describe('As the bridge announced them in its last hello'),
});

const ListQuery = z.strictObject({ ...PageQuery });

/** The cursor is the last bridge id of the page, base64url-encoded. */
function afterBridge(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!TOPIC_SEGMENT.test(id)) throw badRequest('query.cursor is not a cursor this API gave out', [{ path: 'query.cursor', message: 'unknown cursor' }]);
  return id;
}

function deviceView(b: BridgeRow): z.infer<typeof Device> {
  return {
    bridge_id: b.bridge_id,
    online: b.state === 'online',
    state: b.state,
    session: b.session,
    last_seen: b.last_seen,
    first_seen: b.first_seen,
    version: b.version,
    interfaces: b.interfaces,
  };
}

export function deviceRoutes(store: HubStore): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/devices',
      summary: 'The tenant\'s bridges with online state, last_seen, version and interfaces, by bridge_id, a page at a time',
      tags: ['devices'],
      roles: ANY_KEY,
      query: ListQuery,
      response: pageSchema(Device),
      responseName: 'DevicePage',
      handler: async (ctx) => {
        const { limit, cursor } = ctx.query;
        const rows = await store.listBridges(tenantOf(ctx.principal), { afterId: afterBridge(cursor), limit: limit + 1 });
        const items = rows.slice(0, limit).map(deviceView);
        const next = rows.length > limit ? Buffer.from(items[items.length - 1].bridge_id, 'utf8').toString('base64url') : null;
        return new Reply(200, { items, next_cursor: next }, next ? { Link: `<${ctx.urlWith({ cursor: next })}>; rel="next"` } : {});
      },
    }),
  ];
}
