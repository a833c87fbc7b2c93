import { z } from 'zod';
import { defineDriver } from '../driver-module.ts';
import { lazyOpenSim, lazySimulator } from '../shared/simulators/lazy.ts';
import { RNODE_SIM_OPTIONS, RNODE_SIM_USAGE } from './simulator/usage.ts';
import { createRNodeBearer } from './driver.ts';
import { rnodeProbe } from './probe.ts';
import { crossFieldErrors, rnodeSettingsSchema } from './radio.ts';
import { rnodeRoutes, rnodeStats } from './routes.ts';
import { rnodeSeed } from './seed.ts';

// The RNode (LoRa, KISS framing; docs/protocols/rnode.md) as a driver module.

// The schema's fields plus the cross-field rules (a preset or all five radio fields; a beacon
// interval needs a callsign), every problem reported at once.
const RNodeSettings = rnodeSettingsSchema.superRefine((value, ctx) => {
  for (const e of crossFieldErrors(value)) ctx.addIssue({ code: 'custom', path: e.path.split('.'), message: e.message });
});

export const rnodeDriver = defineDriver({
  kind: 'rnode',
  // In `reticulum` mode the LXMF endpoint reports the peers it hears (lxmf/endpoint.ts).
  nodeNetwork: 'lxmf',
  title: 'RNode',
  // A raw LoRa frame is not acknowledged to anyone: a frame lost before it is stored is never sent again.
  framesNotRepeated: true,
  settings: RNodeSettings as unknown as z.ZodType<Record<string, unknown>>,
  contact: { field: 'rnode', schema: z.string().trim().min(1).max(200), description: 'Address on the RNode link' },
  create: (ctx) => createRNodeBearer(ctx, { openLink: ctx.openLink }),
  probe: rnodeProbe,
  // The simulators load when used: bearers/shared/simulators/lazy.ts.
  openSim: lazyOpenSim(async () => (await import('./simulator/link.ts')).openRNodeSimLink),
  simulator: lazySimulator({ usage: RNODE_SIM_USAGE, options: RNODE_SIM_OPTIONS }, async () => (await import('./simulator/cli.ts')).rnodeSimulator),
  stats: rnodeStats,
  routes: rnodeRoutes,
  seed: rnodeSeed,
});
