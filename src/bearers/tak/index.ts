import { z } from 'zod';
import { defineDriver } from '../driver-module.ts';
import { createTakBearer } from './driver.ts';
import { TAK_DEFAULT_MTU, TAK_SECRET_SETTINGS, TakSettings } from './settings.ts';
import { takStats } from './stats.ts';

// TAK (ATAK, WinTAK, iTAK, TAK servers) as a bearer (docs/tak.md; wire facts
// docs/protocols/tak.md): Cursor-on-Target events over tcp://, tls:// (client certificate) or
// udp:// multicast. Positions of mesh nodes become markers, texts GeoChat, and GeoChat from TAK
// users comes in as text messages for the rules.

export const takDriver = defineDriver({
  kind: 'tak',
  title: 'TAK',
  settings: TakSettings as unknown as z.ZodType<Record<string, unknown>>,
  secretSettings: TAK_SECRET_SETTINGS,
  contact: {
    field: 'tak_uid',
    schema: z.string().min(1).max(128).regex(/^[\x21-\x7e]+$/, 'a TAK uid is printable ASCII without spaces'),
    description: 'A TAK user\'s uid (ANDROID-..., a device uid): GeoChat to them directly',
  },
  create: createTakBearer,
  tcpPort: 8087,
  nodeNetwork: 'tak',
  idleMtu: (settings) => (typeof settings.mtu === 'number' ? settings.mtu : TAK_DEFAULT_MTU),
  stats: takStats,
});
