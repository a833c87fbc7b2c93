import { z } from 'zod';
import { defineDriver } from '../driver-module.ts';
import { lazyOpenSim, lazySimulator } from '../shared/simulators/lazy.ts';
import { MESHCORE_SIM_OPTIONS, MESHCORE_SIM_USAGE } from './simulator/usage.ts';
import { MESHCORE_BLE } from './ble.ts';
import { SERIAL_BAUD, TCP_PORT } from './codec/constants.ts';
import { createMeshCoreBearer } from './driver.ts';
import { MeshCoreSettings } from './settings.ts';
import { meshcoreStats } from './stats.ts';

// The MeshCore companion radio (docs/protocols/meshcore.md) as a driver module: the companion
// protocol over USB serial (115200 baud) and TCP (5000).

export const meshcoreDriver = defineDriver({
  kind: 'meshcore',
  title: 'MeshCore',
  // The companion radio acknowledged the message to its sender before handing it over.
  framesNotRepeated: true,
  bleFraming: MESHCORE_BLE,
  nodeNetwork: 'meshcore',
  settings: MeshCoreSettings as unknown as z.ZodType<Record<string, unknown>>,
  contact: {
    field: 'meshcore', schema: z.string().trim().regex(/^(?:[0-9a-fA-F]{2}){6,32}$/, { error: 'expected the hex of a MeshCore public key or of its first 6 bytes or more (whole bytes: an even number of digits)' }),
    description: 'MeshCore public key, or its first 6 bytes or more, in hex',
  },
  meshTraffic: true,
  tcpPort: TCP_PORT,
  baudRate: SERIAL_BAUD,
  create: (ctx) => createMeshCoreBearer(ctx, { openLink: ctx.openLink }),
  // The simulators load when used: bearers/shared/simulators/lazy.ts.
  openSim: lazyOpenSim(async () => (await import('./simulator/link.ts')).openMeshCoreSimLink),
  simulator: lazySimulator({ usage: MESHCORE_SIM_USAGE, options: MESHCORE_SIM_OPTIONS }, async () => (await import('./simulator/cli.ts')).meshcoreSimulator),
  stats: meshcoreStats,
});
