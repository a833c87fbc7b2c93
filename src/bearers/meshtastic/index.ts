import { z } from 'zod';
import { defineDriver, unspecifiedSettings } from '../driver-module.ts';

// The Meshtastic mesh radio (docs/protocols/meshtastic.md). This release has no driver yet:
// an interface of this kind can be created, configured and named by rules, and binding it
// reports "no driver" instead of pretending.

export const meshtasticDriver = defineDriver({
  kind: 'meshtastic',
  title: 'Meshtastic',
  settings: unspecifiedSettings,
  contact: { field: 'mesh', schema: z.string().trim().min(1).max(200), description: 'Meshtastic node id, e.g. !a1b2c3d4' },
  meshTraffic: true,
  deviceSections: ['radio', 'owner', 'modules'],
});
