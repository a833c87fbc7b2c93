import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BROADCAST, formatNodeId, isBroadcast, parseNodeAddress } from '../../../../src/bearers/meshtastic/codec/node-id.ts';

test('formatNodeId: "!" and 8 lower-case hex digits', () => {
  assert.is(formatNodeId(0xa1b2c3d4), '!a1b2c3d4');
  assert.is(formatNodeId(1), '!00000001');
  assert.is(formatNodeId(BROADCAST), '!ffffffff');
  for (const bad of [-1, 2 ** 32, 1.5, Number.NaN]) assert.throws(() => formatNodeId(bad), RangeError);
});

test('parseNodeAddress: the forms users and the Python client write', () => {
  assert.is(parseNodeAddress('!a1b2c3d4'), 0xa1b2c3d4);
  assert.is(parseNodeAddress('!A1B2C3D4'), 0xa1b2c3d4);
  assert.is(parseNodeAddress('0xa1b2c3d4'), 0xa1b2c3d4);
  assert.is(parseNodeAddress('0XA1B2C3D4'), 0xa1b2c3d4);
  assert.is(parseNodeAddress(' 2712847316 '), 0xa1b2c3d4);
  assert.is(parseNodeAddress('!1'), 1);
  assert.is(parseNodeAddress('^all'), BROADCAST);
  assert.is(parseNodeAddress('^ALL'), BROADCAST);
  assert.is(parseNodeAddress('broadcast'), BROADCAST);
  assert.is(parseNodeAddress('4294967295'), BROADCAST);
  assert.is(parseNodeAddress('^local', 0x1234), 0x1234);
  assert.ok(isBroadcast(BROADCAST));
  assert.not.ok(isBroadcast(0));
});

test('parseNodeAddress: anything else is null', () => {
  for (const bad of ['', '!', '!a1b2c3d4e', '!xyz', '0x', '0x123456789', '4294967296', '-1', '1e3', '12 34', 'a1b2c3d4', '^local', '!a1b2 c3d4']) {
    assert.is(parseNodeAddress(bad), null, bad);
  }
  for (const n of [0, 1, 0xa1b2c3d4, BROADCAST]) assert.is(parseNodeAddress(formatNodeId(n)), n);
});

test.run();
