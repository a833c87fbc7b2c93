import { z } from 'zod';
import { ANY_KEY, route, type Route } from '../../http/route.ts';
import { tenantOf } from '../keys/routes.ts';
import type { HubStore } from '../store/store.ts';

// GET /api/devices (docs/api.md 4.1: any valid key): the tenant's bridges as learned over MQTT
// (src/hub/ingest): online state from the retained status, version and interfaces from hello.

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
const DeviceList = z.object({ items: z.array(Device) });

export function deviceRoutes(store: HubStore): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/devices',
      summary: 'The tenant\'s bridges with online state, last_seen, version and interfaces',
      tags: ['devices'],
      roles: ANY_KEY,
      response: DeviceList,
      responseName: 'DeviceList',
      handler: async ({ principal }) => ({
        items: (await store.listBridges(tenantOf(principal))).map((b) => ({
          bridge_id: b.bridge_id,
          online: b.state === 'online',
          state: b.state,
          session: b.session,
          last_seen: b.last_seen,
          first_seen: b.first_seen,
          version: b.version,
          interfaces: b.interfaces,
        })),
      }),
    }),
  ];
}
