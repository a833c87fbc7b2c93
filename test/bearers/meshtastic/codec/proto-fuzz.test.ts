import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rng } from '../../../helpers/rng.ts';
import {
  ADMIN_MESSAGE, CHANNEL, CONFIG, DATA, decodeMessage, DEVICE_METADATA, encodeAdminMessage, encodeFromRadio, encodeMessage,
  encodeToRadio, FROM_RADIO, LORA_CONFIG, MESH_PACKET, type MessageSchema, MODULE_CONFIG, MY_NODE_INFO, NODE_INFO, POSITION,
  QUEUE_STATUS, ROUTING, TELEMETRY, TO_RADIO, USER,
} from '../../../../src/bearers/meshtastic/codec/messages.ts';

// Seeded fuzz of every message decoder (docs/style.md habit 2): random bytes and mutations of
// valid messages must never throw; whatever decodes must encode again, and decoding that
// gives the same object (decoded objects are canonical).


const schemas: MessageSchema<any>[] = [
  TO_RADIO, FROM_RADIO, MESH_PACKET, DATA, ROUTING, POSITION, USER, NODE_INFO, MY_NODE_INFO, QUEUE_STATUS, DEVICE_METADATA,
  TELEMETRY, CHANNEL, CONFIG, LORA_CONFIG, MODULE_CONFIG, ADMIN_MESSAGE,
];

const seeds: Uint8Array[] = [
  encodeToRadio({ packet: { to: 0xffffffff, decoded: { portnum: 1, payload: new TextEncoder().encode('hi') }, id: 5, hop_limit: 3, want_ack: true } }),
  encodeFromRadio({ id: 3, packet: { from: 1, to: 2, rx_snr: -3.5, rx_rssi: -100, decoded: { portnum: 5, payload: Uint8Array.of(0x18, 0x26), request_id: 9 } } }),
  encodeFromRadio({ config: { lora: { use_preset: true, region: 3, hop_limit: 3, tx_enabled: true, tx_power: 27, ignore_incoming: [1, 2, 300] } } }),
  encodeFromRadio({ node_info: { num: 7, user: { id: '!00000007', long_name: 'n', hw_model: 43 }, position: { latitude_i: -5, longitude_i: 5 }, device_metrics: { voltage: 4.1 }, hops_away: 0 } }),
  encodeFromRadio({ channel: { index: 1, settings: { psk: Uint8Array.of(1), name: 'x', module_settings: { position_precision: 13 } }, role: 2 } }),
  encodeAdminMessage({ set_config: { lora: { region: 1, modem_preset: 4 } } }),
  encodeAdminMessage({ set_module_config: { telemetry: { device_update_interval: 900 } }, session_passkey: Uint8Array.of(1, 2, 3) }),
];

test('fuzz: every decoder takes 20,000 random and mutated inputs each without throwing, and re-encodes what it accepts', () => {
  const random = rng(0x9b0f);
  const byte = () => Math.floor(random() * 256);
  let accepted = 0;
  let refused = 0;
  for (const schema of schemas) {
    for (let i = 0; i < 20_000; i++) {
      let input: Uint8Array;
      if (i % 2 === 0) {
        input = Uint8Array.from({ length: Math.floor(random() * 48) }, byte);
      } else {
        const base = Array.from(seeds[Math.floor(random() * seeds.length)]);
        for (let m = 1 + Math.floor(random() * 3); m > 0; m--) {
          const at = Math.floor(random() * base.length);
          const op = random();
          if (op < 0.5) base[at] = byte();
          else if (op < 0.75) base.splice(at, 0, byte());
          else base.splice(at, 1);
        }
        input = Uint8Array.from(base);
      }
      let result;
      try {
        result = decodeMessage(schema, input);
      } catch (error) {
        assert.unreachable(`${schema.name} threw on ${Buffer.from(input).toString('hex')}: ${error}`);
        return;
      }
      if (!result.ok) {
        refused++;
        assert.ok(result.error.startsWith(`${schema.name}: `));
        continue;
      }
      accepted++;
      const again = decodeMessage(schema, encodeMessage(schema, result.value));
      if (!again.ok) assert.unreachable(`${schema.name}: re-encoded ${Buffer.from(input).toString('hex')} does not decode: ${again.error}`);
      else assert.equal(again.value, result.value, `${schema.name} ${Buffer.from(input).toString('hex')}`);
    }
  }
  assert.ok(accepted > 10_000 && refused > 10_000, `accepted ${accepted}, refused ${refused}`);
});

test('decoders take odd inputs: empty, a Buffer, a view into a larger buffer', () => {
  for (const schema of schemas) {
    assert.equal(decodeMessage(schema, new Uint8Array(0)), { ok: true, value: {}, unknown: [] });
  }
  const wire = encodeToRadio({ want_config_id: 69420 });
  const inside = new Uint8Array(wire.length + 6);
  inside.set(wire, 3);
  assert.equal(decodeMessage(TO_RADIO, inside.subarray(3, 3 + wire.length)), { ok: true, value: { want_config_id: 69420 }, unknown: [] });
  assert.equal(decodeMessage(TO_RADIO, Buffer.from(wire)), { ok: true, value: { want_config_id: 69420 }, unknown: [] });
});

test.run();
