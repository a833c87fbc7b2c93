import { z } from 'zod';
import { defineDriver } from '../driver-module.ts';
import { MESHTASTIC_BLE } from './ble.ts';
import { TCP_PORT, SERIAL_BAUD } from './codec/messages.ts';
import { DATA_PAYLOAD_LEN } from './codec/mesh.ts';
import { lazyOpenSim, lazySimulator } from '../shared/simulators/lazy.ts';
import { MESHTASTIC_SIM_OPTIONS, MESHTASTIC_SIM_USAGE } from './simulator/usage.ts';
import { createMeshtasticBearer } from './driver.ts';
import { meshtasticProbe } from './probe.ts';
import { MeshtasticSettings } from './settings.ts';
import { meshtasticStats } from './stats.ts';

// The Meshtastic mesh radio (docs/meshtastic.md; wire facts docs/protocols/meshtastic.md) as a
// driver module: the stream API over serial (115200 baud) and TCP (4403).

export const meshtasticDriver = defineDriver({
  kind: 'meshtastic',
  title: 'Meshtastic',
  // The board acknowledges a frame to its sender before the bridge has it: the sender never repeats it.
  framesNotRepeated: true,
  tellsTime: "the board's time from its GPS, a phone or the mesh, stamped on packets heard over the air",
  bleFraming: MESHTASTIC_BLE,
  nodeNetwork: 'meshtastic',
  settings: MeshtasticSettings as unknown as z.ZodType<Record<string, unknown>>,
  contact: { field: 'mesh', schema: z.string().trim().min(1).max(200), description: 'Meshtastic node id, e.g. !a1b2c3d4, or the node\'s public key (32 bytes in base64, as the apps show it): sent to the node that has the key, whatever its number' },
  meshTraffic: true,
  deviceSections: ['radio', 'owner', 'modules'],
  tcpPort: TCP_PORT,
  baudRate: SERIAL_BAUD,
  create: (ctx) => createMeshtasticBearer(ctx, { openLink: ctx.openLink }),
  probe: meshtasticProbe,
  // The simulators load when used: bearers/shared/simulators/lazy.ts.
  openSim: lazyOpenSim(async () => (await import('./simulator/link.ts')).openMeshtasticSimLink),
  simulator: lazySimulator({ usage: MESHTASTIC_SIM_USAGE, options: MESHTASTIC_SIM_OPTIONS }, async () => (await import('./simulator/cli.ts')).meshtasticSimulator),
  stats: meshtasticStats,
  // What the driver's mtu is once it runs: a preview or a send is measured against it before.
  idleMtu: () => DATA_PAYLOAD_LEN,
});
