import { z } from 'zod';
import type { BearerFactory } from '../../bearers/bearer.ts';
import { createRNodeBearer } from '../../bearers/rnode/driver.ts';
import { rnodeProbe } from '../../bearers/rnode/probe.ts';
import { crossFieldErrors, rnodeSettingsSchema } from '../../bearers/rnode/radio.ts';
import { openLink } from '../../bearers/links/open-link.ts';
import { openRNodeSimLink } from '../../bearers/simulators/rnode/link.ts';
import { createSimBearer, SimSettings } from '../../bearers/sim/sim-bearer.ts';

// Interface kinds (DESIGN.md section 6): each names its settings schema and, when this
// release has a driver for it, the bearer factory. A kind without a driver can be created and
// configured (rules can name it), but binding it reports "no driver" instead of pretending.

export const INTERFACE_KINDS = ['meshtastic', 'rnode', 'iridium', 'sms', 'sim'] as const;
export type InterfaceKind = (typeof INTERFACE_KINDS)[number];

export interface KindSpec {
  settings: z.ZodType<Record<string, unknown>>;
  bearer?: BearerFactory;
  /** Which contact address field a destination `@contact` uses on this kind. */
  contactField: 'mesh' | 'sms' | 'iridium' | 'rnode';
}

// RNode settings: the schema's fields plus the cross-field rules (a preset or all five radio
// fields; a beacon interval needs a callsign), every problem reported at once.
const RNodeSettings = rnodeSettingsSchema.superRefine((value, ctx) => {
  for (const e of crossFieldErrors(value)) ctx.addIssue({ code: 'custom', path: e.path.split('.'), message: e.message });
});

/** The RNode bearer over the device supervisor; `sim://<channel>` reaches the built-in RNode simulator. */
const rnodeBearer: BearerFactory = (ctx) =>
  createRNodeBearer(ctx, {
    openLink: (device) => openLink(device, { clock: ctx.clock, log: ctx.log, owner: ctx.interfaceId, probe: rnodeProbe, openSim: (channel) => openRNodeSimLink(channel) }),
  });

const Unspecified = z.record(z.string(), z.unknown()).describe('Settings of a kind whose driver is not in this release yet: stored as given');

export const kinds: Record<InterfaceKind, KindSpec> = {
  sim: { settings: SimSettings as unknown as z.ZodType<Record<string, unknown>>, bearer: createSimBearer, contactField: 'mesh' },
  meshtastic: { settings: Unspecified, contactField: 'mesh' },
  rnode: { settings: RNodeSettings as unknown as z.ZodType<Record<string, unknown>>, bearer: rnodeBearer, contactField: 'rnode' },
  iridium: { settings: Unspecified, contactField: 'iridium' },
  sms: { settings: Unspecified, contactField: 'sms' },
};
