import { z } from 'zod';
import { NODE_NETWORKS } from '../../bearers/drivers.ts';
import { PageQuery, pageReply, pageSchema } from '../../http/paging.ts';
import { ANY_KEY, route, type Route } from '../../http/route.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import type { InterfaceService } from '../interfaces/service.ts';
import type { NodeStore } from '../engine/node-store.ts';
import type { NodeRow } from '../engine/rows.ts';

// The node database (docs/meshtastic.md, "Node database"): mesh nodes a radio heard or
// reported, newest report winning, kept across restarts. Read-only: the radios fill it.

/** A Meshtastic node id, the hex address of an LXMF destination or a MeshCore key prefix, or the
 *  uid a map client gives itself (ANDROID-..., a UUID): printable ASCII without spaces, not
 *  starting with '!', with a '-', '.', '_' or ':' in it (so a mesh id missing its '!' or in
 *  upper case is still refused as malformed). */
const NODE_ID = /^(?:![0-9a-f]{8}|[0-9a-f]{12,64}|(?!!)(?=[\x21-\x7e]*[-._:])[\x21-\x7e]{1,128})$/;

const NodeId = z.string().regex(NODE_ID, 'must be a node id: "!" and 8 lower-case hex digits (Meshtastic, e.g. !a1b2c3d4), 12 to 64 lower-case hex digits (an LXMF address, a MeshCore key prefix), or a map client\'s uid (1 to 128 printable characters without spaces, with a \'-\', \'.\', \'_\' or \':\')');

export const NodeView = z.object({
  id: z.string().describe('Node id: "!" and 8 hex digits (Meshtastic), 32 hex digits (an LXMF address) or a MeshCore public-key prefix'),
  network: z.enum(NODE_NETWORKS).describe('The mesh the node is on'),
  num: z.number().int().nullable().describe('Meshtastic node number; null on other meshes'),
  interface_id: z.string().describe('The interface whose radio reported it last'),
  long_name: z.string().nullable(),
  short_name: z.string().nullable(),
  hw_model: z.string().nullable(),
  role: z.string().nullable(),
  position: z.object({ latitude: z.number(), longitude: z.number(), altitude_m: z.number().optional(), time: z.string().optional() }).nullable().describe('Degrees (WGS84), metres'),
  device_metrics: z.object({
    battery_level_pct: z.number().optional(), voltage_v: z.number().optional(), channel_utilization_pct: z.number().optional(),
    air_util_tx_pct: z.number().optional(), uptime_s: z.number().optional(),
    time: z.string().optional().describe('When the node measured them, as it said'),
  }).nullable(),
  snr_db: z.number().nullable(),
  hops_away: z.number().int().nullable(),
  via_mqtt: z.boolean(),
  last_heard_at: z.string().nullable(),
  updated_at: z.string(),
  public_key: z.string().nullable().describe('The node\'s public key in base64 (a Meshtastic node\'s X25519 key from its NodeInfo); the bridge follows the node by it when its id changes. A contact may name the node by it'),
  former_ids: z.array(z.object({ id: z.string(), changed_at: z.string().describe('When the bridge saw the node come back under its next id') }))
    .describe('Ids the node had before, oldest first (a Meshtastic node renumbered by a firmware upgrade: the same key under a new number). Messages to a former id reach the node at its id'),
});

export function nodeView(r: NodeRow, store: NodeStore): z.infer<typeof NodeView> {
  const { node_id, ...rest } = r;
  return { id: node_id, ...rest, former_ids: store.identity.formerIds(node_id) };
}

const ListQuery = z.strictObject({
  ...PageQuery,
  interface: z.string().min(1).optional().describe('Interface id or name'),
  network: z.enum(NODE_NETWORKS).optional().describe('Only the nodes of this mesh'),
  q: z.string().min(1).max(100).optional().describe('Part of the long or short name, or of the node id'),
});

/** The cursor is the last node id of the page, base64url-encoded. */
function afterId(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!NODE_ID.test(id)) throw badRequest('query.cursor is not a cursor this API gave out', [{ path: 'query.cursor', message: 'unknown cursor' }]);
  return id;
}

export function nodeRoutes(store: NodeStore, interfaces: InterfaceService): Route[] {
  const tags = ['nodes'];
  return [
    route({
      method: 'GET', path: '/api/nodes', summary: 'Mesh nodes the radios heard or reported (Meshtastic nodes, LXMF peers, MeshCore contacts), by node id', tags, roles: ANY_KEY,
      query: ListQuery, response: pageSchema(NodeView), responseName: 'NodePage',
      handler: (ctx) => {
        const q = ctx.query;
        const interface_id = interfaces.idForFilter(q.interface, 'query.interface');
        const rows = store.list({ interface_id, network: q.network, q: q.q, after_id: afterId(q.cursor) }, q.limit + 1);
        return pageReply(ctx, rows.map((r) => nodeView(r, store)), q.limit);
      },
    }),
    route({
      method: 'GET', path: '/api/nodes/{id}', summary: 'One mesh node by its id (!a1b2c3d4, or an LXMF address), or by an id it had before', tags, roles: ANY_KEY,
      params: z.object({ id: NodeId }), response: NodeView, responseName: 'Node',
      handler: ({ params }) => {
        const row = store.get(params.id);
        if (!row) throw notFound('node', params.id);
        return nodeView(row, store);
      },
    }),
  ];
}
