import type { DriverApi, DriverModule } from '../../bearers/driver-module.ts';
import { BLE_SERVICES } from '../../bearers/drivers.ts';
import { listAllPorts } from '../../bearers/shared/links/list-ports.ts';
import { notFound } from '../../lib/errors.ts';
import type { BearerHost } from '../engine/bearer-host.ts';
import type { InterfaceService } from './service.ts';

// What a driver module's own routes may do with the interfaces of its kind (bearers/
// driver-module.ts, DriverApi): read them, replace their settings, read link state and stats,
// and what their driver keeps.

export function driverApi(driver: DriverModule, interfaces: InterfaceService, host: BearerHost): DriverApi {
  const get = (ref: string) => {
    const row = interfaces.get(ref);
    if (row.kind !== driver.kind) throw notFound(`${driver.title} interface`, ref);
    return row;
  };
  return {
    list: () => interfaces.list().filter((r) => r.kind === driver.kind),
    get,
    replaceSettings: async (ref, settings) => {
      const row = get(ref);
      return interfaces.update(row.id, { name: row.name, settings, transforms: row.transforms as never, retry: row.retry as never });
    },
    link: (id) => {
      const rt = host.runtime(id);
      return { connected: rt.connected, phase: rt.phase, last_error: rt.last_error };
    },
    stats: (id) => host.stats(id),
    state: (id) => host.driverState(id),
    now: () => host.now(),
    listPorts: () => listAllPorts(BLE_SERVICES),
  };
}
