import { z } from 'zod';
import { defineDriver } from '../driver-module.ts';
import { lazyOpenSim, lazySimulator } from '../shared/simulators/lazy.ts';
import { createAprsBearer } from './driver.ts';
import { APRS_SECRET_SETTINGS, AprsSettings, CALLSIGN, KISS_TCP_PORT } from './settings.ts';
import { aprsStats } from './stats.ts';
import { APRS_SIM_OPTIONS, APRS_SIM_USAGE } from './simulator/usage.ts';

// Amateur-radio APRS (docs/aprs.md; wire facts docs/protocols/aprs.md): a KISS TNC (serial,
// Dire Wolf's tcp://host:8001, sim://) and/or APRS-IS. Deliveries to callsigns are APRS
// messages that wait for their ack; positions heard are nodes of network `aprs`.

export const aprsDriver = defineDriver({
  kind: 'aprs',
  title: 'APRS',
  settings: AprsSettings as unknown as z.ZodType<Record<string, unknown>>,
  secretSettings: APRS_SECRET_SETTINGS,
  contact: {
    field: 'callsign',
    schema: CALLSIGN as unknown as z.ZodType<string>,
    description: 'An amateur-radio callsign with SSID an aprs interface sends APRS messages to (e.g. N0CALL-7)',
  },
  create: createAprsBearer,
  tcpPort: KISS_TCP_PORT,
  baudRate: 9600,
  nodeNetwork: 'aprs',
  idleMtu: () => 67,
  stats: aprsStats,
  openSim: lazyOpenSim(async () => (await import('./simulator/link.ts')).openAprsSimLink),
  simulator: lazySimulator({ usage: APRS_SIM_USAGE, options: APRS_SIM_OPTIONS }, async () => (await import('./simulator/cli.ts')).aprsSimulator),
});
