import { z } from 'zod';
import { defineDriver } from '../driver-module.ts';
import { iridiumEstimate, IRIDIUM_CREDITS } from './estimate.ts';
import { lazyOpenSim, lazySimulator } from '../shared/simulators/lazy.ts';
import { IRIDIUM_SIM_OPTIONS, IRIDIUM_SIM_USAGE } from './simulator/usage.ts';
import { createIridiumBearer } from './driver.ts';
import { IridiumSettings } from './settings.ts';
import { iridiumStats } from './stats.ts';

// The Iridium SBD satellite modem (9602, 9603, RockBLOCK; docs/iridium.md, wire facts
// docs/protocols/iridium-sbd.md) as a driver module, on the shared AT session (bearers/shared/at/).
// No probe: `auto` never claims a satellite modem, so an iridium interface is bound by its
// by-id path or USB serial. The serial speed is the interface's `baud` setting.

export const iridiumDriver = defineDriver({
  kind: 'iridium',
  title: 'Iridium',
  keepsUnstoredFrames: true,
  tellsTime: "the Iridium network's time, read with AT-MSSTM",
  settings: IridiumSettings as unknown as z.ZodType<Record<string, unknown>>,
  contact: {
    field: 'iridium',
    schema: z.string().trim().regex(/^(gateway|RB[0-9]{1,7})$/, 'must be "gateway" or "RB" and a RockBLOCK serial number, e.g. RB0001234'),
    description: 'Iridium destination: "gateway" (the provider delivers it) or a RockBLOCK, "RB" and its serial number',
  },
  create: (ctx) => createIridiumBearer(ctx, { openLink: ctx.openLink }),
  baudRate: (settings) => (typeof settings.baud === 'number' ? settings.baud : 19200),
  // The simulators load when used: bearers/shared/simulators/lazy.ts.
  openSim: lazyOpenSim(async () => (await import('./simulator/link.ts')).openIridiumSimLink),
  simulator: lazySimulator({ usage: IRIDIUM_SIM_USAGE, options: IRIDIUM_SIM_OPTIONS }, async () => (await import('./simulator/cli.ts')).iridiumSimulator),
  stats: iridiumStats,
  estimate: iridiumEstimate,
  usageUnit: IRIDIUM_CREDITS,
});
