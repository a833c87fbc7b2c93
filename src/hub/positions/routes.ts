import { z } from 'zod';
import { pointCollection, pointCollectionSchema } from '../../http/geojson.ts';
import { ANY_KEY, route, type Route } from '../../http/route.ts';
import type { Clock } from '../../lib/clock.ts';
import { TOPIC_SEGMENT } from '../../hubwire/topics.ts';
import { tenantOf } from '../keys/routes.ts';
import type { HubPositionRow, HubStore } from '../store/store.ts';

// GET /api/positions on the hub (docs/hub.md, "Positions"): the last position of every node the
// tenant's bridges reported over their uplinks, one per node and bridge, as JSON or as the same
// GeoJSON FeatureCollection the bridge answers with (http/geojson.ts). The fields are the
// bridge's where the hub knows them; a node's name and network are not in the events.

const MAX_NODES = 5000;

const HubPositionView = z.object({
  bridge_id: z.string().describe('The bridge that reported it'),
  node_id: z.string().describe('The node\'s id on its network, as the bridge names it'),
  latitude: z.number(),
  longitude: z.number(),
  altitude_m: z.number().nullable(),
  fix_time: z.string().nullable().describe('When the fix was taken, as the node said; null when it did not say'),
  age_s: z.number().int().nullable().describe('Seconds since the fix (or, without a fix time, since the bridge heard it)'),
  heard_at: z.string().nullable().describe('When the bridge heard this position'),
  interface_id: z.string().nullable().describe('The bridge\'s interface (bearer) that heard it'),
  interface_name: z.string().nullable().describe('Its name as the bridge announced it last; null when unknown'),
});
type HubPositionView = z.infer<typeof HubPositionView>;

const PositionCollection = pointCollectionSchema(HubPositionView).describe('GeoJSON (RFC 7946): one Point per node and bridge, its id "<bridge_id>/<node_id>"');

const ListQuery = z.strictObject({
  bridge: z.string().regex(TOPIC_SEGMENT).optional().describe('Only the positions this bridge reported'),
  node: z.string().min(1).max(128).optional().describe('Only this node (as reported by each bridge that heard it)'),
  limit: z.coerce.number().int().min(1).max(MAX_NODES).default(1000).describe(`At most this many, by bridge and node id (1-${MAX_NODES})`),
});

export function hubPositionRoutes(store: HubStore, clock: Clock): Route[] {
  const tags = ['positions'];
  const list = async (tenant: string, q: z.infer<typeof ListQuery>): Promise<HubPositionView[]> => {
    const rows = await store.lastPositions(tenant, { bridgeId: q.bridge, nodeId: q.node }, q.limit);
    const names = await interfaceNames(store, tenant);
    const now = clock.now();
    return rows.map((r) => view(r, now, names.get(`${r.bridge_id}/${r.interface_id}`) ?? null));
  };
  return [
    route({
      method: 'GET', path: '/api/positions', summary: 'The last position of every node the tenant\'s bridges reported, per bridge, with its age and the interface that heard it', tags, roles: ANY_KEY,
      query: ListQuery, response: z.object({ items: z.array(HubPositionView) }), responseName: 'HubPositions',
      handler: async (ctx) => ({ items: await list(tenantOf(ctx.principal), ctx.query) }),
    }),
    route({
      method: 'GET', path: '/api/positions/geojson', summary: 'The same positions as a GeoJSON FeatureCollection, for any map', tags, roles: ANY_KEY,
      query: ListQuery, response: PositionCollection, responseName: 'HubPositionsGeoJson',
      handler: async (ctx) => pointCollection(await list(tenantOf(ctx.principal), ctx.query), (p) => `${p.bridge_id}/${p.node_id}`),
    }),
  ];
}

/** "<bridge id>/<interface id>" -> the interface's name, from the bridges' last hellos. */
async function interfaceNames(store: HubStore, tenant: string): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const b of await store.listBridges(tenant)) {
    for (const i of b.interfaces) {
      const { id, name } = (i ?? {}) as { id?: unknown; name?: unknown };
      if (typeof id === 'string' && typeof name === 'string') names.set(`${b.bridge_id}/${id}`, name);
    }
  }
  return names;
}

function view(r: HubPositionRow, now: number, interfaceName: string | null): HubPositionView {
  const fix = r.fix_time !== null && Number.isFinite(Date.parse(r.fix_time)) ? Date.parse(r.fix_time) : null;
  const heard = r.heard_at ? Date.parse(r.heard_at) : NaN;
  const at = fix ?? (Number.isFinite(heard) ? heard : null);
  return {
    bridge_id: r.bridge_id, node_id: r.node_id, latitude: r.latitude, longitude: r.longitude, altitude_m: r.altitude_m, fix_time: r.fix_time,
    age_s: at === null ? null : Math.max(0, Math.floor((now - at) / 1000)), heard_at: r.heard_at || null, interface_id: r.interface_id, interface_name: interfaceName,
  };
}
