import { NUS_STREAM, type BleChannel, type BleFramer, type BleFraming, type BleService } from '../shared/links/ble-framing.ts';
import { encodeFrame, MAX_FRAME_PAYLOAD, StreamDecoder } from './codec/stream.ts';

// Meshtastic over Bluetooth LE (docs/protocols/meshtastic.md 2.1; GATT facts in docs/ports.md
// "BLE decisions"). The stream API's frames (94 C3 len) the driver writes are taken apart: each
// ToRadio frame becomes one write with response of its protobuf alone; each FromRadio read
// becomes one frame for the driver. FromRadio is read until empty after every write and
// whenever FromNum notifies. A board offering only Nordic UART carries the stream itself.

/** Meshtastic's mesh service (firmware src/BluetoothCommon.h MESH_SERVICE_UUID). */
export const MESHTASTIC_SERVICE_UUID = '6ba1b218-15a8-461f-9fa8-5dcae273eafd';
/** One ToRadio protobuf per write, with response (the characteristic has only "write"). */
export const MESHTASTIC_TORADIO_UUID = 'f75c76d2-129e-4dad-a1dd-7866124401e7';
/** One FromRadio protobuf per read; an empty read means nothing more. */
export const MESHTASTIC_FROMRADIO_UUID = '2c55e69e-4993-11ed-b878-0242ac120002';
/** Notifies a little-endian uint32 counter whenever FromRadio has something new. */
export const MESHTASTIC_FROMNUM_UUID = 'ed9da18c-a800-4f66-a670-aa7547e34453';

function meshServiceFramer(channel: BleChannel): BleFramer {
  const decoder = new StreamDecoder();
  let draining = false;
  let again = false;

  /** Reads FromRadio until it answers empty; a request made meanwhile reads once more. */
  async function drain(): Promise<void> {
    if (draining) {
      again = true;
      return;
    }
    draining = true;
    try {
      do {
        again = false;
        for (;;) {
          if (channel.closed) return;
          const payload = await channel.read('fromRadio');
          if (payload.length === 0) break;
          // The firmware never sends more than MAX_TO_FROM_RADIO_SIZE; a longer read is not a frame.
          if (payload.length <= MAX_FRAME_PAYLOAD) channel.emit(encodeFrame(payload));
          else channel.discard();
        }
      } while (again);
    } catch (error) {
      if (!channel.closed) channel.fail(`reading FromRadio failed: ${(error as Error).message}`);
    } finally {
      draining = false;
    }
  }

  return {
    async start() {
      channel.onValue('fromNum', () => void drain());
      await channel.startNotify('fromNum');
    },
    /** Whole ToRadio frames are written one per write; the wake bytes (32 x C3) and anything
     *  else outside a frame mean nothing over BLE and are dropped. */
    async send(data) {
      for (const event of decoder.push(data)) {
        if (event.type !== 'frame') continue;
        await channel.write('toRadio', event.payload, 'request');
        void drain();
      }
    },
  };
}

export const MESHTASTIC_SERVICE: BleService = {
  uuid: MESHTASTIC_SERVICE_UUID,
  title: `the Meshtastic service (${MESHTASTIC_SERVICE_UUID})`,
  listedAs: 'Meshtastic',
  characteristics: { toRadio: MESHTASTIC_TORADIO_UUID, fromRadio: MESHTASTIC_FROMRADIO_UUID, fromNum: MESHTASTIC_FROMNUM_UUID },
  mtuRole: 'toRadio',
  attach: meshServiceFramer,
};

/** The Meshtastic service first; Nordic UART (the plain stream) should a board offer only it. */
export const MESHTASTIC_BLE: BleFraming = { services: [MESHTASTIC_SERVICE, NUS_STREAM] };
