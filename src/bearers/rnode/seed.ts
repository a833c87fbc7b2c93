import type { InterfaceSeed } from '../driver-module.ts';
import { parsePortValue } from '../shared/links/port-value.ts';
import { PRESET_NAMES } from './radio.ts';

// First-instance seeding (docs/api.md 4.8): on a fresh database only, SERVICE_RNODE_PORT and
// SERVICE_RNODE_PRESET create the RNode interface. After that the stored row is authoritative
// and the variables are ignored, with a log line saying so (bridge/interfaces/seed.ts).

const DEFAULT_PRESET = 'us-915';

/** Reads the variables before anything is opened; an error stops the first start. */
export function rnodeSeed(env: NodeJS.ProcessEnv): InterfaceSeed | { error: string } | null {
  const port = env.SERVICE_RNODE_PORT?.trim() || undefined;
  const preset = env.SERVICE_RNODE_PRESET?.trim() || undefined;
  if (port !== undefined) {
    const parsed = parsePortValue(port);
    if (!parsed.ok) return { error: `SERVICE_RNODE_PORT: expected a port value (auto, usb_serial:<sn>, /dev/serial/by-id/..., tcp://host[:7633], ble://name), got ${JSON.stringify(port)}: ${parsed.error}` };
  }
  if (preset !== undefined && !(PRESET_NAMES as readonly string[]).includes(preset)) {
    return { error: `SERVICE_RNODE_PRESET: expected one of ${PRESET_NAMES.join(', ')}, got ${JSON.stringify(preset)}` };
  }
  if (preset !== undefined && port === undefined) return { error: 'SERVICE_RNODE_PRESET is set but SERVICE_RNODE_PORT is not: set both to seed the RNode interface' };
  if (port === undefined) return null;
  return { name: 'rnode', device: port, settings: { preset: preset ?? DEFAULT_PRESET }, variables: 'SERVICE_RNODE_PORT/SERVICE_RNODE_PRESET' };
}
