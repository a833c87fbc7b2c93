import { z } from 'zod';
import { defineDriver } from '../driver-module.ts';
import { simRoutes } from './routes.ts';
import { createSimBearer, SIM_BEHAVIOURS, SIM_DEFAULT_MTU, SimSettings } from './sim-bearer.ts';

// The built-in `sim` bearer as a driver module: the smallest complete example of a kind
// (docs/architecture.md, "Adding a driver"). It carries mesh traffic, so it shares the mesh
// contact address with Meshtastic and simulate-mesh-rx may inject on it. Its one route takes
// an interface's link down and up (routes.ts).

const SimStats = z.object({
  sent: z.number().int().describe('Frames this bearer sent'),
  failed: z.number().int().describe('Sends that failed (a fail behaviour, the link down, or larger than the mtu)'),
  received: z.number().int().describe('Frames heard from other sim bearers on the channel'),
  channel: z.string().nullable().describe('The sim:// channel, null when not started'),
  behaviour: z.enum(SIM_BEHAVIOURS),
  mtu: z.number().int().describe('bytes'),
});

export const simDriver = defineDriver({
  kind: 'sim',
  title: 'sim',
  settings: SimSettings as unknown as z.ZodType<Record<string, unknown>>,
  contact: { field: 'mesh' },
  meshTraffic: true,
  create: createSimBearer,
  routes: (api) => simRoutes(api),
  // The `mtu` setting is the MTU a stopped sim interface would have when started.
  idleMtu: (settings) => (typeof settings.mtu === 'number' ? settings.mtu : SIM_DEFAULT_MTU),
  stats: {
    schema: SimStats,
    // Zeros and the settings while no bearer runs (disabled or unbound).
    read: (raw, settings) => SimStats.parse({ sent: 0, failed: 0, received: 0, channel: null, behaviour: settings.behaviour ?? 'deliver', mtu: settings.mtu ?? SIM_DEFAULT_MTU, ...raw }),
  },
});
