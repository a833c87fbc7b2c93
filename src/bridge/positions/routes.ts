import { z } from 'zod';
import { NODE_NETWORKS } from '../../bearers/drivers.ts';
import { coordinates, pointCollection, pointCollectionSchema } from '../../http/geojson.ts';
import { ANY_KEY, route, type Route } from '../../http/route.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import type { NodeStore } from '../engine/node-store.ts';
import type { InterfaceService } from '../interfaces/service.ts';
import type { LastPosition, PositionStore, TrackPoint } from './store.ts';

// Positions for a map (docs/api.md, "Positions"): the last known position of every node, with
// its age and the interface that reported it, and a node's track over a time range, as JSON or
// as GeoJSON (RFC 7946: longitude first, WGS84) that any map library opens.

const MAX_NODES = 5000;
const MAX_TRACK = 10_000;
const DAY_MS = 86_400_000;

const PositionView = z.object({
  node_id: z.string().describe('The node\'s id on its network'),
  network: z.enum(NODE_NETWORKS),
  name: z.string().nullable().describe('Its long name, else its short name'),
  latitude: z.number(),
  longitude: z.number(),
  altitude_m: z.number().nullable(),
  fix_time: z.string().nullable().describe('When the fix was taken, as the node said; null when it did not say'),
  age_s: z.number().int().nullable().describe('Seconds since the fix (or, without a fix time, since the node was last heard)'),
  last_heard_at: z.string().nullable(),
  interface_id: z.string().describe('The interface (bearer) that reported it last'),
  interface_name: z.string().nullable(),
});
type PositionView = z.infer<typeof PositionView>;

const PositionCollection = pointCollectionSchema(PositionView).describe('GeoJSON (RFC 7946): one Point per node');

const TrackView = z.object({
  latitude: z.number(), longitude: z.number(), altitude_m: z.number().nullable(),
  fix_time: z.string().nullable(), heard_at: z.string().describe('When the bridge heard it'), interface_id: z.string().nullable(),
});
const Track = z.object({
  node_id: z.string(), since: z.string(), until: z.string(),
  items: z.array(TrackView).describe('Oldest first'),
  truncated: z.boolean().describe(`More than ${MAX_TRACK} points (or the limit) in the range: the first ones are given`),
});
const TrackFeature = z.object({
  type: z.literal('Feature'), id: z.string(),
  geometry: z.object({ type: z.literal('LineString'), coordinates: z.array(z.array(z.number())) }),
  properties: z.object({ node_id: z.string(), times: z.array(z.string()).describe('heard_at of each point, in order'), truncated: z.boolean() }),
}).describe('GeoJSON (RFC 7946): the track as one LineString');

const ListQuery = z.strictObject({
  network: z.enum(NODE_NETWORKS).optional().describe('Only the nodes of this network'),
  interface: z.string().min(1).optional().describe('Only nodes reported last by this interface (id or name)'),
  limit: z.coerce.number().int().min(1).max(MAX_NODES).default(1000),
});
const TrackQuery = z.strictObject({
  since: z.iso.datetime({ offset: true }).optional().describe('Start of the range (default: a day before until)'),
  until: z.iso.datetime({ offset: true }).optional().describe('End of the range, not included (default: now)'),
  limit: z.coerce.number().int().min(1).max(MAX_TRACK).default(MAX_TRACK),
});
const NodeParam = z.object({ id: z.string().min(1).max(128).describe('A node id, or an id it had before') });

export interface PositionDeps {
  positions: PositionStore;
  nodes: NodeStore;
  interfaces: InterfaceService;
  now: () => number;
}

export function positionRoutes(d: PositionDeps): Route[] {
  const tags = ['positions'];
  const list = (q: z.infer<typeof ListQuery>) => {
    const interface_id = d.interfaces.idForFilter(q.interface, 'query.interface');
    const now = d.now();
    return d.positions.last({ network: q.network, interface_id }, q.limit).map((r) => view(r, now, d.interfaces));
  };
  const track = (id: string, q: z.infer<typeof TrackQuery>) => {
    const node = d.nodes.get(id);
    if (!node) throw notFound('node', id);
    const until = q.until ? new Date(q.until) : new Date(d.now());
    const since = q.since ? new Date(q.since) : new Date(until.getTime() - DAY_MS);
    if (since >= until) throw badRequest('query.since must be before query.until', [{ path: 'query.since', message: 'must be before until' }]);
    const ids = [node.node_id, ...d.nodes.identity.formerIds(node.node_id).map((f) => f.id)];
    const points = d.positions.track(ids, since.toISOString(), until.toISOString(), q.limit + 1);
    return { node_id: node.node_id, since: since.toISOString(), until: until.toISOString(), items: points.slice(0, q.limit), truncated: points.length > q.limit };
  };
  return [
    route({
      method: 'GET', path: '/api/positions', summary: 'The last known position of every node, with its age and the interface that reported it', tags, roles: ANY_KEY,
      query: ListQuery, response: z.object({ items: z.array(PositionView) }), responseName: 'Positions',
      handler: ({ query }) => ({ items: list(query) }),
    }),
    route({
      method: 'GET', path: '/api/positions/geojson', summary: 'The same positions as a GeoJSON FeatureCollection, for any map', tags, roles: ANY_KEY,
      query: ListQuery, response: PositionCollection, responseName: 'PositionsGeoJson',
      handler: ({ query }) => pointCollection(list(query), (p) => p.node_id),
    }),
    route({
      method: 'GET', path: '/api/positions/{id}/track', summary: 'A node\'s positions heard in a time range (its position messages, across renumbering)', tags, roles: ANY_KEY,
      params: NodeParam, query: TrackQuery, response: Track, responseName: 'Track',
      handler: ({ params, query }) => track(params.id, query),
    }),
    route({
      method: 'GET', path: '/api/positions/{id}/track/geojson', summary: 'The same track as a GeoJSON LineString', tags, roles: ANY_KEY,
      params: NodeParam, query: TrackQuery, response: TrackFeature, responseName: 'TrackGeoJson',
      handler: ({ params, query }) => {
        const t = track(params.id, query);
        return {
          type: 'Feature' as const, id: t.node_id,
          geometry: { type: 'LineString' as const, coordinates: t.items.map((p: TrackPoint) => coordinates(p.longitude, p.latitude, p.altitude_m)) },
          properties: { node_id: t.node_id, times: t.items.map((p: TrackPoint) => p.heard_at), truncated: t.truncated },
        };
      },
    }),
  ];
}

function view(r: LastPosition, now: number, interfaces: InterfaceService): PositionView {
  const p = r.position;
  const fix = p.time && Number.isFinite(Date.parse(p.time)) ? Date.parse(p.time) : null;
  const heard = r.last_heard_at ? Date.parse(r.last_heard_at) : NaN;
  const at = fix ?? (Number.isFinite(heard) ? heard : null);
  let interfaceName: string | null = null;
  try {
    interfaceName = interfaces.get(r.interface_id).name;
  } catch {
    interfaceName = null; // the interface was deleted since
  }
  return {
    node_id: r.node_id, network: r.network as PositionView['network'], name: r.long_name ?? r.short_name,
    latitude: p.latitude, longitude: p.longitude, altitude_m: p.altitude_m ?? null, fix_time: p.time ?? null,
    age_s: at === null ? null : Math.max(0, Math.floor((now - at) / 1000)), last_heard_at: r.last_heard_at, interface_id: r.interface_id, interface_name: interfaceName,
  };
}
