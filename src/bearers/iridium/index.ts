import { z } from 'zod';
import { defineDriver, unspecifiedSettings } from '../driver-module.ts';

// The Iridium SBD satellite modem (docs/protocols/iridium-sbd.md). No driver in this release
// yet: the kind can be configured, and binding it reports "no driver".

export const iridiumDriver = defineDriver({
  kind: 'iridium',
  title: 'Iridium',
  settings: unspecifiedSettings,
  contact: { field: 'iridium', schema: z.string().trim().min(1).max(200), description: 'Iridium/RockBLOCK destination' },
});
