import { nordicUart, type BleFraming } from '../shared/links/ble-framing.ts';
import { MAX_FRAME_SIZE } from './codec/constants.ts';
import { encodeFrame, FrameDecoder } from './codec/frame.ts';

// A MeshCore companion radio over Nordic UART (docs/protocols/meshcore.md 6.1, "BLE"): the
// firmware's SerialBLEInterface takes one frame per write of RX (a write longer than
// MAX_FRAME_SIZE, or empty, is ignored) and sends one frame per TX notification, without the
// `<`/`>` header and length the serial port uses. The driver speaks the serial framing; here
// its `<` frames are taken apart into one write each, and each notification becomes a `>`
// frame for it, so the driver is the same over every link.

const MESHCORE_OVER_NUS = nordicUart((channel) => {
  const decoder = new FrameDecoder('to-radio');
  return {
    async start() {
      channel.onValue('tx', (value) => {
        if (value.length === 0 || value.length > MAX_FRAME_SIZE) channel.discard();
        else channel.emit(encodeFrame('from-radio', value));
      });
      await channel.startNotify('tx');
    },
    /** Each whole `<` frame of the driver is one write with response: BlueZ waits for the
     *  board's answer (flow control), and splits a frame longer than the MTU allows into a long
     *  write. Bytes outside a frame mean nothing over BLE and are dropped. */
    async send(data) {
      for (const event of decoder.push(data)) {
        if (event.type !== 'frame') continue;
        await channel.write('rx', event.body, 'request');
      }
    },
  };
});

export const MESHCORE_BLE: BleFraming = { services: [MESHCORE_OVER_NUS] };
