import type { BearerContext, BearerEvents, DeviceConfig } from '../../src/bearers/bearer.ts';

// A BearerContext for driver tests that run a bearer without a bridge: no device sections to
// apply, and no port values to open unless the test gives its own openLink.

export const noDeviceConfig: DeviceConfig = {
  desired: () => null,
  onChange: () => () => {},
  report: () => {},
};

type TestContext = Omit<BearerContext, 'openLink' | 'deviceConfig' | 'events'> &
  Partial<Pick<BearerContext, 'openLink' | 'deviceConfig'>> & { events: Omit<BearerEvents, 'nodes'> & Partial<BearerEvents> };

export function bearerContext(ctx: TestContext): BearerContext {
  return {
    openLink: (device) => Promise.reject(new Error(`this test opens no port value (${device})`)),
    deviceConfig: noDeviceConfig,
    ...ctx,
    events: { nodes: () => {}, ...ctx.events },
  };
}
