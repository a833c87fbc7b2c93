// The built-in sim bearer against the bearer contract (test/bearers/contract.ts). Its
// "device" is a channel name in this process: the working device is a fresh sim://<channel>,
// the peer a second sim bearer on that channel, and the missing device a value that is not
// sim:// at all (the only way a sim device can be absent). It does not retry and has no
// device to unplug, so the "appears later" and "device lost" tests are not registered.
import { createSimBearer, resetSimChannels } from '../../../src/bearers/sim/sim-bearer.ts';
import { bearerContract, type ContractHarness } from '../contract.ts';

let channels = 0;

const harness: ContractHarness = {
  settings: {},
  create: (ctx) => createSimBearer(ctx),
  workingDevice: async () => `sim://contract-${process.pid}-${++channels}`,
  missingDevice: async () => ({ device: '/dev/serial/by-id/does-not-exist' }),
  reconnects: false,
  makePeer: async (device, ctx) => {
    const bearer = createSimBearer(ctx);
    await bearer.start(device);
    return {
      send: (frame) => bearer.send(frame),
      expectedFrom: ctx.interfaceName,
      close: () => bearer.stop(),
    };
  },
  cleanup: async () => resetSimChannels(),
};

bearerContract('sim', harness).run();
