import { parseArgs } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SimValues } from '../../../../src/bearers/driver-module.ts';
import { BROADCAST, encodePosition, encodeTelemetry, PORT_NUM, PRIORITY } from '../../../../src/bearers/meshtastic/codec/messages.ts';
import { replayedRecord, replayPacketId, REPLAY_KIND } from '../../../../src/bearers/meshtastic/replay.ts';
import { meshtasticSimulator } from '../../../../src/bearers/meshtastic/simulator/cli.ts';
import { MeshtasticDevice } from '../../../../src/bearers/meshtastic/simulator/device.ts';
import { MeshtasticMesh } from '../../../../src/bearers/meshtastic/simulator/mesh.ts';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { adminPacket, directHost, tcpHost, variants, waitFor } from './helpers.ts';

// The simulator as a 2.8 board (simulator/firmware.ts; docs/protocols/meshtastic.md 2.9): what
// its host sees in the handshake and after it, what it does with a long name, and the
// command line's --firmware. A 2.7 board (the default) is what every other simulator test
// drives, unchanged.

const T0 = Date.UTC(2030, 0, 1);

function board28() {
  const clock = new FakeClock(T0);
  const mesh = new MeshtasticMesh({ clock, airDelayMs: 0 });
  const device = new MeshtasticDevice({ name: 'fw28', mesh, clock, firmware: '2.8' });
  return { clock, mesh, device };
}

test('handshake: metadata names 2.8 and Range Test excluded; region presets follow the metadata; node infos are thin', async () => {
  const { clock, mesh, device } = board28();
  const remote = mesh.addRemoteNode({ num: 0x0000beef });
  remote.send(BROADCAST, { portnum: PORT_NUM.POSITION_APP, payload: encodePosition({ latitude_i: 1, longitude_i: 2, time: T0 / 1000 - 60 }) });
  await clock.advance(10);
  const host = directHost(device);
  const frames = await host.handshake(1234);
  const order = variants(frames);
  assert.is(order[order.indexOf('metadata') + 1], 'region_presets');
  const metadata = frames.find((m) => m.metadata)!.metadata!;
  assert.is(metadata.firmware_version, '2.8.0.sim');
  assert.is(metadata.excluded_modules, 0x10);
  assert.is(frames.filter((m) => m.moduleConfig).length, 17, 'every module config, to mesh_beacon');
  const other = frames.filter((m) => m.node_info).map((m) => m.node_info!).find((n) => n.num === 0x0000beef)!;
  assert.is(other.position, undefined, 'a 2.8 board sends other nodes thin');
  assert.is(other.last_heard, T0 / 1000, 'last heard from its node database');
  assert.is(device.state.channels[0].settings?.module_settings?.position_precision, 0, 'no position broadcast by default');
});

test('after config_complete_id the node database is replayed, each packet shaped and numbered as the firmware does', async () => {
  const { clock, mesh, device } = board28();
  const remote = mesh.addRemoteNode({ num: 0x0000beef });
  const fix = T0 / 1000 - 600;
  remote.send(BROADCAST, { portnum: PORT_NUM.POSITION_APP, payload: encodePosition({ latitude_i: 10, longitude_i: 20, time: fix }) });
  await clock.advance(5_000);
  remote.send(BROADCAST, { portnum: PORT_NUM.TELEMETRY_APP, payload: encodeTelemetry({ time: T0 / 1000, device_metrics: { battery_level: 70 } }) });
  await clock.advance(10);
  const heardAt = T0 / 1000 + 5;
  const host = directHost(device);
  await host.handshake(99);
  // First the two live packets the board held for its host, heard over the air (RSSI), then
  // the replay of what it stored from them.
  const packets = host.packets();
  assert.is(packets.length, 4);
  assert.ok(packets.slice(0, 2).every((p) => p.rx_rssi !== undefined && replayedRecord(p) === null));
  const [position, telemetry] = packets.slice(2);
  assert.equal(
    { from: position.from, to: position.to, channel: position.channel, priority: position.priority, rx_rssi: position.rx_rssi, rx_time: position.rx_time },
    { from: 0x0000beef, to: BROADCAST, channel: undefined, priority: PRIORITY.BACKGROUND, rx_rssi: undefined, rx_time: fix },
  );
  assert.is(position.id, replayPacketId(0x0000beef, fix, REPLAY_KIND.position));
  assert.is(telemetry.rx_time, heardAt, 'telemetry replays with the node\'s last-heard time');
  assert.is(replayedRecord(position), 'position');
  assert.is(replayedRecord(telemetry), 'device_metrics');
  // The config-only nonce gets no replay.
  host.take();
  await host.handshake(69420);
  assert.is(host.packets().length, 0);
});

test('a long name is cut to 24 bytes without splitting a character; a 2.7 board keeps 39', async () => {
  const { device } = board28();
  const host = directHost(device);
  await host.handshake(5);
  // 23 ASCII bytes, then a 2-byte ü across the 24-byte cut: the whole ü goes.
  host.send(adminPacket(device.num, { set_owner: { long_name: 'Wetterstation Nordgrat üben', short_name: 'WX' } }));
  assert.is(device.owner.long_name, 'Wetterstation Nordgrat ');
  const old = new MeshtasticDevice({ name: 'fw27', mesh: new MeshtasticMesh({ clock: new FakeClock(T0) }), clock: new FakeClock(T0) });
  const oldHost = directHost(old);
  await oldHost.handshake(6);
  oldHost.send(adminPacket(old.num, { set_owner: { long_name: 'Wetterstation Nordgrat üben', short_name: 'WX' } }));
  assert.is(old.owner.long_name, 'Wetterstation Nordgrat üben');
  assert.is(old.firmware.line, '2.7');
});

test('fieldbridge sim meshtastic --firmware 2.8 runs 2.8 boards; another value is a usage error', async () => {
  const parse = (args: string[]): SimValues => parseArgs({ args, options: meshtasticSimulator.options, strict: true }).values as SimValues;
  const lines: string[] = [];
  assert.is(await meshtasticSimulator.run(parse(['--tcp', '127.0.0.1:0', '--firmware', '2.9']), { write: (l) => lines.push(l) }), 2);
  assert.match(lines.join('\n'), /--firmware "2.9": expected one of 2.7, 2.8/);
  const abort = new AbortController();
  let devices: string[] = [];
  const done = meshtasticSimulator.run(parse(['--tcp', '127.0.0.1:0', '--firmware', '2.8']), { signal: abort.signal, write: (l) => lines.push(l), onReady: (d) => (devices = d) });
  await waitFor('listening', () => devices.length === 1);
  const host = await tcpHost(devices[0]);
  const frames = await host.handshake();
  assert.is(frames.find((m) => m.metadata)!.metadata!.firmware_version, '2.8.0.sim');
  await host.close();
  abort.abort();
  assert.is(await done, 0);
});

test.run();
