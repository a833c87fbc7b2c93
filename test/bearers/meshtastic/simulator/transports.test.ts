import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BROADCAST, CHANNEL_ROLE, type FromRadio } from '../../../../src/bearers/meshtastic/codec/messages.ts';
import { MeshtasticDevice } from '../../../../src/bearers/meshtastic/simulator/device.ts';
import { meshtasticSimMesh, openMeshtasticSimLink } from '../../../../src/bearers/meshtastic/simulator/link.ts';
import { MeshtasticMesh } from '../../../../src/bearers/meshtastic/simulator/mesh.ts';
import { serveMeshtasticPty, serveMeshtasticTcp } from '../../../../src/bearers/meshtastic/simulator/serve.ts';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { adminPacket, freshId, linkHost, ptyHost, randomNonce, routingOf, settle, tcpHost, textOf, textPacket, type TestHost, waitFor } from './helpers.ts';

// The device over each carrier the bridge uses: the in-process sim:// link, TCP and a pty
// made by socat. Real I/O, so waits are bounded polls, never fixed sleeps that must be long
// enough; "nothing happened" checks settle briefly and assert absence.

function checkHandshake(frames: FromRadio[], num: number, nonce: number): void {
  assert.is(frames.at(-1)!.config_complete_id, nonce);
  assert.is(frames.find((m) => m.my_info)!.my_info!.my_node_num, num);
  assert.is(frames.find((m) => m.node_info)!.node_info!.num, num);
  assert.ok(frames.find((m) => m.config?.lora)!.config!.lora!.region! > 0);
  const channels = frames.filter((m) => m.channel);
  assert.is(channels.length, 8);
  assert.is(channels[0].channel!.role, CHANNEL_ROLE.PRIMARY);
}

async function handshakeChecked(host: TestHost, num: number): Promise<void> {
  const nonce = randomNonce();
  checkHandshake(await host.handshake(nonce), num, nonce);
}

/** Opens the pty once socat has made the pair again (bounded: 5 s). */
async function openWhenBack(path: string): Promise<TestHost> {
  const until = Date.now() + 5000;
  for (;;) {
    try {
      return await ptyHost(path);
    } catch (e) {
      if (Date.now() > until) throw e;
      await settle(20);
    }
  }
}

let lab = 0;
const freshChannel = () => `transports-${process.pid}-${++lab}`;

test('sim:// link: silent before the first frame, handshake, a direct text with its ack, bytes cross asynchronously', async () => {
  const channel = freshChannel();
  const la = await openMeshtasticSimLink(channel, { rebootDelayMs: 10 });
  const lb = await openMeshtasticSimLink(channel);
  assert.is(la.description, `sim://${channel}`);
  const a = linkHost(la);
  const b = linkHost(lb);
  const far = meshtasticSimMesh(channel).addRemoteNode({ num: 0x0badcafe, long_name: 'Far away', short_name: 'FAR' });
  far.sendText(BROADCAST, 'before anyone asked');
  await settle(30);
  assert.equal(a.heard, [], 'silent before the first host frame');
  a.send({ heartbeat: {} });
  assert.is(la.device.counters.framesFromHost, 0, 'not re-entrant: the write arrives later');
  await waitFor('queue status', () => a.heard.length === 1);
  assert.ok(a.take()[0].queueStatus);
  const frames = await a.handshake();
  assert.ok(frames.some((m) => m.node_info?.num === 0x0badcafe), 'knows the remote node');
  await waitFor('held packet', () => a.packets().length === 1);
  assert.equal(a.packets().map(textOf), ['before anyone asked']);
  a.take();
  await handshakeChecked(b, lb.device.num);
  const id = freshId();
  a.send(textPacket(lb.device.num, 'hello b', { id, wantAck: true }));
  await waitFor('text at b', () => b.packets().some((p) => textOf(p) === 'hello b'));
  await waitFor('ack at a', () => a.packets().some((p) => routingOf(p)?.request_id === id));
  assert.equal(routingOf(a.packets().find((p) => routingOf(p))!), { error: 'NONE', request_id: id, from: lb.device.num, to: la.device.num });
  await la.close();
  await lb.close();
});

test('sim:// link: dropLink closes it with a reason; the next open finds the same radio, settings kept', async () => {
  const channel = freshChannel();
  const first = await openMeshtasticSimLink(channel, { rebootDelayMs: 10 });
  const host = linkHost(first);
  await handshakeChecked(host, first.device.num);
  host.send(adminPacket(first.device.num, { set_owner: { long_name: 'Kept across plugs', short_name: 'KEPT' } }));
  await waitFor('owner set', () => first.device.owner.long_name === 'Kept across plugs');
  let reason = '';
  first.onClose((r) => (reason = r));
  first.device.dropLink();
  await waitFor('closed', () => reason !== '');
  assert.is(reason, 'dropped by the simulator');
  await assert.not.throws(() => first.close());
  try {
    await first.write(Uint8Array.of(1));
    assert.unreachable('a closed link refuses writes');
  } catch (e) {
    assert.match(String(e), /is closed/);
  }
  assert.not.ok(meshtasticSimMesh(channel).has(first.device.num), 'an unplugged radio is off the mesh');
  const again = await openMeshtasticSimLink(channel);
  assert.is(again.device, first.device);
  const h2 = linkHost(again);
  const frames = await h2.handshake();
  assert.is(frames.find((m) => m.node_info)!.node_info!.user!.long_name, 'Kept across plugs');
  await again.close();
});

test('TCP: silent before the first frame, handshake, heartbeat, garbage survived', async () => {
  const mesh = new MeshtasticMesh({ ackDelayMs: 5, retransmitTimeoutMs: 50 });
  const device = new MeshtasticDevice({ name: 'tcp-a', mesh, rebootDelayMs: 10 });
  const t = await serveMeshtasticTcp(device, { port: 0 });
  assert.match(t.device, /^tcp:\/\/127\.0\.0\.1:\d+$/);
  const host = await tcpHost(t.device);
  await waitFor('attached', () => device.hostAttached);
  mesh.addRemoteNode({ num: 0x0badcafe }).sendText(BROADCAST, 'early');
  await settle(30);
  assert.equal(host.heard, []);
  await handshakeChecked(host, device.num);
  await waitFor('held packet', () => host.packets().length === 1);
  host.take();
  device.sendGarbage();
  host.send({ heartbeat: {} });
  await waitFor('queue status', () => host.heard.some((m) => m.queueStatus));
  assert.ok(host.textLines.some((l) => l.includes('garbage')));
  assert.is(host.badFrames, 0);
  await host.close();
  await t.close();
  device.close();
});

test('TCP: commit_edit_settings reboots: rebooted, the connection drops, a new handshake shows the new owner', async () => {
  const mesh = new MeshtasticMesh();
  const device = new MeshtasticDevice({ name: 'tcp-reboot', mesh, rebootDelayMs: 10 });
  const t = await serveMeshtasticTcp(device, { port: 0 });
  const host = await tcpHost(t.device);
  await handshakeChecked(host, device.num);
  host.send(adminPacket(device.num, { begin_edit_settings: true }));
  host.send(adminPacket(device.num, { set_owner: { long_name: 'After reboot', short_name: 'NEW' } }));
  host.send(adminPacket(device.num, { commit_edit_settings: true }));
  await waitFor('connection dropped', () => host.closed);
  assert.ok(host.heard.some((m) => m.rebooted === true), 'rebooted came before the drop');
  assert.is(device.counters.reboots, 1);
  const next = await tcpHost(t.device);
  const frames = await next.handshake();
  assert.is(frames.find((m) => m.node_info)!.node_info!.user!.long_name, 'After reboot');
  assert.equal(device.counters.admin, { begin_edit_settings: 1, set_owner: 1, commit_edit_settings: 1 });
  await next.close();
  await t.close();
  device.close();
});

test('TCP: dropLink (device fault or transport) closes the client; a newcomer replaces a client; idle clients are dropped', async () => {
  const clock = new FakeClock();
  const device = new MeshtasticDevice({ name: 'tcp-drop' });
  const t = await serveMeshtasticTcp(device, { port: 0, clock, idleTimeoutMs: 60_000 });
  const one = await tcpHost(t.device);
  await one.handshake();
  device.dropLink();
  await waitFor('dropped', () => one.closed);
  const two = await tcpHost(t.device);
  await two.handshake();
  await t.dropLink();
  await waitFor('dropped again', () => two.closed);
  const three = await tcpHost(t.device);
  await waitFor('attached', () => device.hostAttached);
  const four = await tcpHost(t.device);
  await waitFor('replaced', () => three.closed);
  await four.handshake();
  clock.advance(59_999);
  await settle(20);
  assert.not.ok(four.closed);
  clock.advance(1);
  await waitFor('idle drop', () => four.closed);
  await t.close();
  device.close();
});

test('pty: a device behind socat talks to a TCP one on the same mesh; dropLink brings the port back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-mt-pty-test-'));
  const path = join(dir, 'meshtastic0');
  const mesh = new MeshtasticMesh({ ackDelayMs: 5 });
  const serial = new MeshtasticDevice({ name: 'pty-a', mesh });
  const wifi = new MeshtasticDevice({ name: 'tcp-b', mesh });
  const tp = await serveMeshtasticPty(serial, { path });
  const tt = await serveMeshtasticTcp(wifi, { port: 0 });
  assert.is(tp.device, path);
  try {
    let a = await ptyHost(path);
    const b = await tcpHost(tt.device);
    await settle(30);
    assert.equal(a.heard, []);
    await handshakeChecked(a, serial.num);
    await handshakeChecked(b, wifi.num);
    const id = freshId();
    a.send(textPacket(wifi.num, 'over the serial port', { id, wantAck: true }));
    await waitFor('text at b', () => b.packets().some((p) => textOf(p) === 'over the serial port'));
    await waitFor('ack at a', () => a.packets().some((p) => routingOf(p)?.request_id === id));
    serial.sendGarbage();
    a.send({ heartbeat: {} });
    await waitFor('queue status after garbage', () => a.heard.some((m) => m.queueStatus && m.queueStatus.mesh_packet_id === undefined));
    serial.dropLink();
    await waitFor('pty host sees the port go', () => a.closed, 5000);
    await a.close();
    // The pair comes back under the same path.
    a = await openWhenBack(path);
    await handshakeChecked(a, serial.num);
    await a.close();
    await b.close();
  } finally {
    await tp.close();
    await tt.close();
    serial.close();
    wifi.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
