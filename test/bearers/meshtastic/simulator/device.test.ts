import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BROADCAST, CHANNEL_ROLE, CONFIG_TYPE, formatNodeId, MODEM_PRESET, PORT_NUM, PRIORITY, REGION_CODE,
} from '../../../../src/bearers/meshtastic/codec/messages.ts';
import { ERRNO_DISABLED, MeshtasticDevice, type MeshtasticDeviceOptions } from '../../../../src/bearers/meshtastic/simulator/device.ts';
import { MeshtasticMesh } from '../../../../src/bearers/meshtastic/simulator/mesh.ts';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { adminOf, adminPacket, directHost, freshId, randomNonce, routingOf, textOf, textPacket, variants } from './helpers.ts';

// The device at frame level: hosts wired by direct calls, a FakeClock for the mesh's timers
// (air, acks, retransmission, reboots), so nothing depends on timing luck.

function setup(options: MeshtasticDeviceOptions = {}) {
  const clock = new FakeClock();
  const mesh = new MeshtasticMesh({ clock });
  const add = (name: string, more: MeshtasticDeviceOptions = {}) => {
    const device = new MeshtasticDevice({ name, mesh, clock, rebootDelayMs: 100, ...options, ...more });
    return { device, host: directHost(device) };
  };
  return { clock, mesh, add };
}

/** Handshake on a synchronous host: everything arrives within the call. */
function handshake(h: ReturnType<ReturnType<typeof setup>['add']>['host'], nonce = randomNonce()) {
  h.send({ want_config_id: nonce });
  const all = h.take();
  const end = all.findIndex((m) => m.config_complete_id === nonce);
  assert.ok(end >= 0, 'ends with config_complete_id = nonce');
  h.heard.push(...all.slice(end + 1)); // live traffic that followed it
  return all.slice(0, end + 1);
}

test('silent until the host\'s first valid frame; packets heard meanwhile wait for the handshake', () => {
  const { clock, mesh, add } = setup();
  const a = add('a');
  const remote = mesh.addRemoteNode({ num: 0x0badcafe, long_name: 'Far away', short_name: 'FAR' });
  remote.sendText(BROADCAST, 'while nobody listened');
  clock.advance(0);
  a.device.sendGarbage(Uint8Array.of()); // nothing, not even garbage frames
  a.host.writeRaw(new TextEncoder().encode('not a frame\n'));
  a.host.writeRaw(Uint8Array.of(0x94, 0xc3, 0x00, 0x02, 0xff, 0xff)); // a frame, but no ToRadio
  assert.equal(a.host.heard, []);
  assert.is(a.device.counters.badFrames, 1);
  const frames = handshake(a.host);
  assert.not.ok(frames.some((m) => m.packet), 'held packets come after config_complete_id');
  const after = a.host.take();
  assert.is(after.length, 1);
  assert.is(textOf(after[0].packet!), 'while nobody listened');
});

test('handshake: my_info, own node, metadata, 8 channels, config, modules, other nodes, then the nonce', () => {
  const { mesh, add } = setup();
  const a = add('a', { longName: 'Base camp', shortName: 'BASE' });
  add('b');
  mesh.addRemoteNode({ num: 0x0badcafe, long_name: 'Far away', short_name: 'FAR' });
  const nonce = randomNonce();
  const frames = handshake(a.host, nonce);
  const kinds = variants(frames);
  assert.is(kinds[0], 'my_info');
  assert.is(frames[0].my_info!.my_node_num, a.device.num);
  assert.is(kinds[1], 'node_info');
  assert.equal(frames[1].node_info!.user, { id: formatNodeId(a.device.num), long_name: 'Base camp', short_name: 'BASE', hw_model: 37 });
  assert.is(frames.find((m) => m.metadata)!.metadata!.firmware_version, '2.6.11.sim');
  const channels = frames.flatMap((m) => (m.channel ? [m.channel] : []));
  assert.is(channels.length, 8);
  assert.equal(channels.map((c) => c.role ?? CHANNEL_ROLE.DISABLED), [1, 0, 0, 0, 0, 0, 0, 0]);
  assert.equal(channels.map((c) => c.index ?? 0), [0, 1, 2, 3, 4, 5, 6, 7]);
  const lora = frames.find((m) => m.config?.lora)!.config!.lora!;
  assert.equal(
    { region: lora.region, modem_preset: lora.modem_preset ?? 0, hop_limit: lora.hop_limit, tx_enabled: lora.tx_enabled, tx_power: lora.tx_power, channel_num: lora.channel_num },
    { region: REGION_CODE.EU_868, modem_preset: MODEM_PRESET.LONG_FAST, hop_limit: 3, tx_enabled: true, tx_power: 22, channel_num: 1 },
  );
  assert.ok(frames.filter((m) => m.config).length >= 9);
  assert.ok(frames.filter((m) => m.moduleConfig).length >= 13);
  const others = frames.slice(2).flatMap((m) => (m.node_info ? [m.node_info] : []));
  assert.equal(others.map((n) => n.num).sort(), [0x0badcafe, mesh.nodeInfos(a.device.num).find((n) => n.user?.long_name !== 'Far away')!.num!].sort());
  assert.is(others.find((n) => n.num === 0x0badcafe)!.user!.long_name, 'Far away');
  // Order: other nodes after the module config, the nonce last (docs 2.2).
  assert.ok(kinds.lastIndexOf('moduleConfig') < kinds.lastIndexOf('node_info'));
  assert.is(a.device.counters.handshakes, 1);
});

test('nonce 69420 leaves out other nodes; 69421 sends node infos only', () => {
  const { mesh, add } = setup();
  const a = add('a');
  mesh.addRemoteNode({ num: 0x0badcafe });
  const frames = handshake(a.host, 69420);
  assert.is(frames.filter((m) => m.node_info).length, 1, 'only the own node');
  assert.is(frames.find((m) => m.node_info)!.node_info!.num, a.device.num);
  const nodesOnly = handshake(a.host, 69421);
  assert.equal([...new Set(variants(nodesOnly))], ['my_info', 'node_info', 'config_complete_id']);
  assert.is(nodesOnly.filter((m) => m.node_info).length, 2);
});

test('heartbeat and every ToRadio packet answer a QueueStatus', () => {
  const { add } = setup({ queueMaxlen: 16 });
  const a = add('a');
  handshake(a.host);
  a.host.send({ heartbeat: {} });
  assert.equal(a.host.take().map((m) => m.queueStatus), [{ free: 16, maxlen: 16 }]);
  const id = freshId();
  a.host.send(textPacket(BROADCAST, 'hello', { id }));
  assert.equal(a.host.take().map((m) => m.queueStatus), [{ free: 16, maxlen: 16, mesh_packet_id: id }]);
  assert.is(a.device.counters.heartbeats, 1);
});

test('two devices: a direct text with want_ack arrives, and the sender gets the destination\'s ack', () => {
  const { clock, add } = setup();
  const a = add('a');
  const b = add('b');
  handshake(a.host);
  handshake(b.host);
  const id = freshId();
  const sent: unknown[] = [];
  a.device.on('transmitted', (p) => sent.push(p));
  a.host.send(textPacket(b.device.num, 'over the mesh', { id, wantAck: true, hopLimit: 3 }));
  assert.equal(a.host.take().map((m) => m.queueStatus?.mesh_packet_id), [id]);
  clock.advance(0);
  const got = b.host.take().map((m) => m.packet!);
  assert.is(got.length, 1);
  assert.is(textOf(got[0]), 'over the mesh');
  assert.is(got[0].from, a.device.num);
  assert.is(got[0].to, b.device.num);
  assert.is(got[0].id, id);
  assert.is(got[0].rx_snr, 6.25);
  assert.is(got[0].rx_rssi, -80);
  assert.is(got[0].hop_start, 3);
  assert.is(got[0].hop_limit, 3, 'a direct neighbour: no hop taken');
  assert.is(got[0].rx_time, Math.floor(clock.now() / 1000));
  assert.is(sent.length, 1);
  assert.equal(a.host.take(), [], 'the ack takes ackDelayMs');
  clock.advance(200);
  const ack = a.host.take().map((m) => m.packet!);
  assert.is(ack.length, 1);
  assert.equal(routingOf(ack[0]), { error: 'NONE', request_id: id, from: b.device.num, to: a.device.num });
  assert.is(ack[0].priority, PRIORITY.ACK);
  assert.equal(b.host.take(), [], 'the ack is not shown to the destination\'s host');
});

test('refuseAcks: the destination answers with the named error; a local error comes from the own node', () => {
  const { clock, add } = setup();
  const a = add('a', { faults: { refuseAcks: 'NO_CHANNEL' } });
  const b = add('b');
  handshake(a.host);
  handshake(b.host);
  const id = freshId();
  a.host.send(textPacket(b.device.num, 'refused', { id, wantAck: true }));
  clock.advance(200);
  assert.equal(a.host.packets().map(routingOf), [{ error: 'NO_CHANNEL', request_id: id, from: b.device.num, to: a.device.num }]);
  a.host.take();
  a.device.faults.refuseAcks = 'MAX_RETRANSMIT';
  const id2 = freshId();
  a.host.send(textPacket(b.device.num, 'given up', { id: id2, wantAck: true }));
  clock.advance(2000);
  assert.equal(a.host.packets().map(routingOf), [{ error: 'MAX_RETRANSMIT', request_id: id2, from: a.device.num, to: a.device.num }]);
  assert.is(b.host.packets().length, 2, 'the destination heard both');
});

test('unknown destination: MAX_RETRANSMIT from the own node after the retransmission timeout', () => {
  const { clock, add } = setup({ retransmitTimeoutMs: 3000 });
  const a = add('a');
  add('b');
  handshake(a.host);
  const id = freshId();
  a.host.send(textPacket(0x12345678, 'anyone?', { id, wantAck: true }));
  a.host.take();
  clock.advance(2999);
  assert.equal(a.host.take(), []);
  clock.advance(1);
  assert.equal(a.host.packets().map(routingOf), [{ error: 'MAX_RETRANSMIT', request_id: id, from: a.device.num, to: a.device.num }]);
});

test('broadcast with want_ack: the implicit ack when another node is there, MAX_RETRANSMIT when alone', () => {
  const { clock, add } = setup();
  const a = add('a');
  handshake(a.host);
  const lonely = freshId();
  a.host.send(textPacket(BROADCAST, 'alone', { id: lonely, wantAck: true }));
  clock.advance(5000);
  assert.equal(a.host.packets().map(routingOf), [{ error: 'MAX_RETRANSMIT', request_id: lonely, from: a.device.num, to: a.device.num }]);
  a.host.take();
  const b = add('b');
  handshake(b.host);
  const id = freshId();
  a.host.send(textPacket(BROADCAST, 'hello all', { id, wantAck: true }));
  clock.advance(200);
  assert.equal(a.host.packets().map(routingOf), [{ error: 'NONE', request_id: id, from: a.device.num, to: a.device.num }]);
  assert.equal(b.host.packets().map(textOf), ['hello all']);
  assert.is(b.host.packets()[0].to, BROADCAST);
});

test('remote nodes: inject traffic from the network, record what they got, and get the device\'s acks', () => {
  const { clock, mesh, add } = setup();
  const a = add('a');
  handshake(a.host);
  const far = mesh.addRemoteNode({ num: 0x0badcafe, long_name: 'Far away', short_name: 'FAR' });
  const sent = far.sendText(a.device.num, 'from the hills', { wantAck: true });
  clock.advance(200);
  const got = a.host.packets();
  assert.equal(got.map(textOf), ['from the hills']);
  assert.equal([got[0].from, got[0].id, got[0].hop_start! - got[0].hop_limit!], [0x0badcafe, sent.id, 0]);
  assert.equal(far.acks.map(routingOf), [{ error: 'NONE', request_id: sent.id!, from: a.device.num, to: 0x0badcafe }]);
  a.host.take();
  a.host.send(textPacket(far.num, 'hello back'));
  clock.advance(0);
  assert.equal(far.received.map(textOf), ['hello back']);
  // A node that left: MAX_RETRANSMIT.
  far.remove();
  const id = freshId();
  a.host.send(textPacket(far.num, 'gone?', { id, wantAck: true }));
  clock.advance(2000);
  assert.equal(a.host.packets().map(routingOf).at(-1), { error: 'MAX_RETRANSMIT', request_id: id, from: a.device.num, to: a.device.num });
});

test('repeatLast re-delivers the last packet with the same from and id', () => {
  const { clock, mesh, add } = setup();
  const a = add('a');
  handshake(a.host);
  const far = mesh.addRemoteNode({ num: 0x0badcafe });
  const sent = far.sendText(BROADCAST, 'twice');
  clock.advance(0);
  assert.ok(a.device.repeatLast());
  assert.equal(a.host.packets().map((p) => [p.from, p.id, textOf(p)]), [[0x0badcafe, sent.id, 'twice'], [0x0badcafe, sent.id, 'twice']]);
});

test('a repeated id on the same connection is dropped without QueueStatus; so is a payload over 233 bytes', () => {
  const { clock, add } = setup();
  const a = add('a');
  const b = add('b');
  handshake(a.host);
  handshake(b.host);
  a.host.send(textPacket(b.device.num, 'once', { id: 77 }));
  a.host.send(textPacket(b.device.num, 'once again', { id: 77 }));
  a.host.send(textPacket(b.device.num, 'x'.repeat(234)));
  clock.advance(0);
  assert.is(a.host.take().filter((m) => m.queueStatus).length, 1);
  assert.equal(b.host.packets().map(textOf), ['once']);
  assert.is(a.device.counters.duplicateIds, 1);
  assert.is(a.device.counters.tooLarge, 1);
});

test('admin: get_owner answers only with want_response; set_owner and commit reboot, the new handshake reports the owner', () => {
  const { clock, add } = setup();
  const a = add('a');
  const rebooted: string[] = [];
  const admin: unknown[] = [];
  a.device.on('rebooted', (r) => rebooted.push(r));
  a.device.on('admin', (m) => admin.push(m));
  handshake(a.host);
  const own = a.device.num;
  a.host.send(adminPacket(own, { get_owner_request: true }));
  assert.equal(a.host.packets(), []);
  const ask = freshId();
  a.host.send(adminPacket(own, { get_owner_request: true }, { id: ask, wantResponse: true }));
  const answer = a.host.packets();
  assert.is(answer.length, 1);
  assert.equal([answer[0].from, answer[0].to, answer[0].decoded!.request_id], [own, own, ask]);
  assert.is(adminOf(answer[0])!.get_owner_response!.long_name, `Meshtastic ${formatNodeId(own).slice(-4)}`);
  a.host.take();
  a.host.send(adminPacket(own, { begin_edit_settings: true }));
  const set = freshId();
  a.host.send(adminPacket(own, { set_owner: { long_name: 'Relay hut', short_name: 'HUT' } }, { id: set, wantAck: true }));
  assert.equal(a.host.packets().map(routingOf), [{ error: 'NONE', request_id: set, from: own, to: own }], 'a local want_ack is acked by the own node');
  a.host.send(adminPacket(own, { commit_edit_settings: true }));
  a.host.take();
  clock.advance(99);
  assert.equal(rebooted, []);
  clock.advance(1);
  assert.equal(a.host.take().map((m) => m.rebooted), [true]);
  assert.equal(rebooted, ['commit_edit_settings']);
  // The host session is forgotten: silent until a frame, then a new handshake is needed.
  a.host.send({ heartbeat: {} });
  assert.equal(a.host.take().map((m) => m.queueStatus !== undefined), [true]);
  const frames = handshake(a.host);
  assert.equal(frames.find((m) => m.node_info)!.node_info!.user!.long_name, 'Relay hut');
  assert.is(frames.find((m) => m.my_info)!.my_info!.reboot_count, 1);
  assert.is(a.device.counters.reboots, 1);
  assert.equal(a.device.counters.admin, { get_owner_request: 2, begin_edit_settings: 1, set_owner: 1, commit_edit_settings: 1 });
  assert.is(admin.length, 5);
});

test('admin: set_owner with a long_name over 39 bytes or a short_name over 4 is ignored silently', () => {
  const { add } = setup();
  const a = add('a', { longName: 'Kept' });
  handshake(a.host);
  a.host.send(adminPacket(a.device.num, { set_owner: { long_name: 'x'.repeat(40), short_name: 'OK' } }, { wantResponse: true }));
  a.host.send(adminPacket(a.device.num, { set_owner: { long_name: 'Fine', short_name: 'ÄÄÄ' } }, { wantResponse: true }));
  assert.equal(a.host.packets(), []);
  assert.is(a.device.owner.long_name, 'Kept');
  assert.is(a.device.counters.adminIgnored, 2);
  a.host.send(adminPacket(a.device.num, { set_owner: { long_name: 'y'.repeat(39), short_name: 'ÄÄ' } }));
  assert.equal([a.device.owner.long_name, a.device.owner.short_name], ['y'.repeat(39), 'ÄÄ']);
});

test('admin: a partial set_config lora replaces it all: region UNSET, transmit off, packets refused', () => {
  const { clock, add } = setup();
  const a = add('a');
  const b = add('b');
  handshake(a.host);
  handshake(b.host);
  const own = a.device.num;
  a.host.send(adminPacket(own, { set_config: { lora: { hop_limit: 5 } } }));
  clock.advance(100);
  assert.is(a.device.counters.reboots, 1, 'region changed: a reboot');
  handshake(a.host);
  const ask = freshId();
  a.host.send(adminPacket(own, { get_config_request: CONFIG_TYPE.LORA_CONFIG }, { id: ask, wantResponse: true }));
  const lora = adminOf(a.host.packets()[0])!.get_config_response!.lora!;
  assert.equal(lora, { hop_limit: 5 });
  assert.is(lora.region ?? REGION_CODE.UNSET, REGION_CODE.UNSET);
  assert.not.ok(lora.tx_enabled);
  a.host.take();
  const id = freshId();
  a.host.send(textPacket(b.device.num, 'cannot go', { id, wantAck: true }));
  clock.advance(5000);
  assert.equal(a.host.take().map((m) => m.queueStatus), [{ res: ERRNO_DISABLED, free: 16, maxlen: 16, mesh_packet_id: id }]);
  assert.equal(b.host.take(), []);
  // The whole config back (read, change, send): no reboot for a hop_limit-only change.
  a.host.send(adminPacket(own, { set_config: { lora: { ...a.device.lora, region: REGION_CODE.EU_868, use_preset: true, tx_enabled: true } } }));
  clock.advance(100);
  assert.is(a.device.counters.reboots, 2);
  handshake(a.host);
  a.host.send(adminPacket(own, { set_config: { lora: { ...a.device.lora, hop_limit: 4 } } }));
  clock.advance(1000);
  assert.is(a.device.counters.reboots, 2, 'hop_limit only: no reboot');
  assert.is(a.device.lora.hop_limit, 4);
});

test('admin: set_module_config replaces the module; state persists across reboots; get_module_config answers it', () => {
  const { clock, add } = setup();
  const a = add('a');
  handshake(a.host);
  const own = a.device.num;
  a.host.send(adminPacket(own, { begin_edit_settings: true }));
  a.host.send(adminPacket(own, { set_module_config: { telemetry: { device_update_interval: 900 } } }));
  clock.advance(1000);
  assert.is(a.device.counters.reboots, 0, 'held until commit');
  a.host.send(adminPacket(own, { commit_edit_settings: true }));
  clock.advance(100);
  assert.is(a.device.counters.reboots, 1);
  const frames = handshake(a.host);
  assert.equal(frames.find((m) => m.moduleConfig?.telemetry)!.moduleConfig, { telemetry: { device_update_interval: 900 } });
  const ask = freshId();
  a.host.send(adminPacket(own, { get_module_config_request: 5 }, { id: ask, wantResponse: true }));
  assert.equal(adminOf(a.host.packets()[0])!.get_module_config_response, { telemetry: { device_update_interval: 900 } });
});

test('faults: garbage between frames, neverCompleteHandshake, silent', () => {
  const { clock, mesh, add } = setup();
  const a = add('a');
  handshake(a.host);
  a.device.sendGarbage();
  a.host.send({ heartbeat: {} });
  assert.ok(a.host.textLines.some((l) => l.includes('garbage from the simulator')), a.host.textLines.join('|'));
  assert.ok(a.host.decoder.counts.oversize >= 1);
  assert.equal(a.host.take().map((m) => m.queueStatus !== undefined), [true], 'the next frame decodes');

  const b = add('b', { faults: { neverCompleteHandshake: true } });
  b.host.send({ want_config_id: 4242 });
  const frames = b.host.take();
  assert.ok(frames.some((m) => m.my_info) && frames.some((m) => m.config));
  assert.not.ok(frames.some((m) => m.config_complete_id !== undefined));
  mesh.addRemoteNode({ num: 0x0badcafe }).sendText(BROADCAST, 'held forever');
  clock.advance(0);
  assert.equal(b.host.take(), [], 'packets wait for a handshake that never completes');
  assert.equal(a.host.packets().map(textOf), ['held forever'], 'a configured host got it');
  a.host.take();

  a.device.faults.silent = true;
  a.host.send({ heartbeat: {} });
  const id = freshId();
  const far = mesh.addRemoteNode({ num: 0x0000beef });
  const dm = far.sendText(a.device.num, 'hello?', { wantAck: true, id });
  clock.advance(5000);
  assert.equal(a.host.take(), []);
  assert.equal(far.acks.map(routingOf), [{ error: 'MAX_RETRANSMIT', request_id: dm.id!, from: 0x0000beef, to: 0x0000beef }], 'a silent node acks nothing');
  a.device.faults.silent = false;
  a.host.send({ heartbeat: {} });
  assert.is(a.host.take().length, 1);
});

test('a host that goes away: packets are held for the next one (up to the queue size)', () => {
  const { clock, mesh, add } = setup({ toPhoneQueue: 2 });
  const a = add('a');
  handshake(a.host);
  a.device.detachHost();
  const far = mesh.addRemoteNode({ num: 0x0badcafe });
  for (const t of ['one', 'two', 'three']) far.sendText(BROADCAST, t);
  clock.advance(0);
  const host = directHost(a.device);
  host.send({ want_config_id: 99 });
  assert.equal(host.packets().map(textOf), ['two', 'three']);
  assert.is(a.device.counters.toPhoneDropped, 1);
});

test('ADMIN_APP is local only: a packet to another node is transmitted, not applied', () => {
  const { clock, add } = setup();
  const a = add('a');
  const b = add('b');
  handshake(a.host);
  handshake(b.host);
  a.host.send(adminPacket(b.device.num, { set_owner: { long_name: 'Hijacked' } }));
  clock.advance(0);
  assert.is(b.device.owner.long_name, `Meshtastic ${formatNodeId(b.device.num).slice(-4)}`);
  assert.equal(b.host.packets().map((p) => p.decoded!.portnum), [PORT_NUM.ADMIN_APP]);
});

test.run();
