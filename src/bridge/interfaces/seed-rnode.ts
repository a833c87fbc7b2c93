import { PRESET_NAMES } from '../../bearers/rnode/radio.ts';
import { parsePortValue } from '../../bearers/shared/links/port-value.ts';
import { StartupError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { DEFAULT_RETRY_POLICY } from '../engine/backoff.ts';
import type { InterfaceService } from './service.ts';

// First-instance seeding (docs/api.md 4.8): on a fresh database only, SERVICE_RNODE_PORT and
// SERVICE_RNODE_PRESET create the RNode interface. After that the stored row is authoritative
// and the variables are ignored, with a log line saying so.

export interface RNodeSeed {
  port?: string;
  preset?: string;
}

/** Checks the variables before anything is opened; a bad value stops the first start. */
export function checkRNodeSeed(env: NodeJS.ProcessEnv): RNodeSeed {
  const port = env.SERVICE_RNODE_PORT?.trim() || undefined;
  const preset = env.SERVICE_RNODE_PRESET?.trim() || undefined;
  if (port !== undefined) {
    const parsed = parsePortValue(port);
    if (!parsed.ok) throw new StartupError(`SERVICE_RNODE_PORT: expected a port value (auto, usb_serial:<sn>, /dev/serial/by-id/..., tcp://host[:7633], ble://name), got ${JSON.stringify(port)}: ${parsed.error}`);
  }
  if (preset !== undefined && !(PRESET_NAMES as readonly string[]).includes(preset)) {
    throw new StartupError(`SERVICE_RNODE_PRESET: expected one of ${PRESET_NAMES.join(', ')}, got ${JSON.stringify(preset)}`);
  }
  if (preset !== undefined && port === undefined) throw new StartupError('SERVICE_RNODE_PRESET is set but SERVICE_RNODE_PORT is not: set both to seed the RNode interface');
  return { port, preset };
}

export async function seedRNode(seed: RNodeSeed, freshDatabase: boolean, interfaces: InterfaceService, log: Logger): Promise<void> {
  if (seed.port === undefined) return;
  if (!freshDatabase) {
    log.info('rnode_seed_ignored', { note: 'SERVICE_RNODE_PORT/SERVICE_RNODE_PRESET apply to a fresh database only; the stored interface settings are authoritative' });
    return;
  }
  const row = await interfaces.create({
    name: 'rnode',
    kind: 'rnode',
    enabled: true,
    device: seed.port,
    settings: { preset: seed.preset ?? 'us-915' },
    transforms: { inbound: [], outbound: [] },
    retry: DEFAULT_RETRY_POLICY,
  });
  log.info('rnode_seeded', { interface_id: row.id, device: seed.port, preset: seed.preset ?? 'us-915' });
}
