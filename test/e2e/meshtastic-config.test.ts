import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MODEM_PRESET, REGION_CODE } from '../../src/bearers/meshtastic/codec/messages.ts';
import { MeshtasticDevice } from '../../src/bearers/meshtastic/simulator/device.ts';
import { MeshtasticMesh } from '../../src/bearers/meshtastic/simulator/mesh.ts';
import { serveMeshtasticTcp, type SimTransport } from '../../src/bearers/meshtastic/simulator/serve.ts';
import type { TestBridge } from '../helpers/bridge.ts';
import { createMeshInterface, keepProcessAlive, startMeshBridge, waitDelivery, waitOnline, waitUntil } from '../helpers/meshtastic.ts';
import { assertProblem, createRule } from '../helpers/routing.ts';

// The bridge's owner and radio sections are the board's own settings (docs/meshtastic.md,
// "What the configuration API changes on the device"). One bridge, its Meshtastic interface
// bound to a simulated board over TCP: an owner change reaches the board in one edit session
// and one reboot, and the interface shows the new names once it is back; the same write
// again changes nothing and sends nothing; names the firmware would ignore are refused with
// 400; a preset change reaches the board as a whole LoRa config, leaving the region alone.

const mesh = new MeshtasticMesh();
const board = new MeshtasticDevice({ name: 'e2e-config-gw', mesh });
const peer = mesh.addRemoteNode({ num: 0x00c0ffee, long_name: 'Peer' });
let tcp: SimTransport;
let t: TestBridge;
let release: () => void;

const adminCount = () => Object.values(board.counters.admin).reduce((n, c) => n + c, 0);
const stats = async () => {
  const r = await t.call('GET', '/api/interfaces/mesh/stats');
  assert.is(r.status, 200, r.text);
  return r.body.stats;
};

/** A direct message through the interface, acknowledged by the peer: everything the driver
 *  wrote to the board before it has reached the board (one ordered byte stream). */
async function roundTrip(text: string): Promise<void> {
  const r = await t.call('POST', '/api/messages/send', { body: { to: '!00c0ffee', text } });
  assert.is(r.status, 202, r.text);
  const d = await waitDelivery(t, r.body.deliveries[0].id, 'delivered', (x) => x.state === 'delivered' || x.state === 'dead');
  assert.is(d.state, 'delivered', JSON.stringify(d));
  assert.is(d.result.acked_by, '!00c0ffee');
}

test.before(async () => {
  release = keepProcessAlive();
  tcp = await serveMeshtasticTcp(board, { port: 0 });
  t = await startMeshBridge();
  await createMeshInterface(t, 'mesh', tcp.device);
  await createRule(t.call, 'out-to-mesh', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'mesh', to: '{to}' }] });
  await waitOnline(t, 'mesh');
});

test.after(async () => {
  await t?.stop();
  await tcp?.close();
  board.close();
  peer.remove();
  release?.();
});

test('a board whose sections were never written is left as it is', async () => {
  const s = await stats();
  assert.is(s.long_name, board.owner.long_name);
  assert.match(s.long_name, /^Meshtastic /);
  assert.is(s.region, 'EU_868');
  assert.is(s.modem_preset, 'LONG_FAST');
  assert.is(s.config_pushes, 0);
  assert.is(board.counters.reboots, 0);
  assert.is(adminCount(), 0);
});

test('POST /api/config/owner: the board takes the names in one edit session and one reboot', async () => {
  const r = await t.call('POST', '/api/config/owner', { body: { long_name: 'Ridge gateway', short_name: 'RG' } });
  assert.is(r.status, 200, r.text);
  assert.equal(r.body.owner, { long_name: 'Ridge gateway', short_name: 'RG' });
  await waitUntil('the board to take the names and reboot', () => board.counters.reboots === 1 && board.owner.long_name === 'Ridge gateway');
  assert.is(board.owner.short_name, 'RG');
  assert.equal(board.counters.admin, { begin_edit_settings: 1, set_owner: 1, commit_edit_settings: 1 });
  // Back online, the interface shows what the board reports after its reboot.
  const s = await waitUntil('the interface to show the new names', async () => {
    const h = await waitOnline(t, 'mesh');
    return h.device.long_name === 'Ridge gateway' && h.device;
  });
  assert.is(s.short_name, 'RG');
  assert.is(s.config_pushes, 1);
  assert.is(s.config_error, null);
  assert.is(s.reboots, 1);
  const st = await stats();
  assert.is(st.long_name, 'Ridge gateway');
  assert.is(st.short_name, 'RG');
  assert.equal((await t.call('GET', '/api/config/owner')).body, { long_name: 'Ridge gateway', short_name: 'RG' });
});

test('the same owner write again sends nothing to the board', async () => {
  const admin = adminCount();
  const handshakes = board.counters.handshakes;
  const r = await t.call('POST', '/api/config/owner', { body: { long_name: 'Ridge gateway', short_name: 'RG' } });
  assert.is(r.status, 200, r.text);
  // Anything the write had made the driver send would be on the byte stream before this.
  await roundTrip('after the same owner write');
  assert.is(adminCount(), admin);
  assert.is(board.counters.reboots, 1);
  assert.is(board.counters.handshakes, handshakes);
  const h = await waitOnline(t, 'mesh');
  assert.is(h.device.config_pushes, 1);
  assert.is(h.device.reboots, 1);
});

test('owner names longer than the firmware takes are refused with 400 naming the field', async () => {
  const admin = adminCount();
  const long = await t.call('POST', '/api/config/owner', { body: { long_name: 'R'.repeat(40) } });
  assertProblem(long, 400, ['body.long_name'], undefined);
  assert.match(JSON.stringify(long.body.errors), /39 bytes/);
  const short = await t.call('POST', '/api/config/owner', { body: { short_name: 'RIDGE' } });
  assertProblem(short, 400, ['body.short_name']);
  assert.match(JSON.stringify(short.body.errors), /4 bytes/);
  // Bytes, not characters: four characters of five UTF-8 bytes.
  const accented = await t.call('POST', '/api/config/owner', { body: { short_name: 'RGé1' } });
  assertProblem(accented, 400, ['body.short_name']);
  const thirtyNine = await t.call('POST', '/api/config/owner', { body: { long_name: 'é'.repeat(20) } });
  assertProblem(thirtyNine, 400, ['body.long_name']);
  // Nothing was stored or sent.
  assert.equal((await t.call('GET', '/api/config/owner')).body, { long_name: 'Ridge gateway', short_name: 'RG' });
  await roundTrip('after the refused owner writes');
  assert.is(adminCount(), admin);
  assert.is(board.owner.long_name, 'Ridge gateway');
  assert.is(board.counters.reboots, 1);
});

test('POST /api/config/radio with another preset: the board takes it in a whole LoRa config, its region unchanged', async () => {
  const before = board.lora;
  assert.is(before.region, REGION_CODE.EU_868);
  // The operator names the board's region with the new preset (see the skipped test below for
  // a preset-only write on a bridge whose radio section was never written).
  const r = await t.call('POST', '/api/config/radio', { body: { region: 'EU_868', modem_preset: 'LONG_SLOW' } });
  assert.is(r.status, 200, r.text);
  assert.is(r.body.radio.modem_preset, 'LONG_SLOW');
  // The preset differs from what the board reported: the answer warns about it.
  const differs = r.body.warnings.find((w: { code: string }) => w.code === 'RADIO_DIFFERS_FROM_MESH');
  assert.ok(differs?.fields.includes('modem_preset'), r.text);
  assert.not.ok(differs.fields.includes('region'), r.text);
  await waitUntil('the board to take the preset and reboot', () => board.counters.reboots === 2 && board.lora.modem_preset === MODEM_PRESET.LONG_SLOW);
  const after = board.lora;
  assert.is(after.region, REGION_CODE.EU_868);
  assert.is(after.tx_enabled, true);
  assert.is(after.use_preset, true);
  // The whole config went: a field the bridge's section does not have is as it was.
  assert.is(after.sx126x_rx_boosted_gain, before.sx126x_rx_boosted_gain);
  assert.is(after.hop_limit, before.hop_limit);
  assert.is(board.counters.admin.set_config, 1);
  assert.is(board.counters.admin.commit_edit_settings, 2);
  const s = await waitUntil('the interface to show the new preset', async () => {
    const h = await waitOnline(t, 'mesh');
    return h.device.modem_preset === 'LONG_SLOW' && h.device;
  });
  assert.is(s.region, 'EU_868');
  assert.is(s.config_error, null);
  assert.is(s.config_pushes, 2);
  // Still on the air.
  await roundTrip('after the preset change');
});

// KNOWN BUG (reported, not fixed here): on a bridge whose radio section was never written, a
// preset-only patch is merged onto the section's defaults (region UNSET, channel_num 0,
// tx_power 0), and the driver pushes all of them: the board ends with region UNSET and stops
// transmitting. Un-skip once a first radio write keeps what the board reported.
test('a preset-only radio write on a fresh bridge leaves the board\'s region alone', async () => {
  const board2 = new MeshtasticDevice({ name: 'e2e-config-fresh', mesh });
  const tcp2 = await serveMeshtasticTcp(board2, { port: 0 });
  const t2 = await startMeshBridge();
  try {
    await createMeshInterface(t2, 'mesh', tcp2.device);
    await waitOnline(t2, 'mesh');
    const r = await t2.call('POST', '/api/config/radio', { body: { modem_preset: 'LONG_SLOW' } });
    assert.is(r.status, 200, r.text);
    await waitUntil('the board to take the preset', () => board2.lora.modem_preset === MODEM_PRESET.LONG_SLOW);
    assert.is(board2.lora.region, REGION_CODE.EU_868);
    assert.is(board2.lora.tx_power, 22);
  } finally {
    await t2.stop();
    await tcp2.close();
    board2.close();
  }
});

test.run();
