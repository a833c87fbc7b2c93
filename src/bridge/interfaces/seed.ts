import { DRIVERS, type InterfaceKind } from '../../bearers/drivers.ts';
import type { InterfaceSeed } from '../../bearers/driver-module.ts';
import { StartupError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { DEFAULT_RETRY_POLICY } from '../engine/backoff.ts';
import type { InterfaceService } from './service.ts';

// First-instance seeding (docs/api.md 4.8): a kind may create its interface on a fresh
// database from environment variables (DriverModule.seed). After that the stored row is
// authoritative and the variables are ignored, with a log line saying so.

export type SeedRequest = InterfaceSeed & { kind: InterfaceKind };

/** The interfaces the environment asks for, checked before anything is opened; a bad value
 *  stops the start with the kind's line naming the variable. */
export function checkSeeds(env: NodeJS.ProcessEnv): SeedRequest[] {
  const seeds: SeedRequest[] = [];
  for (const d of DRIVERS) {
    const seed = 'seed' in d && d.seed ? d.seed(env) : null;
    if (seed === null) continue;
    if ('error' in seed) throw new StartupError(seed.error);
    seeds.push({ ...seed, kind: d.kind });
  }
  return seeds;
}

export async function seedInterfaces(seeds: readonly SeedRequest[], freshDatabase: boolean, interfaces: InterfaceService, log: Logger): Promise<void> {
  for (const seed of seeds) {
    if (!freshDatabase) {
      log.info(`${seed.kind}_seed_ignored`, { note: `${seed.variables} apply to a fresh database only; the stored interface settings are authoritative` });
      continue;
    }
    const row = await interfaces.create({
      name: seed.name,
      kind: seed.kind,
      enabled: true,
      device: seed.device,
      settings: seed.settings,
      transforms: { inbound: [], outbound: [] },
      retry: DEFAULT_RETRY_POLICY,
    });
    log.info(`${seed.kind}_seeded`, { interface_id: row.id, device: seed.device, ...seed.settings });
  }
}
