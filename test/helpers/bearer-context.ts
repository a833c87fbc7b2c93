import type { BearerContext, BearerEvents, DeviceConfig, DriverState } from '../../src/bearers/bearer.ts';

// A BearerContext for driver tests that run a bearer without a bridge: no device sections to
// apply, and no port values to open unless the test gives its own openLink.

export const noDeviceConfig: DeviceConfig = {
  desired: () => null,
  onChange: () => () => {},
  report: () => {},
};

type TestContext = Omit<BearerContext, 'openLink' | 'deviceConfig' | 'events' | 'state'> &
  Partial<Pick<BearerContext, 'openLink' | 'deviceConfig' | 'state'>> & { events: Omit<BearerEvents, 'nodes'> & Partial<BearerEvents> };

/** Driver state kept in memory (a test's stand-in for the driver_state table). */
export function memoryState(): DriverState {
  const values = new Map<string, string>();
  return {
    get: (key) => values.get(key) ?? null,
    set: (key, value) => void (value === null ? values.delete(key) : values.set(key, value)),
  };
}

export function bearerContext(ctx: TestContext): BearerContext {
  return {
    openLink: (device) => Promise.reject(new Error(`this test opens no port value (${device})`)),
    deviceConfig: noDeviceConfig,
    state: memoryState(),
    ...ctx,
    events: { nodes: () => {}, ...ctx.events },
  };
}
