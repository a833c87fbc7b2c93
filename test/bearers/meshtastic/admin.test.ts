import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { AckBook, DeviceQueue } from '../../../src/bearers/meshtastic/acks.ts';
import { editSession, loraChange, moduleChanges, ownerChange, radioReport } from '../../../src/bearers/meshtastic/admin.ts';
import { MODEM_PRESET, REGION_CODE, ROUTING_ERROR, type LoRaConfig } from '../../../src/bearers/meshtastic/codec/messages.ts';
import { Handshake, newNonce } from '../../../src/bearers/meshtastic/handshake.ts';

// The device's settings against the bridge's (admin.ts), the handshake collector, and the
// acknowledgement book with the device queue: pure parts of the driver, each edge named.

const lora: LoRaConfig = { use_preset: true, modem_preset: MODEM_PRESET.LONG_FAST, region: REGION_CODE.EU_868, hop_limit: 3, tx_enabled: true, tx_power: 27, channel_num: 0, sx126x_rx_boosted_gain: true, ignore_incoming: [5] };
const radio = { region: 'EU_868', modem_preset: 'LONG_FAST', channel_num: 0, hop_limit: 3, tx_power: 27 };

test('radio: equal settings push nothing; a change sends the WHOLE LoRa config the device reported, changed fields only', () => {
  assert.equal(radioReport(lora), radio);
  assert.is(loraChange(radio, lora), null);
  assert.is(loraChange(radio, undefined), null, 'a device that reported no LoRa config is left alone');
  const c = loraChange({ ...radio, modem_preset: 'MEDIUM_FAST', hop_limit: 5 }, lora)!;
  assert.equal(c.fields, ['radio.modem_preset', 'radio.hop_limit']);
  assert.equal(c.messages, [{ set_config: { lora: { ...lora, modem_preset: MODEM_PRESET.MEDIUM_FAST, hop_limit: 5 } } }], 'boosted gain and ignore list ride along');
  const fromUnset = loraChange({ ...radio, region: 'US' }, { region: REGION_CODE.UNSET, tx_enabled: false })!;
  assert.equal(fromUnset.messages[0].set_config!.lora!.tx_enabled, true, 'a region set means the transmitter on');
  assert.is(fromUnset.messages[0].set_config!.lora!.region, REGION_CODE.US);
});

test('owner: names compared byte for byte; the rest of the User kept', () => {
  const user = { id: '!0000abcd', long_name: 'fieldbridge', short_name: 'FB', hw_model: 9 };
  assert.is(ownerChange({ long_name: 'fieldbridge', short_name: 'FB' }, user), null);
  const c = ownerChange({ long_name: 'Ridge gateway', short_name: 'RG' }, user)!;
  assert.equal(c.fields, ['owner.long_name', 'owner.short_name']);
  assert.equal(c.messages, [{ set_owner: { ...user, long_name: 'Ridge gateway', short_name: 'RG' } }]);
});

test('modules: only variants the device reported, only firmware fields, zero for a field the device left out', () => {
  const desired = {
    telemetry: { device_update_interval: 900, environment_measurement_enabled: false, environment_update_interval: 1800 },
    canned_message: { enabled: true, send_bell: false, messages: ['ok', 'help'] },
    range_test: { enabled: true, sender: 0, save: false },
    position: { position_broadcast_secs: 900, position_broadcast_smart_enabled: true, fixed_position: false, gps_update_interval: 120 },
    beacon: { enabled: true, interval: 3600, text: 'x', channel: 0 },
  };
  const c = moduleChanges(desired, {
    modules: { telemetry: { device_update_interval: 1800, environment_update_interval: 1800, power_measurement_enabled: true }, canned_message: { enabled: true } },
    position: { position_broadcast_secs: 900, position_broadcast_smart_enabled: true, gps_update_interval: 120, gps_mode: 1 },
  })!;
  assert.equal(c.fields, ['modules.telemetry.device_update_interval'], 'range_test not reported, canned messages ours, position equal, beacon ours');
  assert.equal(c.messages, [{ set_module_config: { telemetry: { device_update_interval: 900, environment_update_interval: 1800, power_measurement_enabled: true } } }]);
  assert.equal(editSession([c]).map((m) => Object.keys(m)[0]), ['begin_edit_settings', 'set_module_config', 'commit_edit_settings']);
  assert.is(moduleChanges(desired, { modules: {} }), null);
});

test('handshake: collects in any order, ignores another nonce\'s end, splits the own node from the others', () => {
  const h = new Handshake(7777);
  assert.not.ok(h.take({ node_info: { num: 2, user: { long_name: 'other' }, snr: 4 } }));
  assert.not.ok(h.take({ config: { lora } }));
  assert.not.ok(h.take({ my_info: { my_node_num: 1 } }));
  assert.not.ok(h.take({ node_info: { num: 1, user: { long_name: 'me', short_name: 'ME' } } }));
  assert.not.ok(h.take({ moduleConfig: { telemetry: { device_update_interval: 60 } } }));
  assert.not.ok(h.take({ config_complete_id: 69420 }), 'a probe\'s or an old handshake\'s end is not ours');
  assert.ok(h.take({ config_complete_id: 7777 }));
  assert.equal(h.state.owner, { long_name: 'me', short_name: 'ME' });
  assert.equal(h.state.nodes.map((n) => [n.id, n.long_name, n.snr_db]), [['!00000002', 'other', 4]]);
  assert.equal(h.state.modules.telemetry, { device_update_interval: 60 });
  assert.equal(h.state.lora, lora);
  const seq = [0, 1 / 0x1_0000_0000, 69420 / 0x1_0000_0000, 0.5];
  assert.is(newNonce(() => seq.shift()!), 0x8000_0000, 'reserved nonces 0, 1 and 69420 are skipped');
});

test('acks: NONE delivers naming the acking node, a broadcast says only a rebroadcast was heard, errors name themselves, silence times out', async () => {
  const clock = new FakeClock();
  const book = new AckBook(clock);
  const direct = book.wait(1, false, 60_000);
  const bcast = book.wait(2, true, 60_000);
  const nak = book.wait(3, false, 60_000);
  const silent = book.wait(4, false, 60_000);
  assert.ok(book.settle(1, 0xbeef, ROUTING_ERROR.NONE));
  assert.ok(book.settle(2, 0x1, ROUTING_ERROR.NONE));
  assert.ok(book.settle(3, 0x1, ROUTING_ERROR.TOO_LARGE));
  assert.not.ok(book.settle(99, 0x1, ROUTING_ERROR.NONE), 'an ack nobody waits for');
  assert.equal(await direct, { ok: true, meta: { ack: 'acknowledged', acked_by: '!0000beef' } });
  assert.equal(await bcast, { ok: true, meta: { ack: 'rebroadcast heard' } });
  assert.equal(await nak, { ok: false, retryable: false, error: 'ERR_MESHTASTIC_TOO_LARGE: the mesh answered TOO_LARGE' });
  clock.advance(60_000);
  assert.equal(await silent, { ok: false, retryable: true, error: 'ERR_MESHTASTIC_NO_ACK: no acknowledgement within 60 s' });
  const refused = book.wait(6, false, 60_000);
  assert.ok(book.refuse(6, 34));
  assert.not.ok(book.refuse(6, 34), 'once');
  const r = await refused;
  assert.ok(!r.ok && r.retryable && /ERR_MESHTASTIC_REFUSED: the device refused the packet \(queue status 34/.test(r.error));
  const lost = book.wait(5, false, 60_000);
  book.failAll('ERR_MESHTASTIC_OFFLINE: unplugged');
  assert.equal(await lost, { ok: false, retryable: true, error: 'ERR_MESHTASTIC_OFFLINE: unplugged' });
  assert.is(book.size, 0);
});

test('device queue: free until told, then never more writes than the device has room for; no room in time is no send', async () => {
  const clock = new FakeClock();
  const q = new DeviceQueue();
  assert.ok(await q.room(clock, 1000), 'unknown: go');
  q.status(1, 16);
  assert.ok(await q.room(clock, 1000), 'the one slot');
  const waiting = [q.room(clock, 1000), q.room(clock, 1000), q.room(clock, 1000)];
  q.status(2, 16);
  const granted: boolean[] = [];
  waiting.forEach((p) => void p.then((g) => granted.push(g)));
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(granted, [true, true], 'two slots: two waiters go, each taking one');
  assert.is(q.free, 0);
  clock.advance(1000);
  assert.is(await waiting[2], false, 'the third gives up');
  q.status(1, 16);
  assert.is(q.free, 1, 'and takes no slot later');
  q.giveBack();
  assert.equal([q.free, q.max], [2, 16]);
});

test('a direct message is delivered by its destination\'s NONE only; a relay\'s NONE is progress', async () => {
  const clock = new FakeClock();
  const book = new AckBook(clock);
  const direct = book.wait(21, false, 60_000, 0xbeef);
  assert.ok(book.settle(21, 0x0001, ROUTING_ERROR.NONE), 'the own node heard a relay repeat it');
  let done = false;
  void direct.then(() => (done = true));
  await Promise.resolve();
  assert.not.ok(done, 'still waiting');
  book.settle(21, 0xbeef, ROUTING_ERROR.NONE);
  assert.equal(await direct, { ok: true, meta: { ack: 'acknowledged', acked_by: '!0000beef' } });
});

test.run();
