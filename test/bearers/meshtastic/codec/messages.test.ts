import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ADMIN_MESSAGE, type AdminMessage, adminVariant, BROADCAST, CONFIG, CONFIG_TYPE, configVariant, decodeAdminMessage, decodeConfig,
  decodeFromRadio, decodeLoRaConfig, decodeMeshPacket, decodeMessage, decodePosition, decodeRouting, decodeTelemetry, decodeToRadio,
  decodeUser, encodeAdminMessage, encodeConfig, encodeFromRadio, encodeLoRaConfig, encodeMeshPacket, encodeMessage, encodePosition,
  encodeRouting, encodeTelemetry, encodeToRadio, encodeToRadioFrame, FROM_RADIO, type FromRadio, fieldNo, fromRadioVariant,
  isKnownPort, LORA_CONFIG, MESH_PACKET, type MessageSchema, MODEM_PRESET, MODULE_CONFIG, moduleConfigVariant, nameOf, PORT_NUM,
  portName, type Position, POSITION, REGION_CODE, ROUTING, ROUTING_ERROR, TELEMETRY, TO_RADIO, type ToRadio, USER, valueOf,
} from '../../../../src/bearers/meshtastic/codec/messages.ts';

const hex = (s: string) => Uint8Array.from(s.replace(/#.*$/gm, '').trim().split(/\s+/).filter(Boolean).map((b) => parseInt(b, 16)));
const toHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0').toUpperCase()).join(' ');
const text = (s: string) => new TextEncoder().encode(s);

function decoded<T>(schema: MessageSchema<T>, bytes: Uint8Array): T {
  const r = decodeMessage(schema, bytes);
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

// Fixtures computed by hand from the proto definitions (meshtastic/protobufs; field numbers
// cited in src/bearers/meshtastic/codec/*.ts). A tag is (field << 3) | wire type: 0 varint,
// 2 length-delimited, 5 fixed32 (little-endian). Varints are 7 bits a byte, low group first,
// high bit = more follows. Each fixture is checked three ways: parse, generate, round trip.
interface Fixture<T> {
  name: string;
  schema: MessageSchema<T>;
  wire: string;
  value: T;
}

const NODE = 0xa1b2c3d4; // "!a1b2c3d4"; fixed32 LE: D4 C3 B2 A1; varint: D4 87 CB 8D 0A

const fixtures: Fixture<any>[] = [
  {
    // docs/protocols/meshtastic.md 2.2 (without its 94 C3 00 04 frame header)
    name: 'ToRadio want_config_id 69420 (docs 2.2)',
    schema: TO_RADIO,
    wire: `18 AC 9E 04   # tag 3<<3|0 = 18; 69420 = 0x10F2C: groups 2C 1E 04 -> AC 9E 04`,
    value: { want_config_id: 69420 } satisfies ToRadio,
  },
  {
    name: 'ToRadio want_config_id 0xDEADBEEF (five-byte varint)',
    schema: TO_RADIO,
    wire: `18 EF FD B6 F5 0D   # 3735928559: groups 6F 7D 36 75 0D`,
    value: { want_config_id: 0xdeadbeef } satisfies ToRadio,
  },
  {
    name: 'ToRadio heartbeat (docs 2.2)',
    schema: TO_RADIO,
    wire: `3A 00   # tag 7<<3|2 = 3A, empty Heartbeat`,
    value: { heartbeat: {} } satisfies ToRadio,
  },
  {
    name: 'ToRadio disconnect (docs 2.2)',
    schema: TO_RADIO,
    wire: `20 01   # tag 4<<3|0`,
    value: { disconnect: true } satisfies ToRadio,
  },
  {
    // docs/protocols/meshtastic.md 2.5 (without its frame header 94 C3 00 16)
    name: 'ToRadio broadcast text "hi" (docs 2.5)',
    schema: TO_RADIO,
    wire: `
      0A 14                 # ToRadio.packet = 1, 20 bytes
      15 FF FF FF FF        # MeshPacket.to = 2 fixed32: broadcast
      22 06                 # MeshPacket.decoded = 4, 6 bytes
        08 01               #   Data.portnum = 1: TEXT_MESSAGE_APP
        12 02 68 69         #   Data.payload = 2: "hi"
      35 78 56 34 12        # MeshPacket.id = 6 fixed32: 0x12345678
      48 03                 # MeshPacket.hop_limit = 9: 3`,
    value: { packet: { to: BROADCAST, decoded: { portnum: PORT_NUM.TEXT_MESSAGE_APP, payload: text('hi') }, id: 0x12345678, hop_limit: 3 } } satisfies ToRadio,
  },
  {
    name: 'FromRadio packet: text received over the air',
    schema: FROM_RADIO,
    wire: `
      08 07                 # FromRadio.id = 1: 7
      12 30                 # FromRadio.packet = 2, 48 bytes
      0D D4 C3 B2 A1        # MeshPacket.from = 1 fixed32
      15 FF FF FF FF        # MeshPacket.to = 2
      22 06 08 01 12 02 6F 6B   # decoded: TEXT_MESSAGE_APP "ok"
      35 FE CA AD 0B        # MeshPacket.id = 6: 0x0BADCAFE
      3D 00 F1 53 65        # MeshPacket.rx_time = 7 fixed32: 1700000000 = 0x6553F100
      45 00 00 C8 40        # MeshPacket.rx_snr = 8 float: 6.25 = 0x40C80000
      48 03                 # MeshPacket.hop_limit = 9
      60 A1 FF FF FF FF FF FF FF FF 01   # MeshPacket.rx_rssi = 12 int32: -95, a 10-byte varint
      78 03                 # MeshPacket.hop_start = 15: tag 15<<3|0 = 78`,
    value: {
      id: 7,
      packet: {
        from: NODE, to: BROADCAST, decoded: { portnum: 1, payload: text('ok') }, id: 0x0badcafe, rx_time: 1700000000, rx_snr: 6.25,
        hop_limit: 3, rx_rssi: -95, hop_start: 3,
      },
    } satisfies FromRadio,
  },
  {
    name: 'FromRadio packet: Routing nak RATE_LIMIT_EXCEEDED for request 0x12345678',
    schema: FROM_RADIO,
    wire: `
      12 1E                 # FromRadio.packet = 2, 30 bytes
      0D D4 C3 B2 A1        # from: own node
      15 D4 C3 B2 A1        # to: own node
      22 0B                 # decoded, 11 bytes
        08 05               #   Data.portnum: ROUTING_APP
        12 02 18 26         #   Data.payload: Routing.error_reason = 3: 38 RATE_LIMIT_EXCEEDED
        35 78 56 34 12      #   Data.request_id = 6 fixed32: 0x12345678
      35 01 00 00 00        # MeshPacket.id = 6: 1
      58 78                 # MeshPacket.priority = 11: tag 58; 120 ACK`,
    value: {
      packet: {
        from: NODE, to: NODE, decoded: { portnum: PORT_NUM.ROUTING_APP, payload: hex('18 26'), request_id: 0x12345678 }, id: 1, priority: 120,
      },
    } satisfies FromRadio,
  },
  {
    name: 'Routing ack: error_reason NONE is written although 0 (oneof member)',
    schema: ROUTING,
    wire: `18 00`,
    value: { error_reason: ROUTING_ERROR.NONE },
  },
  {
    name: 'FromRadio queueStatus',
    schema: FROM_RADIO,
    wire: `
      08 2A                 # FromRadio.id: 42
      5A 0A                 # FromRadio.queueStatus = 11: tag 11<<3|2 = 5A, 10 bytes
        10 0F               #   free = 2: 15   (res = 1 is 0: not written)
        18 10               #   maxlen = 3: 16
        20 F8 AC D1 91 01   #   mesh_packet_id = 4 uint32: 0x12345678`,
    value: { id: 42, queueStatus: { free: 15, maxlen: 16, mesh_packet_id: 0x12345678 } } satisfies FromRadio,
  },
  {
    name: 'FromRadio config: LoRa',
    schema: FROM_RADIO,
    wire: `
      2A 17                 # FromRadio.config = 5, 23 bytes
      32 15                 # Config.lora = 6, 21 bytes
        08 01               #   use_preset = 1 (modem_preset = 2 is LONG_FAST 0: not written)
        38 03               #   region = 7: EU_868
        40 03               #   hop_limit = 8
        48 01               #   tx_enabled = 9
        50 1B               #   tx_power = 10: 27
        68 01               #   sx126x_rx_boosted_gain = 13: tag 68
        BA 06 03 01 AC 02   #   ignore_incoming = 103 packed: tag 826 = BA 06; [1, 300]
        C8 06 01            #   config_ok_to_mqtt = 105: tag 840 = C8 06`,
    value: {
      config: {
        lora: {
          use_preset: true, region: REGION_CODE.EU_868, hop_limit: 3, tx_enabled: true, tx_power: 27, sx126x_rx_boosted_gain: true,
          ignore_incoming: [1, 300], config_ok_to_mqtt: true,
        },
      },
    } satisfies FromRadio,
  },
  {
    name: 'FromRadio my_info, config_complete_id, rebooted',
    schema: FROM_RADIO,
    wire: `1A 06 08 D4 87 CB 8D 0A   # my_info = 3: my_node_num = 1 varint 0xA1B2C3D4`,
    value: { my_info: { my_node_num: NODE } } satisfies FromRadio,
  },
  {
    name: 'FromRadio config_complete_id 69420',
    schema: FROM_RADIO,
    wire: `38 AC 9E 04   # config_complete_id = 7`,
    value: { config_complete_id: 69420 } satisfies FromRadio,
  },
  {
    name: 'FromRadio channel: primary with the default key',
    schema: FROM_RADIO,
    wire: `
      52 0B                 # FromRadio.channel = 10, 11 bytes (Channel.index 0: not written)
        12 07               #   Channel.settings = 2
          12 01 01          #     psk = 2: the default key index 1
          3A 02 08 0D       #     module_settings = 7: position_precision = 1: 13
        18 01               #   Channel.role = 3: PRIMARY`,
    value: { channel: { settings: { psk: hex('01'), module_settings: { position_precision: 13 } }, role: 1 } } satisfies FromRadio,
  },
  {
    name: 'ToRadio admin set_owner to the own node, want_ack and want_response',
    schema: TO_RADIO,
    wire: `
      0A 26                 # ToRadio.packet, 38 bytes
      15 D4 C3 B2 A1        # to: own node
      22 18                 # decoded, 24 bytes
        08 06               #   portnum: ADMIN_APP
        12 12               #   payload, 18 bytes: AdminMessage
          82 02 0F          #     set_owner = 32: tag 258 = 82 02, 15 bytes
            12 09 42 61 73 65 20 63 61 6D 70   # User.long_name = 2: "Base camp"
            1A 02 42 43                        # User.short_name = 3: "BC"
        18 01               #   want_response = 3
      35 2A 00 00 00        # id: 42
      50 01                 # want_ack = 10`,
    value: {
      packet: {
        to: NODE,
        decoded: { portnum: PORT_NUM.ADMIN_APP, payload: hex('82 02 0F 12 09 42 61 73 65 20 63 61 6D 70 1A 02 42 43'), want_response: true },
        id: 42,
        want_ack: true,
      },
    } satisfies ToRadio,
  },
  {
    name: 'AdminMessage set_owner',
    schema: ADMIN_MESSAGE,
    wire: `82 02 0F 12 09 42 61 73 65 20 63 61 6D 70 1A 02 42 43`,
    value: { set_owner: { long_name: 'Base camp', short_name: 'BC' } } satisfies AdminMessage,
  },
  {
    name: 'AdminMessage get_config_request DEVICE_CONFIG (0, still written)',
    schema: ADMIN_MESSAGE,
    wire: `28 00   # get_config_request = 5`,
    value: { get_config_request: CONFIG_TYPE.DEVICE_CONFIG } satisfies AdminMessage,
  },
  {
    name: 'AdminMessage begin_edit_settings and reboot_seconds',
    schema: ADMIN_MESSAGE,
    wire: `80 04 01   # begin_edit_settings = 64: tag 512 = 80 04`,
    value: { begin_edit_settings: true } satisfies AdminMessage,
  },
  {
    name: 'AdminMessage reboot_seconds 5',
    schema: ADMIN_MESSAGE,
    wire: `88 06 05   # reboot_seconds = 97: tag 776 = 88 06`,
    value: { reboot_seconds: 5 } satisfies AdminMessage,
  },
  {
    name: 'Position south of the equator (negative sfixed32)',
    schema: POSITION,
    wire: `
      0D 00 08 D0 EB        # latitude_i = 1 sfixed32: -338688000 = 0xEBD00800 (-33.8688 deg)
      15 48 B5 20 5A        # longitude_i = 2 sfixed32: 1512093000 = 0x5A20B548
      18 3A                 # altitude = 3: 58 m
      25 00 F1 53 65        # time = 4 fixed32: 1700000000
      B8 01 20              # precision_bits = 23: tag 184 = B8 01; 32`,
    value: { latitude_i: -338688000, longitude_i: 1512093000, altitude: 58, time: 1700000000, precision_bits: 32 } satisfies Position,
  },
  {
    name: 'Position at 0,0 keeps its optional coordinates',
    schema: POSITION,
    wire: `0D 00 00 00 00 15 00 00 00 00`,
    value: { latitude_i: 0, longitude_i: 0 } satisfies Position,
  },
  {
    name: 'Telemetry device metrics (optional 0 is written)',
    schema: TELEMETRY,
    wire: `
      0D 00 F1 53 65        # time = 1 fixed32
      12 14                 # device_metrics = 2, 20 bytes
        08 65               #   battery_level = 1: 101 (external power)
        15 00 00 88 40      #   voltage = 2 float: 4.25
        1D 00 00 00 00      #   channel_utilization = 3 float: 0 (optional: present)
        25 00 00 00 3F      #   air_util_tx = 4 float: 0.5
        28 90 1C            #   uptime_seconds = 5: 3600`,
    value: { time: 1700000000, device_metrics: { battery_level: 101, voltage: 4.25, channel_utilization: 0, air_util_tx: 0.5, uptime_seconds: 3600 } },
  },
  {
    name: 'User from NODEINFO_APP',
    schema: USER,
    wire: `
      0A 09 21 61 31 62 32 63 33 64 34   # id = 1: "!a1b2c3d4"
      12 04 4E 6F 64 65                  # long_name = 2: "Node"
      1A 02 4E 31                        # short_name = 3: "N1"
      28 2B                              # hw_model = 5: 43 HELTEC_V3
      38 02                              # role = 7: ROUTER`,
    value: { id: '!a1b2c3d4', long_name: 'Node', short_name: 'N1', hw_model: 43, role: 2 },
  },
];

for (const f of fixtures) {
  test(`parse: ${f.name}`, () => {
    const r = decodeMessage(f.schema, hex(f.wire));
    assert.ok(r.ok, r.ok ? '' : r.error);
    if (r.ok) {
      assert.equal(r.value, f.value);
      assert.equal(r.unknown, []);
    }
  });
  test(`generate: ${f.name}`, () => {
    assert.is(toHex(encodeMessage(f.schema, f.value)), toHex(hex(f.wire)));
  });
  test(`round trip: ${f.name}`, () => {
    assert.equal(decoded(f.schema, encodeMessage(f.schema, f.value)), f.value);
  });
}

test('frames: the docs vectors with their headers', () => {
  assert.is(toHex(encodeToRadioFrame({ want_config_id: 69420 })), '94 C3 00 04 18 AC 9E 04');
  assert.is(
    toHex(encodeToRadioFrame({ packet: { to: BROADCAST, decoded: { portnum: 1, payload: text('hi') }, id: 0x12345678, hop_limit: 3 } })),
    '94 C3 00 16 0A 14 15 FF FF FF FF 22 06 08 01 12 02 68 69 35 78 56 34 12 48 03',
  );
});

test('nested payloads decode with their own decoders', () => {
  const fr = decoded(FROM_RADIO, hex(fixtures.find((f) => f.name.startsWith('FromRadio packet: Routing'))!.wire));
  assert.is(fromRadioVariant(fr), 'packet');
  const routing = decodeRouting(fr.packet!.decoded!.payload!);
  assert.ok(routing.ok);
  if (routing.ok) assert.is(nameOf(ROUTING_ERROR, routing.value.error_reason!), 'RATE_LIMIT_EXCEEDED');
  const tr = decoded(TO_RADIO, hex(fixtures.find((f) => f.name.startsWith('ToRadio admin'))!.wire));
  const admin = decodeAdminMessage(tr.packet!.decoded!.payload!);
  assert.ok(admin.ok);
  if (admin.ok) {
    assert.is(adminVariant(admin.value), 'set_owner');
    assert.equal(admin.value.set_owner, { long_name: 'Base camp', short_name: 'BC' });
  }
});

test('LoRa config: unknown fields survive decode-change-encode, so set_config sends back the whole variant', () => {
  // The fixture's LoRa body plus a field 16 this schema does not know (tag 16<<3 = 80 01, value 5)
  // and a future fixed32 field 200 (tag 200<<3|5 = 1605 = C5 0C).
  const body = hex('08 01 38 03 40 03 48 01 50 1B 80 01 05 C5 0C 01 02 03 04');
  const r = decodeLoRaConfig(body);
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(r.unknown, ['LoRaConfig.16', 'LoRaConfig.200']);
  assert.is(toHex(r.value.$unknown!), '80 01 05 C5 0C 01 02 03 04');
  const changed = { ...r.value, hop_limit: 5, modem_preset: MODEM_PRESET.MEDIUM_FAST };
  const admin: AdminMessage = { set_config: { lora: changed } };
  const back = decodeAdminMessage(encodeAdminMessage(admin));
  assert.ok(back.ok);
  if (!back.ok) return;
  const lora = back.value.set_config!.lora!;
  assert.is(lora.hop_limit, 5);
  assert.is(lora.modem_preset, 4);
  assert.is(lora.region, REGION_CODE.EU_868);
  assert.is(toHex(lora.$unknown!), '80 01 05 C5 0C 01 02 03 04');
  assert.is(toHex(encodeLoRaConfig(lora)), '08 01 10 04 38 03 40 05 48 01 50 1B 80 01 05 C5 0C 01 02 03 04');
});

test('Config and ModuleConfig variants not modelled stay encoded bytes; newer ones stay in $unknown', () => {
  const device = decodeConfig(hex('0A 02 08 02')); // Config.device = 1 (DeviceConfig.role = ROUTER)
  assert.ok(device.ok);
  if (device.ok) {
    assert.is(configVariant(device.value), 'device');
    assert.is(toHex(device.value.device!), '08 02');
    assert.is(toHex(encodeConfig(device.value)), '0A 02 08 02');
  }
  const future = decodeConfig(hex('62 02 08 01')); // Config field 12, not in the schema
  assert.ok(future.ok);
  if (future.ok) {
    assert.is(configVariant(future.value), undefined);
    assert.equal(future.unknown, ['Config.12']);
    assert.is(toHex(encodeConfig(future.value)), '62 02 08 01');
  }
  const mqtt = decodeMessage(MODULE_CONFIG, hex('0A 02 08 01')); // ModuleConfig.mqtt = 1, enabled
  assert.ok(mqtt.ok);
  if (mqtt.ok) {
    assert.is(moduleConfigVariant(mqtt.value), 'mqtt');
    assert.is(fieldNo(MODULE_CONFIG, 'mqtt'), 1);
  }
  const telemetry = decodeMessage(MODULE_CONFIG, hex('32 05 08 B4 01 18 01')); // telemetry = 6: 180 s, environment on
  assert.ok(telemetry.ok);
  if (telemetry.ok) assert.equal(telemetry.value.telemetry, { device_update_interval: 180, environment_measurement_enabled: true });
});

test('oneof: decoding keeps the last member, encoding refuses two', () => {
  // FromRadio with config_complete_id then rebooted: the later one wins.
  const r = decodeFromRadio(hex('38 01 40 01'));
  assert.ok(r.ok);
  if (r.ok) assert.equal(r.value, { rebooted: true });
  assert.throws(() => encodeToRadio({ want_config_id: 1, disconnect: true }), /both set.*oneof payload_variant/);
  assert.throws(() => encodeMeshPacket({ decoded: {}, encrypted: new Uint8Array(1) }), /decoded and encrypted/);
});

test('encoders throw on values outside their proto type, naming the field', () => {
  assert.throws(() => encodeMeshPacket({ to: -1 }), /MeshPacket\.to/);
  assert.throws(() => encodeMeshPacket({ hop_limit: 1.5 }), /MeshPacket\.hop_limit/);
  assert.throws(() => encodeToRadio({ packet: { decoded: { dest: 2 ** 32 } } }), /Data\.dest/);
});

test('decoders: plain defaults on the wire are dropped, unpacked repeated numbers are accepted', () => {
  // hop_limit 0 written explicitly, want_ack false written explicitly: same as absent.
  const r = decodeMeshPacket(hex('48 00 50 00 35 01 00 00 00'));
  assert.ok(r.ok);
  if (r.ok) assert.equal(r.value, { id: 1 });
  const lora = decodeLoRaConfig(hex('B8 06 01 B8 06 AC 02')); // ignore_incoming = 103 unpacked, twice
  assert.ok(lora.ok);
  if (lora.ok) assert.equal(lora.value.ignore_incoming, [1, 300]);
});

test('decoders report bad input instead of throwing', () => {
  const cases: [string, Uint8Array][] = [
    ['cut varint', hex('18 AC 9E')],
    ['length past the end', hex('0A 14 15 FF')],
    ['field 0', hex('00 01')],
    ['wire type 7', hex('0F')],
    ['cut fixed32', hex('0D 01 02')],
    ['end group without start', hex('0C')],
  ];
  for (const [name, bytes] of cases) {
    const r = decodeToRadio(bytes);
    assert.is(r.ok, false, name);
    if (!r.ok) assert.match(r.error, /^ToRadio: /, name);
  }
  // A sub-message whose inner field runs past its own length is refused, though the outer
  // buffer would have enough bytes.
  const r = decodeMeshPacket(hex('22 02 12 05 01 02 03 04 05'));
  assert.is(r.ok, false);
});

test('a known field with the wrong wire type is kept as unknown', () => {
  const r = decodeMeshPacket(hex('10 05 35 01 00 00 00')); // MeshPacket.to = 2 sent as a varint
  assert.ok(r.ok);
  if (r.ok) {
    assert.equal(r.unknown, ['MeshPacket.2 (wire type 0)']);
    assert.is(r.value.to, undefined);
    assert.is(toHex(encodeMeshPacket(r.value)), '35 01 00 00 00 10 05');
  }
});

test('decoded bytes are copies: reusing the input buffer does not change them', () => {
  const input = hex('22 06 08 01 12 02 68 69');
  const r = decodeMeshPacket(input);
  input.fill(0);
  assert.ok(r.ok);
  if (r.ok) assert.is(toHex(r.value.decoded!.payload!), '68 69');
  const fromBuffer = decodeMeshPacket(Buffer.from('2206080112026869', 'hex'));
  assert.ok(fromBuffer.ok);
  if (fromBuffer.ok) assert.ok(Object.getPrototypeOf(fromBuffer.value.decoded!.payload) === Uint8Array.prototype);
});

test('float and rx_snr: negative SNR and UTF-8 names round trip', () => {
  const p = { rx_snr: -7.25, decoded: { portnum: 1, payload: text('größe 📡') } };
  const r = decodeMeshPacket(encodeMeshPacket(p));
  assert.ok(r.ok);
  if (r.ok) assert.equal(r.value, p);
  const u = { long_name: 'Küste 📡', short_name: '📡' };
  const ur = decodeUser(encodeMessage(USER, u));
  assert.ok(ur.ok);
  if (ur.ok) assert.equal(ur.value, u);
});

test('enum tables: names, numbers and port helpers', () => {
  assert.is(PORT_NUM.TEXT_MESSAGE_APP, 1);
  assert.is(PORT_NUM.TELEMETRY_APP, 67);
  assert.ok(isKnownPort(67));
  assert.not.ok(isKnownPort(500));
  assert.is(portName(4), 'NODEINFO_APP');
  assert.is(portName(500), 'UNKNOWN_500');
  assert.is(nameOf(REGION_CODE, 3), 'EU_868');
  assert.is(nameOf(MODEM_PRESET, 0), 'LONG_FAST');
  assert.is(valueOf(REGION_CODE, 'US'), 1);
  assert.is(valueOf(REGION_CODE, 'toString'), undefined);
  assert.is(Object.keys(ROUTING_ERROR).length, 18);
  assert.is(fieldNo(MESH_PACKET, 'decoded'), 4);
  assert.is(fieldNo(CONFIG, 'lora'), 6);
  assert.is(fieldNo(ADMIN_MESSAGE, 'set_config'), 34);
  assert.is(fieldNo(LORA_CONFIG, 'ignore_incoming'), 103);
  assert.is(fieldNo(ROUTING, 'error_reason'), 3);
});

test('position and telemetry convenience encoders match the generic ones', () => {
  const p: Position = { latitude_i: -1, longitude_i: 1 };
  assert.equal(encodePosition(p), encodeMessage(POSITION, p));
  assert.equal(decodePosition(encodePosition(p)), { ok: true, value: p, unknown: [] });
  const t = { device_metrics: { battery_level: 0 } };
  assert.equal(decodeTelemetry(encodeTelemetry(t)), { ok: true, value: t, unknown: [] });
  assert.equal(decodeRouting(encodeRouting({ route_reply: { route: [NODE], snr_towards: [-20, 12] } })), {
    ok: true, value: { route_reply: { route: [NODE], snr_towards: [-20, 12] } }, unknown: [],
  });
  assert.equal(decodeFromRadio(encodeFromRadio({ rebooted: false })), { ok: true, value: { rebooted: false }, unknown: [] });
});

test.run();
