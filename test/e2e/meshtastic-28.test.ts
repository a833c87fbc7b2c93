import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BROADCAST, encodePosition, encodeStatusMessage, encodeTelemetry, type MeshPacket, PORT_NUM } from '../../src/bearers/meshtastic/codec/messages.ts';
import { MeshtasticDevice } from '../../src/bearers/meshtastic/simulator/device.ts';
import { MeshtasticMesh, type RemoteNode } from '../../src/bearers/meshtastic/simulator/mesh.ts';
import { serveMeshtasticTcp, type SimTransport } from '../../src/bearers/meshtastic/simulator/serve.ts';
import type { TestBridge } from '../helpers/bridge.ts';
import { createMeshInterface, health, keepProcessAlive, startMeshBridge, waitOnline, waitUntil } from '../helpers/meshtastic.ts';
import { createRule, createSim } from '../helpers/routing.ts';

// A bridge on a board that behaves as Meshtastic 2.8 (the simulator's --firmware 2.8), over
// TCP. The board holds history of three nodes (positions, device and environment telemetry,
// status: 8 records) that it replays after every handshake. A rule forwards every position
// and telemetry heard on the mesh to a paid stand-in (a sim interface). What an operator sees:
// no replayed record becomes a message or a delivery, after the handshake or after the board
// reboots; the node table has each replayed position and telemetry with its own time and last
// heard as the board reported it; a live position is forwarded exactly once, also after the
// board replays it under its replay id. And the board's limits are the API's: a 27-byte long
// name and a Range Test setting are refused naming the limit and the firmware, and nothing
// reaches the board.

const mesh = new MeshtasticMesh();
const board = new MeshtasticDevice({ name: 'e2e-28-gw', mesh, firmware: '2.8' });
let remote: RemoteNode;
let tcp: SimTransport;
let dir: string;
let t: TestBridge;
let release: () => void;

// History an hour and two hours old (relative to the test's start: no fixed dates).
const NOW_S = Math.floor(Date.now() / 1000);
const FIX_S = NOW_S - 7200;
const HEARD_S = NOW_S - 3600;
const NODES = [0x00a1a1a1, 0x00b2b2b2, 0x00c3c3c3];
const iso = (s: number) => new Date(s * 1000).toISOString();

function seedHistory(): void {
  NODES.forEach((num, i) => {
    board.nodeDb.seed(num, {
      user: { id: `!${num.toString(16).padStart(8, '0')}`, long_name: `Hut ${i + 1}`, short_name: `H${i + 1}` },
      lastHeard: HEARD_S + i,
      snr: 4.5,
      hopsAway: 1,
      position: { latitude_i: 470_000_000 + i, longitude_i: 80_000_000 + i, altitude: 500 + i, time: FIX_S + i },
      deviceMetrics: { battery_level: 80 + i, voltage: 3.9, uptime_seconds: 1000 * (i + 1) },
      ...(i === 0 ? { environment: Uint8Array.of(0x0d, 0, 0, 0xa0, 0x41) } : {}), // EnvironmentMetrics.temperature = 20.0
      ...(i === 1 ? { status: encodeStatusMessage({ status: 'on solar' }) } : {}),
    });
  });
}

async function seen(): Promise<{ messages: any[]; deliveries: any[] }> {
  const m = await t.call('GET', '/api/messages?interface=mesh');
  assert.is(m.status, 200, m.text);
  const d = await t.call('GET', '/api/deliveries');
  assert.is(d.status, 200, d.text);
  return { messages: m.body.items.filter((x: any) => x.direction === 'inbound'), deliveries: d.body.items };
}

const node = async (id: string) => {
  const r = await t.call('GET', `/api/nodes/${id}`);
  assert.is(r.status, 200, r.text);
  return r.body;
};

test.before(async () => {
  release = keepProcessAlive();
  dir = mkdtempSync(join(tmpdir(), 'fb-mt-e2e-28-'));
  seedHistory();
  remote = mesh.addRemoteNode({ num: 0x0000f00d, long_name: 'Rover' });
  tcp = await serveMeshtasticTcp(board, { port: 0 });
  t = await startMeshBridge({ dir });
  await createSim(t.call, 'sat', { device: 'sim://e2e-28-sat' });
  // Disabled until the rule exists: the replay after the first handshake must meet it.
  await createMeshInterface(t, 'mesh', tcp.device, { enabled: false });
  await createRule(t.call, 'positions-to-sat', {
    match: { direction: 'inbound', interfaces: ['mesh'], kinds: ['position', 'telemetry'] }, action: 'forward', destinations: [{ interface: 'sat', to: 'broadcast' }],
  });
  assert.is((await t.call('POST', '/api/interfaces/mesh/enable')).status, 200);
  await waitOnline(t, 'mesh');
});

test.after(async () => {
  await t?.stop();
  await tcp?.close();
  board.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  release?.();
});

test('the board is shown as a 2.8 board: version line, excluded modules, name limit, region presets', async () => {
  const h = await health(t, 'mesh');
  assert.is(h.device.firmware_version, '2.8.0.sim');
  assert.is(h.device.firmware_line, '2.8');
  assert.equal(h.device.excluded_modules, ['RANGETEST_CONFIG']);
  assert.is(h.device.long_name_max_bytes, 24);
  assert.equal(h.device.module_configs.slice(-4), ['statusmessage', 'traffic_management', 'tak', 'mesh_beacon']);
  assert.ok(h.device.region_presets.includes('LONG_FAST'), JSON.stringify(h.device.region_presets));
});

test('after the handshake: the 8 replayed records fill the node table and create no message and no delivery', async () => {
  await waitUntil('the replay to be taken', async () => (await health(t, 'mesh')).device.replayed === 8);
  const s = await seen();
  assert.is(s.messages.length, 0, JSON.stringify(s.messages));
  assert.is(s.deliveries.length, 0, JSON.stringify(s.deliveries));
  for (const [i, num] of NODES.entries()) {
    const n = await node(`!${num.toString(16).padStart(8, '0')}`);
    assert.equal(n.position, { latitude: (470_000_000 + i) / 1e7, longitude: (80_000_000 + i) / 1e7, altitude_m: 500 + i, time: iso(FIX_S + i) });
    assert.is(n.device_metrics.battery_level_pct, 80 + i);
    assert.is(n.device_metrics.time, iso(HEARD_S + i), 'the telemetry keeps the time the board recorded');
    assert.is(n.last_heard_at, iso(HEARD_S + i), 'last heard as the board reported it');
  }
});

test('a live position is forwarded exactly once, also after the board reboots and replays it under its replay id', async () => {
  const fix = { latitude_i: 471_234_567, longitude_i: 81_234_567, altitude: 610, time: NOW_S - 30 };
  const live: MeshPacket = remote.send(BROADCAST, { portnum: PORT_NUM.POSITION_APP, payload: encodePosition(fix) });
  const first = await waitUntil('the live position to be stored and forwarded', async () => {
    const s = await seen();
    return s.messages.length === 1 && s.deliveries.length === 1 && s;
  });
  assert.is(first.messages[0].kind, 'position');
  assert.is(first.messages[0].meta.packet_id, live.id);
  const heard = (await node('!0000f00d')).last_heard_at;

  const replayedBefore = (await health(t, 'mesh')).device.replayed;
  const handshakes = board.counters.handshakes;
  board.reboot('test');
  await waitUntil('a new handshake', async () => board.counters.handshakes > handshakes);
  await waitOnline(t, 'mesh');
  // 8 seeded records and the live fix (its position; the rover sent no telemetry).
  await waitUntil('the replay after the reboot', async () => (await health(t, 'mesh')).device.replayed === replayedBefore + 9);
  const after = await seen();
  assert.is(after.messages.length, 1, JSON.stringify(after.messages.map((m: any) => m.meta)));
  assert.is(after.deliveries.length, 1);
  const rover = await node('!0000f00d');
  assert.is(rover.position.time, iso(fix.time));
  assert.is(rover.last_heard_at, heard, 'the replay moved last heard neither forward nor back');
});

test('a replayed telemetry record after a reboot is not routed; live telemetry is, once', async () => {
  remote.send(BROADCAST, { portnum: PORT_NUM.TELEMETRY_APP, payload: encodeTelemetry({ time: NOW_S - 10, device_metrics: { battery_level: 55 } }) });
  await waitUntil('the live telemetry to be forwarded', async () => (await seen()).deliveries.length === 2);
  const handshakes = board.counters.handshakes;
  board.reboot('test');
  await waitUntil('a new handshake', async () => board.counters.handshakes > handshakes);
  await waitOnline(t, 'mesh');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const s = await seen();
  assert.is(s.messages.length, 2);
  assert.is(s.deliveries.length, 2);
  assert.is((await node('!0000f00d')).device_metrics.battery_level_pct, 55);
});

test('a 27-byte long name is refused naming the 24-byte limit and the firmware; nothing reaches the board', async () => {
  const admin = { ...board.counters.admin };
  const before = board.owner.long_name;
  const r = await t.call('POST', '/api/config/owner', { body: { long_name: 'Weather station north ridge', short_name: 'WX' } });
  assert.is(r.status, 400, r.text);
  assert.match(r.text, /27 bytes/);
  assert.match(r.text, /at most 24 bytes/);
  assert.match(r.text, /firmware 2\.8\.0\.sim/);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(board.counters.admin, admin, 'no admin message was sent');
  assert.is(board.owner.long_name, before);
  // 24 bytes are taken and pushed.
  const ok = await t.call('POST', '/api/config/owner', { body: { long_name: 'Weather station N ridge!', short_name: 'WX' } });
  assert.is(ok.status, 200, ok.text);
  await waitUntil('the board to take the name', async () => board.owner.long_name === 'Weather station N ridge!');
  await waitOnline(t, 'mesh');
});

test('a Range Test setting is refused naming the firmware; no admin message is sent', async () => {
  const admin = { ...board.counters.admin };
  const r = await t.call('POST', '/api/config/module', { body: { section: 'range_test', settings: { enabled: true } } });
  assert.is(r.status, 400, r.text);
  assert.match(r.text, /range_test/);
  assert.match(r.text, /firmware 2\.8\.0\.sim/);
  assert.match(r.text, /without this module/);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(board.counters.admin, admin);
  const stored = await t.call('GET', '/api/config/module/range_test');
  assert.is(stored.body.enabled, false, 'nothing was stored');
});

test('position and telemetry broadcast, opt-in on 2.8, are switched on through the channel and the telemetry module', async () => {
  assert.is(board.state.channels[0].settings?.module_settings?.position_precision, 0, 'a 2.8 board starts with no position broadcast');
  const pos = await t.call('POST', '/api/config/module', { body: { section: 'position', settings: { position_precision: 13 } } });
  assert.is(pos.status, 200, pos.text);
  await waitUntil('the primary channel to share positions', async () => board.state.channels[0].settings?.module_settings?.position_precision === 13);
  assert.is(board.state.channels[0].settings?.psk?.length, 1, 'the rest of the channel is kept');
  await waitOnline(t, 'mesh', 60_000);
  const tel = await t.call('POST', '/api/config/module', { body: { section: 'telemetry', settings: { device_telemetry_enabled: true } } });
  assert.is(tel.status, 200, tel.text);
  await waitUntil('the telemetry module to broadcast', async () => (board.state.modules.get('telemetry')?.telemetry as { device_telemetry_enabled?: boolean })?.device_telemetry_enabled === true);
  // The supervisor's backoff has grown over this file's reboots: give it time.
  await waitOnline(t, 'mesh', 60_000);
});

test('an imported configuration with a 27-byte long name: the bound 2.8 board is not sent it', async () => {
  const exported = await t.call('GET', '/api/config/export');
  assert.is(exported.status, 200, exported.text);
  const file = JSON.parse(exported.text);
  file.owner.long_name = 'Weather station north ridge';
  const admin = { ...board.counters.admin };
  const before = board.owner.long_name;
  const r = await t.call('POST', '/api/config/import', { body: file });
  assert.is(r.status, 200, r.text);
  await waitUntil('the driver to log it', async () => t.logs.some((l) => l.includes('meshtastic.config_beyond_board')));
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(board.counters.admin, admin, 'no admin message was sent');
  assert.is(board.owner.long_name, before);
});

test('an owner name stored while no board was bound is checked when the 2.8 board connects: a config problem, not pushed', async () => {
  const other = new MeshtasticDevice({ name: 'e2e-28-late', mesh: new MeshtasticMesh(), firmware: '2.8' });
  const otherTcp = await serveMeshtasticTcp(other, { port: 0 });
  const b = await startMeshBridge();
  try {
    const w = await b.call('POST', '/api/config/owner', { body: { long_name: 'Weather station north ridge', short_name: 'WX' } });
    assert.is(w.status, 200, w.text);
    await createMeshInterface(b, 'mesh', otherTcp.device);
    const h = await waitOnline(b, 'mesh');
    assert.match(h.last_error, /not pushed to the board: owner\.long_name is 27 bytes; the board's firmware 2\.8\.0\.sim keeps at most 24/);
    assert.is(other.counters.admin.set_owner, undefined, 'nothing was pushed');
    assert.is.not(other.owner.long_name, 'Weather station north ridge');
  } finally {
    await b.stop();
    await otherTcp.close();
    other.close();
  }
});

test.run();
