import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rng } from '../../helpers/rng.ts';
import {
  decodeFromRadio, decodeMessage, decodeMeshPacket, decodeStatusMessage, LORA_REGION_PRESET_MAP, type MeshPacket, presetsForRegion, STATUS_MESSAGE,
} from '../../../src/bearers/meshtastic/codec/messages.ts';
import { EXPLICIT_REPLAY_FIELD, REPLAY_KIND, replayedRecord, replayPacketId, replayReport } from '../../../src/bearers/meshtastic/replay.ts';
import { SimNodeDb } from '../../../src/bearers/meshtastic/simulator/node-db.ts';
import { Handshake } from '../../../src/bearers/meshtastic/handshake.ts';

// A 2.8 board's node-database replay (docs/protocols/meshtastic.md 2.9): the id derivation
// against values computed by hand from the firmware's formula (PhoneAPI makeReplayPacketId:
// h = num; h = h*2654435761 + time; h = h*2654435761 + kind, mod 2^32, 0 -> 1), and a replayed
// position packet written byte by byte from mesh.proto's field numbers, not by our encoder.

/** Hex bytes; `#` starts a comment to the end of the line. */
const hex = (s: string) => Uint8Array.from(s.replace(/#.*$/gm, '').trim().split(/\s+/).map((b) => parseInt(b, 16)));

// FromRadio{packet{from 0x0a0b0c0d, to BROADCAST, decoded{portnum POSITION_APP 3,
// payload Position{latitude_i 470000000, longitude_i 80000000, time 0x6a000000}},
// id 0xac77ecf0, rx_time 0x6a000000, rx_snr 4.5, hop_limit 2, priority BACKGROUND 10,
// hop_start 3, transport_mechanism TRANSPORT_LORA 1}}: no channel (0), no rx_rssi.
const REPLAYED_POSITION = hex(`
  12 37                    # FromRadio.packet (2, length-delimited), 55 bytes
    0d 0d 0c 0b 0a          # from (fixed32)
    15 ff ff ff ff          # to
    22 13                   # decoded
      08 03                 # portnum
      12 0f                 # payload: Position
        0d 80 a1 03 1c      # latitude_i 470000000 (sfixed32)
        15 00 b4 c4 04      # longitude_i 80000000
        25 00 00 00 6a      # time 0x6a000000
    35 f0 ec 77 ac          # id 0xac77ecf0
    3d 00 00 00 6a          # rx_time
    45 00 00 90 40          # rx_snr 4.5 (float)
    48 02                   # hop_limit
    58 0a                   # priority BACKGROUND
    78 03                   # hop_start
    a8 01 01                # transport_mechanism 21 = TRANSPORT_LORA
`);

const replayed = (): MeshPacket => {
  const d = decodeFromRadio(REPLAYED_POSITION);
  assert.ok(d.ok, d.ok ? '' : d.error);
  return d.value.packet!;
};

test('replay ids: the firmware derivation, computed by hand', () => {
  assert.is(replayPacketId(0x0a0b0c0d, 0x6a000000, REPLAY_KIND.position), 0xac77ecf0);
  assert.is(replayPacketId(0x0a0b0c0d, 0x6a000000, REPLAY_KIND.device_metrics), 0xac77ecef);
  assert.is(replayPacketId(0x0a0b0c0d, 0x6a000000, REPLAY_KIND.status), 0xac77ed11);
  // A derivation that comes out 0 becomes 1 ("some clients treat id 0 as unset").
  assert.is(replayPacketId(0x0a0b0c0d, 0x6a000000, 0x53881313), 1);
  assert.equal(REPLAY_KIND, { position: 3, device_metrics: 2, environment_metrics: 3, status: 36 });
});

test('a replayed position is recognised and reported with its own time, and no last-heard', () => {
  const p = replayed();
  assert.is(replayedRecord(p), 'position');
  assert.equal(replayReport(p, 'position'), {
    id: '!0a0b0c0d', num: 0x0a0b0c0d,
    position: { latitude: 47, longitude: 8, time: new Date(0x6a000000 * 1000).toISOString() },
  });
});

test('what is live traffic is never taken for a replay', () => {
  const p = replayed();
  assert.is(replayedRecord({ ...p, rx_rssi: -92 }), null, 'heard over the air just now');
  assert.is(replayedRecord({ ...p, id: 0x12345678 }), null, 'an id the derivation does not give');
  assert.is(replayedRecord({ ...p, rx_time: 0x6a000001 }), null, 'the id belongs to another time');
  assert.is(replayedRecord({ ...p, to: 0x11223344 }), null, 'a direct packet');
  assert.is(replayedRecord({ ...p, channel: 1 }), null, 'another channel');
  assert.is(replayedRecord({ ...p, priority: 64 }), null, 'priority DEFAULT');
  assert.is(replayedRecord({ ...p, xeddsa_signed: true }), null, 'a signed packet');
  assert.is(replayedRecord({ ...p, via_mqtt: true }), null, 'via MQTT');
  assert.is(replayedRecord({ ...p, decoded: { ...p.decoded, portnum: 1 } }), null, 'a text');
});

test('an explicit replay mark (the assumed MeshPacket field 23) is recognised whatever the id', () => {
  assert.is(EXPLICIT_REPLAY_FIELD, 23);
  // The same packet with another id (35 78 56 34 12) and field 23 = true (b8 01 01) appended.
  const bytes = Uint8Array.from(REPLAYED_POSITION);
  bytes.set([0x78, 0x56, 0x34, 0x12], 2 + 5 + 5 + 2 + 0x13 + 1);
  const marked = Uint8Array.from([...bytes.subarray(2), 0xb8, 0x01, 0x01]);
  const d = decodeMeshPacket(marked);
  assert.ok(d.ok);
  assert.is(d.value.id, 0x12345678);
  assert.is(replayedRecord(d.value), 'position');
  assert.is(replayedRecord({ ...d.value, rx_rssi: -80 }), null, 'a mark on a packet heard just now is not believed');
});

test('the simulated 2.8 board replays every record in the firmware order, each recognised', () => {
  const db = new SimNodeDb();
  db.seed(0x11, { lastHeard: 1_000, position: { latitude_i: 1, longitude_i: 2, time: 900 }, deviceMetrics: { battery_level: 50 }, status: Uint8Array.of(0x0a, 0x02, 0x6f, 0x6b) });
  db.seed(0x22, { lastHeard: 2_000, environment: Uint8Array.of(0x0d, 0, 0, 0xa0, 0x41) });
  db.seed(0x33, { lastHeard: 3_000, position: { latitude_i: 3, longitude_i: 4, time: 2_500 } }); // the own node: left out
  const packets = db.replay(0x33, 3);
  assert.equal(packets.map((p) => replayedRecord(p)), ['position', 'device_metrics', 'environment_metrics', 'status']);
  assert.equal(packets.map((p) => p.rx_time), [900, 1_000, 2_000, 1_000]);
  const status = decodeStatusMessage(packets[3].decoded!.payload!);
  assert.ok(status.ok && status.value.status === 'ok');
});

test('region presets in the handshake: decoded from mesh.proto bytes', () => {
  // FromRadio.region_presets (19, LD: 9a 01) = LoRaRegionPresetMap{groups [{presets [0, 7]
  // packed, licensed_only true}], region_groups [{region EU_868 3, group_index 0}]}.
  const d = decodeFromRadio(hex('9a 01 0c  0a 06 0a 02 00 07 18 01  12 02 08 03'));
  assert.ok(d.ok, d.ok ? '' : d.error);
  const map = d.value.region_presets!;
  assert.equal(map.groups![0].presets, [0, 7]);
  assert.is(map.groups![0].licensed_only, true);
  assert.equal(presetsForRegion(map, 3)?.presets, [0, 7]);
  assert.is(presetsForRegion(map, 1), null, 'a region the map does not name is not restricted');
});

test('fields a later firmware adds are harmless: an unknown FromRadio variant and an unknown metadata field', () => {
  const h = new Handshake(7);
  // FromRadio field 20 (length-delimited, a variant this codec does not know): a2 01 02 08 01.
  const unknown = decodeFromRadio(hex('a2 01 02 08 01'));
  assert.ok(unknown.ok);
  assert.is(h.take(unknown.value), false);
  // metadata{firmware_version "2.9.0", excluded_modules 0x10, field 30 varint 1}: 6a 0c 0a 05 "2.9.0" 60 10 f0 01 01.
  const meta = decodeFromRadio(hex('6a 0c 0a 05 32 2e 39 2e 30 60 10 f0 01 01'));
  assert.ok(meta.ok, meta.ok ? '' : meta.error);
  h.take(meta.value);
  assert.is(h.take({ config_complete_id: 7 }), true);
  assert.equal([h.state.metadata?.firmware_version, h.state.metadata?.excluded_modules], ['2.9.0', 0x10]);
});

test('fuzz: 10^6 random and mutated packets never throw in the replay check, and the new messages decode safely', () => {
  const random = rng(0x28_2026);
  const byte = () => Math.floor(random() * 256);
  const base = Array.from(REPLAYED_POSITION.subarray(2));
  let recognised = 0;
  for (let i = 0; i < 1_000_000; i++) {
    let input: Uint8Array;
    if (i % 4 === 0) input = Uint8Array.from({ length: Math.floor(random() * 64) }, byte);
    else {
      const b = base.slice();
      for (let m = 1 + Math.floor(random() * 3); m > 0; m--) b[Math.floor(random() * b.length)] = byte();
      input = Uint8Array.from(b);
    }
    const d = decodeMeshPacket(input);
    if (d.ok && replayedRecord(d.value) !== null) recognised++;
    if (i % 10 === 0) {
      decodeMessage(LORA_REGION_PRESET_MAP, input);
      decodeMessage(STATUS_MESSAGE, input);
    }
  }
  // Mutations that leave the id, time, node and shape alone stay replays; most do not.
  assert.ok(recognised > 0 && recognised < 1_000_000, `recognised ${recognised}`);
});

test.run();
