import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fitsWhole, keepsAirtime, queueCapacity } from '../../../src/bearers/rnode/firmware.ts';

// What the driver takes from the board it found (docs/protocols/rnode.md 1.10): the packet queue
// of each MCU, whether a frame fits it whole, and whether the firmware keeps airtime at all.

test('the queue of each board: 6 KiB and 200 packets, 5 KiB and 24 on the ATmega2560', () => {
  for (const mcu of [0x81, 0x71, 0x91, undefined]) assert.equal(queueCapacity(mcu), { packets: 200, bytes: 6144 });
  assert.equal(queueCapacity(0x92), { packets: 24, bytes: 5120 });
});

test('a frame is taken whole only while the queue stays below its size and its packet count', () => {
  const cap = { packets: 200, bytes: 6144 };
  assert.ok(fitsWhole(cap, { packets: 0, bytes: 6000 }, 143));
  assert.not.ok(fitsWhole(cap, { packets: 0, bytes: 6000 }, 144), '6144 bytes: not below the size');
  assert.not.ok(fitsWhole(cap, { packets: 200, bytes: 0 }, 1));
});

test('airtime limits are kept on ESP32 and nRF52, not on the AVR boards (no STAT_CHTM to wait for)', () => {
  assert.ok(keepsAirtime(0x81));
  assert.ok(keepsAirtime(0x71));
  assert.not.ok(keepsAirtime(0x91));
  assert.not.ok(keepsAirtime(0x92));
});

test.run();
