import { z } from 'zod';
import type { BearerFactory } from '../../bearers/bearer.ts';
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

const Unspecified = z.record(z.string(), z.unknown()).describe('Settings of a kind whose driver is not in this release yet: stored as given');

export const kinds: Record<InterfaceKind, KindSpec> = {
  sim: { settings: SimSettings as unknown as z.ZodType<Record<string, unknown>>, bearer: createSimBearer, contactField: 'mesh' },
  meshtastic: { settings: Unspecified, contactField: 'mesh' },
  rnode: { settings: Unspecified, contactField: 'rnode' },
  iridium: { settings: Unspecified, contactField: 'iridium' },
  sms: { settings: Unspecified, contactField: 'sms' },
};

/** Lets a driver module plug in its kind (the RNode driver registers itself here). */
export function registerKind(kind: InterfaceKind, spec: KindSpec): void {
  kinds[kind] = spec;
}
